/**
 * IP networks as the relay writes them: accounts' `allowed_ips` entries (ip-allowlist.ts)
 * and HOOK_TRUST_PROXY's proxies (config.ts) are read here, with ipaddr.js.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** `allowed_ips` entries: canonical CIDRs, IPv4 or IPv6. */
export type CanonicalCidr = string;

/** `address` with every bit past the first `prefix` cleared: the network it is in. */
function networkOf(address: ipaddr.IPv4 | ipaddr.IPv6, prefix: number): ipaddr.IPv4 | ipaddr.IPv6 {
  return address.kind() === 'ipv4'
    ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
    : ipaddr.IPv6.networkAddressFromCIDR(`${(address as ipaddr.IPv6).toNormalizedString()}/${prefix}`);
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

