import { describe, expect, it } from 'vitest';
import { addressAllowed, AllowListCache, canonicalCidr } from '../src/plugins/ip-allowlist.ts';
import { loadConfig } from '../src/config.ts';

describe('allowed_ips entries (canonicalCidr)', () => {
  it('canonicalises addresses and networks, IPv4 and IPv6', () => {
    const cases: Record<string, string> = {
      '203.0.113.7': '203.0.113.7/32',
      '10.1.2.3/8': '10.0.0.0/8',
      ' 0.0.0.0/0 ': '0.0.0.0/0',
      '2001:DB8::1': '2001:db8::1/128',
      '2001:db8:0:0:1:0:0:1/64': '2001:db8::/64',
      '2001:db8::/0': '::/0',
      '::ffff:10.1.2.3/104': '10.0.0.0/8',
      '::ffff:10.1.2.3': '10.1.2.3/32',
    };
    for (const [entry, cidr] of Object.entries(cases)) expect(canonicalCidr(entry), entry).toEqual({ cidr });
  });

  it('refuses what is not an address or CIDR, legacy IPv4 forms and zone ids included', () => {
    for (const entry of ['', 'example.com', '127.1', '10.0.0.0/', '10.0.0.0/8/8', '10.0.0.0/-1', '10.0.0.0/1e1', 'fe80::1%eth0', '1.2.3.4.5']) {
      expect(canonicalCidr(entry), entry).toEqual({ error: 'must be an IP address or CIDR such as 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32' });
    }
    expect(canonicalCidr('10.0.0.0/33')).toEqual({ error: 'has a prefix length over 32, the most an IPv4 address has' });
    expect(canonicalCidr('::/129')).toEqual({ error: 'has a prefix length over 128, the most an IPv6 address has' });
  });

  it('is what HOOK_TRUST_PROXY\'s addresses are checked with', () => {
    expect(loadConfig({ HOOK_TRUST_PROXY: '10.0.0.1/8, ::ffff:10.0.0.0/104' }).trustProxy).toEqual(['10.0.0.1/8', '::ffff:10.0.0.0/104']);
    // A link-local proxy may name its interface there (proxy-addr takes it), as node:net's isIP allows.
    expect(loadConfig({ HOOK_TRUST_PROXY: 'fe80::1%eth0, fe80::%1/64' }).trustProxy).toEqual(['fe80::1%eth0', 'fe80::%1/64']);
    for (const value of ['127.1', '10.0.0.0/33', '10.0.0.0/8,', '10.0.0.1%eth0', 'fe80::1%', 'fe80::1%a%b']) expect(() => loadConfig({ HOOK_TRUST_PROXY: value }), value).toThrow(/^HOOK_TRUST_PROXY=/);
  });
});

describe('matching an address (addressAllowed)', () => {
  it('matches IPv4, IPv6 and IPv4-mapped IPv6 addresses against the networks', () => {
    const list = ['10.0.0.0/8', '2001:db8::/32', '203.0.113.7/32'];
    const answers: Record<string, boolean> = {
      '10.255.0.1': true,
      '11.0.0.1': false,
      '::ffff:10.1.2.3': true,
      '::ffff:11.1.2.3': false,
      '2001:db8:ffff::1': true,
      '2001:db9::1': false,
      '203.0.113.7': true,
      '203.0.113.8': false,
      'not an address': false,
    };
    for (const [address, allowed] of Object.entries(answers)) expect(addressAllowed(list, address), address).toBe(allowed);
    expect(addressAllowed(['::ffff:0:0/96'], '192.0.2.1')).toBe(true); // an IPv4 peer matches an IPv4-mapped network too
    expect(addressAllowed([], '10.0.0.1')).toBe(false);
  });
});

describe('AllowListCache', () => {
  it('parses a list once per contents and keeps at most its bound', () => {
    const cache = new AllowListCache(2);
    const first = cache.get(['10.0.0.0/8']);
    expect(cache.get(['10.0.0.0/8'])).toBe(first); // a fresh array with the same entries: the same parsed list
    expect(cache.get(['10.0.0.0/8', '::/0'])).not.toBe(first);
    cache.get(['192.0.2.0/24']);
    expect(cache.size).toBe(2);
    expect(cache.get(['10.0.0.0/8'])).not.toBe(first); // the least recently used went first
  });
});
