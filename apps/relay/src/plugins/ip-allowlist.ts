/**
 * The account's IP allowlist (`allowed_ips`): every authenticated API request must come
 * from an address in it when it is not empty. Ingest URLs are outside the authenticated
 * scope and stay open. Parsing and matching use ipaddr.js, for IPv4, IPv6 and IPv4-mapped
 * IPv6 (`::ffff:10.1.2.3` matches `10.0.0.0/8`).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
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

/** `address` with every bit past the first `prefix` cleared: the network it is in. */
function networkOf(address: ipaddr.IPv4 | ipaddr.IPv6, prefix: number): ipaddr.IPv4 | ipaddr.IPv6 {
  const bytes = address.toByteArray().map((byte, i) => byte & (0xff00 >> Math.min(8, Math.max(0, prefix - 8 * i))));
  return ipaddr.fromByteArray(bytes);
}

/**
 * An `allowed_ips` entry in canonical form: `10.1.2.3/8` → `10.0.0.0/8`, `2001:DB8::1` →
 * `2001:db8::1/128` (RFC 5952 text), an IPv4-mapped IPv6 network as its IPv4 one; or why
 * it is not one. node:net's isIP decides what an address is: ipaddr.js would also take
 * legacy IPv4 forms such as `127.1`, which are refused here.
 */
export function canonicalCidr(text: string): { cidr: CanonicalCidr } | { error: string } {
  const invalid = { error: 'must be an IP address or CIDR such as 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32' };
  const [address = '', prefixText, ...rest] = text.trim().split('/');
  if (rest.length > 0 || address.includes('%')) return invalid;
  const family = isIP(address);
  if (family === 0) return invalid;
  const width = family === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return invalid;
  const prefix = prefixText === undefined ? width : Number(prefixText);
  if (prefix > width) return { error: `has a prefix length over ${width}, the most an IPv${family} address has` };
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96) {
    return { cidr: `${networkOf((parsed as ipaddr.IPv6).toIPv4Address(), prefix - 96).toString()}/${prefix - 96}` };
  }
  const network = networkOf(parsed, prefix);
  return { cidr: `${network.kind() === 'ipv6' ? (network as ipaddr.IPv6).toRFC5952String() : network.toString()}/${prefix}` };
}

/** Whether `address` (as request.ip gives it) falls in any of the canonical CIDRs; an IPv4-mapped address is matched as its IPv4 one too. */
export function addressAllowed(allowedIps: readonly CanonicalCidr[], address: string): boolean {
  if (isIP(address) === 0) return false;
  const parsed = ipaddr.parse(address);
  const forms = parsed.kind() === 'ipv4' ? [parsed, (parsed as ipaddr.IPv4).toIPv4MappedAddress()]
    : (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? [parsed, (parsed as ipaddr.IPv6).toIPv4Address()] : [parsed];
  return allowedIps.some((entry) => {
    const range = ipaddr.parseCIDR(entry);
    return forms.some((form) => form.kind() === range[0].kind() && form.match(range));
  });
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
