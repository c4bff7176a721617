/**
 * `hook account update` against a real relay: the allowlist, the custom domain and the
 * retention are stored and shown, plan limits and lockout protection fail with exit 1
 * and the relay's problem, and a command line with nothing to change exits 2. The custom
 * domain is verified by `hook account verify-domain` through a real DNS server on a local port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { api, createEndpoint, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let dns: TestDnsServer;
const user = new HookUser();
let key: string;

beforeAll(async () => {
  dns = await startDnsServer();
  relay = await startTestRelay({ dnsServers: [dns.address] });
  key = (await user.json(['signup', '--api-url', relay.baseUrl])).api_key;
});

afterAll(async () => {
  await relay?.close();
  await dns?.close();
  user.remove();
});

describe('hook account update', () => {
  it('on free: setting an allowlist is refused with plan_limit_reached (exit 1); clearing works', async () => {
    const refused = await user.run(['account', 'update', '--allowed-ip', '127.0.0.1', '--json']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: 'plan_limit_reached' });
    const text = await user.run(['account', 'update', '--allowed-ip', '127.0.0.1']);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain('The free plan does not include an IP allowlist');
    expect((await user.json(['account', 'update', '--clear-allowed-ips'])).account.allowed_ips).toEqual([]);
  });

  it('on pro: sets the allowlist (repeatable, canonical) and claims a custom domain, in use once verify-domain finds its DNS record', async () => {
    await user.json(['account', 'plan', 'pro']);
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const updated = await user.json(['account', 'update', '--allowed-ip', '127.0.0.1', '--allowed-ip', '::1', '--allowed-ip', '10.1.2.3/8', '--custom-domain', 'Hooks.Acme.Test']);
    expect(updated.account).toMatchObject({ allowed_ips: ['127.0.0.1/32', '::1/128', '10.0.0.0/8'], custom_domain: 'hooks.acme.test', custom_domain_status: 'pending' });
    const record = updated.account.custom_domain_verification;
    expect(record).toEqual({ type: 'TXT', name: '_hook-challenge.hooks.acme.test', value: expect.stringMatching(/^hook-domain-verification=[0-9a-f]{32}$/) });

    const text = await user.run(['account', 'get']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Allowed IPs:\s+127\.0\.0\.1\/32, ::1\/128, 10\.0\.0\.0\/8/);
    expect(text.stdout).toMatch(/Custom domain:\s+hooks\.acme\.test \(pending: not in use until verified\)/);
    expect(text.stdout).toContain('add this DNS record, then run `hook account verify-domain`');
    expect(text.stdout).toMatch(new RegExp(`Name:\\s+_hook-challenge\\.hooks\\.acme\\.test\\n\\s*Value:\\s+${record.value}`));
    // Pending: endpoint URLs keep the relay's host.
    expect((await user.json(['endpoints', 'get', endpoint.id])).url).toBe(endpoint.url);

    const missing = await user.run(['account', 'verify-domain', '--json']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: 'custom_domain_unverified', detail: expect.stringContaining(`does not hold '${record.value}' (found: no such name)`) });
    const missingText = await user.run(['account', 'verify-domain']);
    expect(missingText.code).toBe(1);
    expect(missingText.stderr).toContain('The TXT record _hook-challenge.hooks.acme.test does not hold');
    expect(missingText.stderr).toContain('then run `hook account verify-domain` again');

    dns.setTxt(record.name, [record.value]);
    const verified = await user.run(['account', 'verify-domain']);
    expect(verified.code).toBe(0);
    expect(verified.stderr).toContain('The custom domain hooks.acme.test is verified: endpoint URLs use it now.');
    expect(verified.stdout).toMatch(/Custom domain:\s+hooks\.acme\.test \(verified\)/);
    expect((await user.json(['account', 'verify-domain'])).account).toMatchObject({ custom_domain_status: 'verified', custom_domain_verification: null });
    const { port } = new URL(relay.baseUrl);
    expect((await user.json(['endpoints', 'get', endpoint.id])).url).toMatch(new RegExp(`^http://hooks\\.acme\\.test:${port}/v1/ingest/`));
  });

  it('refuses a list without the caller (allowlist_excludes_caller) and keeps the old one', async () => {
    const result = await user.run(['account', 'update', '--allowed-ip', '192.0.2.0/24', '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr)).toMatchObject({ code: 'allowlist_excludes_caller' });
    expect((await user.json(['account', 'get'])).account.allowed_ips).toEqual(['127.0.0.1/32', '::1/128', '10.0.0.0/8']);
  });

  it('retention is enterprise only; clearing flags undo each setting', async () => {
    const refused = await user.run(['account', 'update', '--retention-days', '30', '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: 'plan_limit_reached' });
    await user.json(['account', 'plan', 'enterprise']);
    const set = await user.json(['account', 'update', '--retention-days', '30']);
    expect(set.account.retention_days).toBe(30);
    expect(set.limits.retention_days).toBe(30);
    const text = await user.run(['account', 'get']);
    expect(text.stdout).toMatch(/Retention:\s+30 days/);

    const cleared = await user.json(['account', 'update', '--clear-allowed-ips', '--clear-custom-domain', '--clear-retention-days']);
    expect(cleared.account).toMatchObject({ allowed_ips: [], custom_domain: null, retention_days: null });
    expect(cleared.limits.retention_days).toBe(365);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key })).body.account.custom_domain).toBeNull();
  });

  it('nothing to change, a bad number or conflicting flags are usage errors (exit 2)', async () => {
    for (const args of [[], ['--retention-days', 'forever'], ['--retention-days', '0'], ['--custom-domain', 'a.test', '--clear-custom-domain']]) {
      const result = await user.run(['account', 'update', ...args, '--json']);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      expect(JSON.parse(result.stderr).code).toBe('usage_error');
    }
  });
});
