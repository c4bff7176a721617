/**
 * The account's IP allowlist (`allowed_ips`): every authenticated API request must come
 * from an address in it when it is not empty. Ingest URLs are outside the authenticated
 * scope and stay open. Matching uses node:net's BlockList, which handles IPv4, IPv6 and
 * IPv4-mapped IPv6 (`::ffff:10.1.2.3` matches `10.0.0.0/8`).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HookError, IP_NOT_ALLOWED } from '@hook/core';
import type { TrustProxy } from '../config.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The address the allowlist judges (authenticated routes only): request.ip, or for the relay's own MCP calls the MCP request's. */
    callerAddress: string;
  }
}

/** `allowed_ips` entries: canonical CIDRs, IPv4 or IPv6. */
export type CanonicalCidr = string;

const MAPPED_V4_PREFIX = 0xffffn;

function ipv4ToBigInt(address: string): bigint {
  return address.split('.').reduce((value, octet) => (value << 8n) | BigInt(Number(octet)), 0n);
}

function bigIntToIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

function ipv6ToBigInt(address: string): bigint {
  let text = address;
  const embedded = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (embedded) {
    const v4 = ipv4ToBigInt(embedded);
    text = `${text.slice(0, -embedded.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

/** RFC 5952 text (lower case, longest zero run as `::`), as the WHATWG URL serialiser writes it. */
function bigIntToIpv6(value: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => ((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  return new URL(`http://[${groups.join(':')}]`).hostname.slice(1, -1);
}

function maskBits(value: bigint, width: number, prefix: number): bigint {
  const hostBits = BigInt(width - prefix);
  return (value >> hostBits) << hostBits;
}

/**
 * An `allowed_ips` entry in canonical form: `10.1.2.3/8` → `10.0.0.0/8`, `2001:DB8::1` →
 * `2001:db8::1/128`, an IPv4-mapped IPv6 network as its IPv4 one; or why it is not one.
 */
export function canonicalCidr(text: string): { cidr: CanonicalCidr } | { error: string } {
  const invalid = { error: 'must be an IP address or CIDR such as 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32' };
  const trimmed = text.trim();
  const [address = '', prefixText, ...rest] = trimmed.split('/');
  if (rest.length > 0 || address.includes('%')) return invalid;
  const family = isIP(address);
  if (family === 0) return invalid;
  const width = family === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return invalid;
  const prefix = prefixText === undefined ? width : Number(prefixText);
  if (prefix > width) return { error: `has a prefix length over ${width}, the most an IPv${family} address has` };
  if (family === 4) return { cidr: `${bigIntToIpv4(maskBits(ipv4ToBigInt(address), 32, prefix))}/${prefix}` };
  const value = ipv6ToBigInt(address);
  if (value >> 32n === MAPPED_V4_PREFIX && prefix >= 96) {
    return { cidr: `${bigIntToIpv4(maskBits(value & 0xffffffffn, 32, prefix - 96))}/${prefix - 96}` };
  }
  return { cidr: `${bigIntToIpv6(maskBits(value, 128, prefix))}/${prefix}` };
}

/** Whether `address` (as request.ip gives it) falls in any of the canonical CIDRs. */
export function addressAllowed(allowedIps: readonly CanonicalCidr[], address: string): boolean {
  const list = new BlockList();
  for (const entry of allowedIps) {
    const [network, prefix] = entry.split('/');
    const family = isIP(network!) === 4 ? 'ipv4' : 'ipv6';
    list.addSubnet(network!, Number(prefix), family);
  }
  const family = isIP(address);
  if (family === 0) return false;
  return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
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
  app.decorateRequest('callerAddress', '');
  app.addHook('onRequest', async (request) => {
    request.callerAddress = addresses.of(request);
    const { allowedIps } = request.caller;
    if (allowedIps.length > 0 && !addressAllowed(allowedIps, request.callerAddress)) throw new HookError(IP_NOT_ALLOWED, [request.callerAddress]);
  });
}
