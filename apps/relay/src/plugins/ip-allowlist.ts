/**
 * The account's IP allowlist (`allowed_ips`): every authenticated API request must come
 * from an address in it when it is not empty. Ingest URLs are outside the authenticated
 * scope and stay open. Parsing and matching use ipaddr.js, for IPv4, IPv6 and IPv4-mapped
 * IPv6 (`::ffff:10.1.2.3` matches `10.0.0.0/8`).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HookError, IP_NOT_ALLOWED } from '@hook/core';
import type { CanonicalCidr } from '../cidr.ts';
import type { TrustProxy } from '../config.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The address the allowlist judges (authenticated routes only): request.ip, or for the relay's own MCP calls the MCP request's. */
    callerAddress: string;
  }
}

export { canonicalCidr, type CanonicalCidr } from '../cidr.ts';

/** An account's `allowed_ips`, parsed: what a request's address is matched against. */
export type AllowList = ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;

export function parseAllowList(allowedIps: readonly CanonicalCidr[]): AllowList {
  return allowedIps.map((entry) => ipaddr.parseCIDR(entry));
}

/** Whether `address` (as request.ip gives it) falls in `list`; an IPv4-mapped address is matched as its IPv4 one too. */
export function allowListMatches(list: AllowList, address: string): boolean {
  if (isIP(address) === 0) return false;
  const parsed = ipaddr.parse(address);
  const forms = parsed.kind() === 'ipv4' ? [parsed, (parsed as ipaddr.IPv4).toIPv4MappedAddress()]
    : (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? [parsed, (parsed as ipaddr.IPv6).toIPv4Address()] : [parsed];
  return list.some((range) => forms.some((form) => form.kind() === range[0].kind() && form.match(range)));
}

/** Whether `address` falls in any of the canonical CIDRs (parsing them for this one answer). */
export function addressAllowed(allowedIps: readonly CanonicalCidr[], address: string): boolean {
  return allowListMatches(parseAllowList(allowedIps), address);
}

/**
 * Parsed allow-lists by their text, so a request costs a lookup and the matching, not a
 * parse of every entry: the caller's allowed_ips are read afresh with each request's key,
 * but an account's list changes rarely. At most `max` lists are kept (the least recently
 * used goes first).
 */
export class AllowListCache {
  readonly #lists: LRUCache<string, AllowList>;

  constructor(max = 1000) {
    this.#lists = new LRUCache({ max });
  }

  get(allowedIps: readonly CanonicalCidr[]): AllowList {
    const key = allowedIps.join(',');
    let list = this.#lists.get(key);
    if (list === undefined) {
      list = parseAllowList(allowedIps);
      this.#lists.set(key, list);
    }
    return list;
  }

  get size(): number {
    return this.#lists.size;
  }
}

/**
 * HOOK_TRUST_PROXY as Fastify's `trustProxy` (behind which request.ip is the real client).
 * A hop count becomes the function proxy-addr would make of it: Fastify's types leave numbers out.
 */
export function fastifyTrustProxy(setting: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting !== 'number') return setting;
  return (_address, hop) => hop < setting;
}

/** Header the relay's own MCP route sends on its loopback REST calls: `<process token> <MCP caller's address>`. */
const MCP_CALLER_HEADER = 'x-hook-mcp-caller';

/**
 * Where a request really comes from, for the allowlist. The relay's MCP route calls this
 * relay's REST API over loopback, so those calls would otherwise all come "from"
 * 127.0.0.1; they carry the MCP request's address instead, vouched for by a token only
 * this process knows (other processes and clients cannot forge it).
 */
export class CallerAddresses {
  readonly #token = randomBytes(24).toString('base64url');

  /** The address to judge `request` by. */
  of(request: FastifyRequest): string {
    const header = request.headers[MCP_CALLER_HEADER];
    if (typeof header === 'string') {
      const [token = '', address = ''] = header.split(' ');
      const expected = Buffer.from(this.#token);
      const given = Buffer.from(token);
      if (given.length === expected.length && timingSafeEqual(given, expected) && isIP(address) !== 0) return address;
    }
    return request.ip;
  }

  /** Headers for the loopback calls made on behalf of `request` (the MCP route's). */
  headersFor(request: FastifyRequest): Record<string, string> {
    return { [MCP_CALLER_HEADER]: `${this.#token} ${this.of(request)}` };
  }
}

/** Every route registered inside `app` after this call (and after requireApiKey) refuses addresses outside the account's allowed_ips. */
export function requireAllowedAddress(app: FastifyInstance, addresses: CallerAddresses): void {
  const lists = new AllowListCache();
  app.decorateRequest('callerAddress', '');
  app.addHook('onRequest', async (request) => {
    request.callerAddress = addresses.of(request);
    const { allowedIps } = request.caller;
    if (allowedIps.length > 0 && !allowListMatches(lists.get(allowedIps), request.callerAddress)) throw new HookError(IP_NOT_ALLOWED, [request.callerAddress]);
  });
}
