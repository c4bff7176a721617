import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalHostname } from '../src/routes/accounts/settings.ts';
import { onCustomDomain } from '../src/routes/endpoints/present.ts';
import { api, createEndpoint, expectProblem, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';
import { startDnsServer, type TestDnsServer } from '@hook/test/dns-server';

// X-Forwarded-For from 127.0.0.1 is believed, so a test can call "from" any address.
// Custom domains are verified against a real DNS server on a local port (HOOK_DNS_SERVERS).
let relay: TestRelay;
let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
  relay = await startTestRelay({ trustProxy: ['127.0.0.1'], dnsServers: [dns.address] });
});
afterAll(async () => {
  await relay.close();
  await dns.close();
});

const from = (address: string) => ({ 'x-forwarded-for': address });

async function accountOn(plan: 'free' | 'pro' | 'enterprise'): Promise<{ key: string; accountId: string }> {
  const account = await signUp(relay.baseUrl);
  if (plan !== 'free') expect((await api(relay.baseUrl, 'POST', '/v1/account/plan', { key: account.key, json: { plan } })).status).toBe(200);
  return account;
}

function patchAccount(key: string, json: unknown, address = '127.0.0.1') {
  return api(relay.baseUrl, 'PATCH', '/v1/account', { key, json, headers: from(address) });
}

/** A request with a Host header of our choosing (fetch will not send one), sent to the test relay's socket. */
function sendWithHost(path: string, host: string, body: string, { method = 'POST', key }: { method?: string; key?: string } = {}): Promise<{ status: number; body: any }> {
  const { port } = new URL(relay.baseUrl);
  const headers = { host, 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) };
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, path, method, headers }, (incoming) => {
      let text = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk) => (text += chunk));
      incoming.on('end', () => resolve({ status: incoming.statusCode!, body: text ? JSON.parse(text) : null }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function verifyDomain(key: string) {
  return api(relay.baseUrl, 'POST', '/v1/account/custom-domain/verify', { key });
}

const ingestId = (url: string) => url.split('/v1/ingest/')[1]!;

describe('GET /v1/account settings', () => {
  it('shows allowed_ips, custom_domain and retention_days, empty on a new account', async () => {
    const { key } = await signUp(relay.baseUrl);
    const me = await api(relay.baseUrl, 'GET', '/v1/account', { key });
    expect(me.body.account).toMatchObject({ allowed_ips: [], custom_domain: null, custom_domain_status: null, custom_domain_verification: null, retention_days: null });
  });
});

describe('PATCH /v1/account allowed_ips', () => {
  it('is refused on free (setting, not clearing)', async () => {
    const { key } = await accountOn('free');
    const problem = expectProblem(await patchAccount(key, { allowed_ips: ['10.0.0.0/8'] }), 403, 'plan_limit_reached');
    expect(problem.detail).toBe('The free plan does not include an IP allowlist (allowed_ips); the pro and enterprise plans include it.');
    const cleared = await patchAccount(key, { allowed_ips: [] });
    expect(cleared.status).toBe(200);
    expect(cleared.body.account.allowed_ips).toEqual([]);
  });

  it('stores canonical CIDRs and lets in only listed addresses; ingest stays open', async () => {
    const { key } = await accountOn('pro');
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const set = await patchAccount(key, { allowed_ips: ['10.1.2.3/8', '2001:DB8::1/32', '10.0.0.0/8', ' 198.51.100.7 '] }, '10.1.2.3');
    expect(set.status).toBe(200);
    expect(set.body.account.allowed_ips).toEqual(['10.0.0.0/8', '2001:db8::/32', '198.51.100.7/32']);
    const me = await api(relay.baseUrl, 'GET', '/v1/account', { key, headers: from('10.1.2.3') });
    expect(me.status).toBe(200);
    expect(me.body.account.allowed_ips).toEqual(['10.0.0.0/8', '2001:db8::/32', '198.51.100.7/32']);
    expect((await api(relay.baseUrl, 'GET', '/v1/endpoints', { key, headers: from('2001:db8:7::5') })).status).toBe(200);
    for (const path of ['/v1/account', '/v1/endpoints', `/v1/endpoints/${endpoint.id}`, '/v1/events', '/v1/api-keys', '/v1/stream']) {
      const refused = expectProblem(await api(relay.baseUrl, 'GET', path, { key, headers: from('192.0.2.1') }), 403, 'ip_not_allowed');
      expect(refused.detail).toBe("API requests from 192.0.2.1 are not allowed by this account's allowed_ips");
    }
    // No X-Forwarded-For: the peer itself, 127.0.0.1, is not listed either.
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { key }), 403, 'ip_not_allowed');
    // A wrong key is still a key problem first, whatever the address.
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { key: 'hk_nope', headers: from('192.0.2.1') }), 401, 'invalid_api_key');

    const ingest = await fetch(endpoint.url, { method: 'POST', headers: { ...from('192.0.2.1'), 'content-type': 'application/json' }, body: '{"ok":true}' });
    expect(ingest.status).toBe(200);
  });

  it('matches IPv4-mapped IPv6 addresses against IPv4 entries', async () => {
    const { key } = await accountOn('pro');
    expect((await patchAccount(key, { allowed_ips: ['127.0.0.1'] }, '::ffff:127.0.0.1')).status).toBe(200);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key, headers: from('::ffff:127.0.0.1') })).status).toBe(200);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key })).status).toBe(200);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { key, headers: from('::ffff:127.0.0.2') }), 403, 'ip_not_allowed');
  });

  it('refuses a list that would lock the caller out, and stores nothing', async () => {
    const { key, accountId } = await accountOn('pro');
    const problem = expectProblem(await patchAccount(key, { allowed_ips: ['10.0.0.0/8'] }, '192.0.2.1'), 409, 'allowlist_excludes_caller');
    expect(problem.detail).toContain('(192.0.2.1)');
    expect(await sqlRows(relay, 'select allowed_ips from account where id = ?', [accountId])).toEqual([{ allowed_ips: [] }]);
  });

  it('clears the list from an allowed address, letting every address in again', async () => {
    const { key } = await accountOn('pro');
    await patchAccount(key, { allowed_ips: ['10.0.0.0/8'] }, '10.9.9.9');
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { key, headers: from('192.0.2.1') }), 403, 'ip_not_allowed');
    expectProblem(await patchAccount(key, { allowed_ips: [] }, '192.0.2.1'), 403, 'ip_not_allowed');
    expect((await patchAccount(key, { allowed_ips: [] }, '10.9.9.9')).body.account.allowed_ips).toEqual([]);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key, headers: from('192.0.2.1') })).status).toBe(200);
  });

  it('names each entry that is not an address or CIDR', async () => {
    const { key } = await accountOn('pro');
    const problem = expectProblem(await patchAccount(key, { allowed_ips: ['10.0.0.0/8', '10.0.0.0/33', 'office', 'fe80::1%eth0', '1.2.3.4/'] }), 400, 'validation_failed');
    expect(problem.errors).toEqual([
      { field: 'body.allowed_ips.1', message: 'has a prefix length over 32, the most an IPv4 address has' },
      { field: 'body.allowed_ips.2', message: expect.stringContaining('must be an IP address or CIDR') },
      { field: 'body.allowed_ips.3', message: expect.stringContaining('must be an IP address or CIDR') },
      { field: 'body.allowed_ips.4', message: expect.stringContaining('must be an IP address or CIDR') },
    ]);
  });

  it('is for admins only', async () => {
    const { key, accountId } = await accountOn('pro');
    await sqlRows(relay, "update member set role = 'member' where account_id = ?", [accountId]);
    expectProblem(await patchAccount(key, { allowed_ips: ['127.0.0.1'] }), 403, 'admin_required');
  });

  it('judges MCP tool calls by the MCP caller\'s address, not the relay\'s loopback', async () => {
    const { key } = await accountOn('pro');
    await patchAccount(key, { allowed_ips: ['10.0.0.0/8'] }, '10.1.2.3');
    const call = (address: string) =>
      api(relay.baseUrl, 'POST', '/mcp', {
        key,
        headers: { ...from(address), accept: 'application/json, text/event-stream' },
        json: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_account', arguments: {} } },
      });
    const allowed = await call('10.1.2.3');
    expect(allowed.status).toBe(200);
    expect(allowed.body.result.isError).toBeFalsy();
    expect(allowed.body.result.structuredContent.account.allowed_ips).toEqual(['10.0.0.0/8']);
    expectProblem(await call('192.0.2.1'), 403, 'ip_not_allowed');
  });
});

describe('PATCH /v1/account custom_domain', () => {
  it('is refused on free', async () => {
    const { key } = await accountOn('free');
    const problem = expectProblem(await patchAccount(key, { custom_domain: 'hooks.free.test' }), 403, 'plan_limit_reached');
    expect(problem.detail).toContain('custom domain');
    expect((await patchAccount(key, { custom_domain: null })).status).toBe(200);
  });

  it('puts the domain in endpoint URLs, receives on it, and keeps it to the account', async () => {
    const { key } = await accountOn('pro');
    const other = await accountOn('pro');
    const { port } = new URL(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const otherEndpoint = await createEndpoint(relay.baseUrl, other.key);

    const set = await patchAccount(key, { custom_domain: ' Hooks.Acme.Test. ' });
    expect(set.status).toBe(200);
    expect(set.body.account.custom_domain).toBe('hooks.acme.test');
    expect(set.body.account.custom_domain_status).toBe('pending');
    dns.setTxt(set.body.account.custom_domain_verification.name, [set.body.account.custom_domain_verification.value]);
    expect((await verifyDomain(key)).body.account.custom_domain_status).toBe('verified');
    const customUrl = `http://hooks.acme.test:${port}/v1/ingest/${endpoint.url.split('/v1/ingest/')[1]}`;
    expect((await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key })).body.url).toBe(customUrl);
    expect((await api(relay.baseUrl, 'GET', '/v1/endpoints', { key })).body.data[0].url).toBe(customUrl);
    expect((await api(relay.baseUrl, 'GET', `/v1/endpoints/${otherEndpoint.id}`, { key: other.key })).body.url).toBe(otherEndpoint.url);

    const path = new URL(customUrl).pathname;
    const received = await sendWithHost(path, `hooks.acme.test:${port}`, '{"via":"custom domain"}');
    expect(received.status).toBe(200);
    const event = await api(relay.baseUrl, 'GET', `/v1/events/${received.body.id}`, { key });
    expect(event.body).toMatchObject({ endpoint_id: endpoint.id, body: '{"via":"custom domain"}' });

    // Another account's ingest id through this account's domain: as if it did not exist.
    const crossed = await sendWithHost(new URL(otherEndpoint.url).pathname, 'hooks.acme.test', '{}');
    expect(crossed.status).toBe(404);
    expect(crossed.body.code).toBe('ingest_not_found');
    // ...while its own URL keeps working.
    expect((await fetch(otherEndpoint.url, { method: 'POST', body: '{}' })).status).toBe(200);
    // A name a tenant controls receives events and nothing else: no API, console or sign-up page of the relay's on it.
    for (const [method, path, withKey] of [['GET', '/v1/account', true], ['POST', '/v1/api-keys', true], ['GET', '/console', false], ['POST', '/v1/accounts', false]] as const) {
      const refused = await sendWithHost(path, `hooks.acme.test:${port}`, method === 'GET' ? '' : '{}', { method, ...(withKey ? { key } : {}) });
      expect([path, refused.status, refused.body?.code]).toEqual([path, 421, 'ingest_host_only']);
    }
    expect((await sendWithHost('/healthz', 'hooks.acme.test', '', { method: 'GET' })).status).toBe(200);

    const taken = expectProblem(await api(relay.baseUrl, 'PATCH', '/v1/account', { key: other.key, json: { custom_domain: 'HOOKS.acme.test' } }), 409, 'custom_domain_taken');
    expect(taken.detail).toBe("The custom domain 'hooks.acme.test' is already verified by another account");

    // Cleared: the URLs go back to the relay's host and the domain is no account's any more.
    expect((await patchAccount(key, { custom_domain: null })).body.account).toMatchObject({ custom_domain: null, custom_domain_status: null, custom_domain_verification: null });
    expect((await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key })).body.url).toBe(endpoint.url);
    expect((await sendWithHost(new URL(otherEndpoint.url).pathname, 'hooks.acme.test', '{}')).status).toBe(200);
    // The other account's claim is a new one: its own token, pending until its own record is served.
    const reclaimed = await api(relay.baseUrl, 'PATCH', '/v1/account', { key: other.key, json: { custom_domain: 'hooks.acme.test' } });
    expect(reclaimed.status).toBe(200);
    expect(reclaimed.body.account.custom_domain_status).toBe('pending');
    expect(reclaimed.body.account.custom_domain_verification.value).not.toBe(set.body.account.custom_domain_verification.value);
    expectProblem(await verifyDomain(other.key), 422, 'custom_domain_unverified');
  });

  it('a pending claim takes no effect: endpoint URLs keep the relay\'s host and the host stays open to every account', async () => {
    const { key } = await accountOn('pro');
    const other = await accountOn('pro');
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const otherEndpoint = await createEndpoint(relay.baseUrl, other.key);
    const claimed = await patchAccount(key, { custom_domain: 'pending.acme.test' });
    expect(claimed.body.account).toMatchObject({
      custom_domain: 'pending.acme.test',
      custom_domain_status: 'pending',
      custom_domain_verification: { type: 'TXT', name: '_hook-challenge.pending.acme.test', value: expect.stringMatching(/^hook-domain-verification=[0-9a-f]{32}$/) },
    });
    // Setting the same domain again keeps the claim (and its token) as it is.
    expect((await patchAccount(key, { custom_domain: 'pending.acme.test' })).body.account.custom_domain_verification).toEqual(claimed.body.account.custom_domain_verification);
    expect((await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key })).body.url).toBe(endpoint.url);
    expect((await api(relay.baseUrl, 'GET', '/v1/endpoints', { key })).body.data[0].url).toBe(endpoint.url);
    // The name is nobody's yet, so it does not keep another account's ingest out.
    expect((await sendWithHost(new URL(otherEndpoint.url).pathname, 'pending.acme.test', '{}')).status).toBe(200);
    expect((await sendWithHost(new URL(endpoint.url).pathname, 'pending.acme.test', '{}')).status).toBe(200);
  });

  it('verify names the record it expected and what it found while the record is missing or wrong', async () => {
    const { key } = await accountOn('pro');
    expectProblem(await verifyDomain(key), 409, 'custom_domain_not_claimed');
    const { custom_domain_verification: record } = (await patchAccount(key, { custom_domain: 'wrong.acme.test' })).body.account;

    const missing = expectProblem(await verifyDomain(key), 422, 'custom_domain_unverified');
    expect(missing.detail).toBe(`The TXT record _hook-challenge.wrong.acme.test does not hold '${record.value}' (found: no such name); the custom domain 'wrong.acme.test' stays pending`);
    expect(missing.fix).toContain('Add a TXT record');
    expect(missing.errors).toEqual([{ field: 'dns._hook-challenge.wrong.acme.test', message: `expected a TXT record holding "${record.value}"; found no such name` }]);

    dns.setTxt(record.name, ['v=spf1 -all', 'hook-domain-verification=0123456789abcdef0123456789abcdef']);
    const wrong = expectProblem(await verifyDomain(key), 422, 'custom_domain_unverified');
    expect(wrong.detail).toContain('(found: "v=spf1 -all", "hook-domain-verification=0123456789abcdef0123456789abcdef")');
    dns.setTxt(record.name, []);
    expect(expectProblem(await verifyDomain(key), 422, 'custom_domain_unverified').detail).toContain('(found: no TXT record)');
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key })).body.account.custom_domain_status).toBe('pending');
    expect(dns.questions).toContain('_hook-challenge.wrong.acme.test 16');

    dns.setTxt(record.name, ['v=spf1 -all', record.value]);
    expect((await verifyDomain(key)).body.account.custom_domain_status).toBe('verified');
    // Verified stays verified (the record may go); verifying again is a no-op.
    dns.remove(record.name);
    expect((await verifyDomain(key)).body.account.custom_domain_status).toBe('verified');
  });

  it('lets several accounts claim a name while pending; only the one that proves it wins', async () => {
    const squatter = await accountOn('pro');
    const owner = await accountOn('pro');
    const squatterEndpoint = await createEndpoint(relay.baseUrl, squatter.key);
    const ownerEndpoint = await createEndpoint(relay.baseUrl, owner.key);
    const squatted = await patchAccount(squatter.key, { custom_domain: 'contested.acme.test' });
    expect(squatted.body.account.custom_domain_status).toBe('pending');
    const claimed = await patchAccount(owner.key, { custom_domain: 'contested.acme.test' });
    expect(claimed.status).toBe(200);
    expect(claimed.body.account.custom_domain_status).toBe('pending');

    // Only the owner's record is served: the squatter cannot verify.
    dns.setTxt(claimed.body.account.custom_domain_verification.name, [claimed.body.account.custom_domain_verification.value]);
    expectProblem(await verifyDomain(squatter.key), 422, 'custom_domain_unverified');
    expect((await verifyDomain(owner.key)).body.account.custom_domain_status).toBe('verified');
    const { port } = new URL(relay.baseUrl);
    expect((await api(relay.baseUrl, 'GET', `/v1/endpoints/${ownerEndpoint.id}`, { key: owner.key })).body.url)
      .toBe(`http://contested.acme.test:${port}/v1/ingest/${ingestId(ownerEndpoint.url)}`);
    expect((await sendWithHost(new URL(ownerEndpoint.url).pathname, 'contested.acme.test', '{}')).status).toBe(200);
    expect((await sendWithHost(new URL(squatterEndpoint.url).pathname, 'contested.acme.test', '{}')).status).toBe(404);

    // Even with its own record served too, a name another account verified is refused.
    dns.setTxt(claimed.body.account.custom_domain_verification.name, [claimed.body.account.custom_domain_verification.value, squatted.body.account.custom_domain_verification.value]);
    expect(expectProblem(await verifyDomain(squatter.key), 409, 'custom_domain_taken').detail).toBe("The custom domain 'contested.acme.test' is already verified by another account");
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key: squatter.key })).body.account.custom_domain_status).toBe('pending');
  });

  it("refuses the hosts the relay answers on, and no claim of the relay's host keeps other tenants' ingest out", async () => {
    const attacker = await accountOn('pro');
    const tenant = await accountOn('pro');
    const tenantEndpoint = await createEndpoint(relay.baseUrl, tenant.key);
    const { port } = new URL(relay.baseUrl);
    // No HOOK_PUBLIC_URL: the relay's host is the one the request came in on.
    const own = await sendWithHost('/v1/account', `relay.hook.test:${port}`, JSON.stringify({ custom_domain: 'Relay.Hook.Test' }), { method: 'PATCH', key: attacker.key });
    expect(own.status).toBe(400);
    expect(own.body.errors).toEqual([{ field: 'body.custom_domain', message: "is the relay's own host; use a domain of your own that points at the relay" }]);
    const loopback = expectProblem(await patchAccount(attacker.key, { custom_domain: 'api.localhost' }), 400, 'validation_failed');
    expect(loopback.errors).toEqual([{ field: 'body.custom_domain', message: 'is a loopback name (*.localhost); use a domain of your own that points at the relay' }]);

    // Claimed through another of the relay's names, it stays a claim: its DNS is not the attacker's to prove.
    expect((await patchAccount(attacker.key, { custom_domain: 'relay.hook.test' })).body.account.custom_domain_status).toBe('pending');
    expectProblem(await verifyDomain(attacker.key), 422, 'custom_domain_unverified');
    const received = await sendWithHost(new URL(tenantEndpoint.url).pathname, `relay.hook.test:${port}`, '{"tenant":true}');
    expect(received.status).toBe(200);
    expect((await api(relay.baseUrl, 'GET', `/v1/events/${received.body.id}`, { key: tenant.key })).body.endpoint_id).toBe(tenantEndpoint.id);
  });

  it('refuses the hosts of HOOK_PUBLIC_URL and HOOK_INGEST_URL, at the claim and again at verification', async () => {
    const { key, accountId } = await accountOn('pro');
    const configured = await startTestRelay({ publicUrl: 'https://relay.hook.test', ingestUrl: 'https://in.hook.test', dnsServers: [dns.address] }, { sharing: relay });
    try {
      for (const host of ['relay.hook.test', 'IN.hook.test.']) {
        const refused = expectProblem(await api(configured.baseUrl, 'PATCH', '/v1/account', { key, json: { custom_domain: host } }), 400, 'validation_failed');
        expect(refused.errors, host).toEqual([{ field: 'body.custom_domain', message: "is the relay's own host; use a domain of your own that points at the relay" }]);
      }
      // Claimed on a relay that did not know the name as its own, then proven: the relay that does refuses it still.
      const claimed = await patchAccount(key, { custom_domain: 'in.hook.test' });
      dns.setTxt(claimed.body.account.custom_domain_verification.name, [claimed.body.account.custom_domain_verification.value]);
      expectProblem(await api(configured.baseUrl, 'POST', '/v1/account/custom-domain/verify', { key }), 400, 'validation_failed');
      expect(await sqlRows(relay, 'select custom_domain_verified_at from account where id = ?', [accountId])).toEqual([{ custom_domain_verified_at: null }]);
    } finally {
      await configured.close();
    }
  });

  it('refuses what is not a bare hostname, with the reason', async () => {
    const { key } = await accountOn('pro');
    const cases: Record<string, string> = {
      'https://hooks.acme.test/path': 'must be a hostname only, without scheme, port or path (like hooks.acme.test)',
      'hooks.acme.test:8443': 'must be a hostname only, without scheme, port or path (like hooks.acme.test)',
      '203.0.113.9': 'must be a hostname, not an IP address',
      '[2001:db8::1]': 'must be a hostname, not an IP address',
      localhost: 'must be a full domain name such as hooks.example.com',
      'under_score.acme.test': expect.stringContaining('must be a hostname such as'),
      '-bad.acme.test': expect.stringContaining('must be a hostname such as'),
    } as Record<string, string>;
    for (const [value, message] of Object.entries(cases)) {
      const problem = expectProblem(await patchAccount(key, { custom_domain: value }), 400, 'validation_failed');
      expect(problem.errors, value).toEqual([{ field: 'body.custom_domain', message }]);
    }
  });

  it("refuses the relay's own public host and builds URLs on the public URL's scheme and port", () => {
    expect(canonicalHostname('Relay.Example.com', ['relay.example.com'])).toEqual({ error: "is the relay's own host; use a domain of your own that points at the relay" });
    expect(canonicalHostname('hooks.example.com.', ['relay.example.com', 'hooks.example.com'])).toEqual({ error: "is the relay's own host; use a domain of your own that points at the relay" });
    expect(canonicalHostname('bücher.example', ['relay.example.com'])).toEqual({ host: 'xn--bcher-kva.example' });
    expect(onCustomDomain('https://relay.example.com', 'hooks.acme.test')).toBe('https://hooks.acme.test');
    expect(onCustomDomain('http://127.0.0.1:3000', 'hooks.acme.test')).toBe('http://hooks.acme.test:3000');
    expect(onCustomDomain('https://example.com/relay', 'hooks.acme.test')).toBe('https://hooks.acme.test/relay');
  });
});

describe('PATCH /v1/account retention_days', () => {
  it('is enterprise only', async () => {
    for (const plan of ['free', 'pro'] as const) {
      const { key } = await accountOn(plan);
      const problem = expectProblem(await patchAccount(key, { retention_days: 30 }), 403, 'plan_limit_reached');
      expect(problem.detail).toBe(`The ${plan} plan does not include its own retention period (retention_days); only the enterprise plan includes it.`);
      expect((await patchAccount(key, { retention_days: null })).status).toBe(200);
    }
  });

  it('is stored and shown in the limits on enterprise; null goes back to the plan default', async () => {
    const { key, accountId } = await accountOn('enterprise');
    const set = await patchAccount(key, { retention_days: 30 });
    expect(set.status).toBe(200);
    expect(set.body.account.retention_days).toBe(30);
    expect(set.body.limits.retention_days).toBe(30);
    expect(await sqlRows(relay, 'select retention_days from account where id = ?', [accountId])).toEqual([{ retention_days: 30 }]);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key })).body.limits.retention_days).toBe(30);
    const reset = await patchAccount(key, { retention_days: null });
    expect(reset.body.account.retention_days).toBeNull();
    expect(reset.body.limits.retention_days).toBe(365);
    for (const days of [0, 3651, 1.5]) expectProblem(await patchAccount(key, { retention_days: days }), 400, 'validation_failed');
  });
});

describe('PATCH /v1/account email', () => {
  it('sets and clears the contact address; fields left out stay', async () => {
    const { key } = await accountOn('pro');
    await patchAccount(key, { allowed_ips: ['127.0.0.1'] });
    expect((await patchAccount(key, { email: 'ops@acme.test' })).body.account).toMatchObject({ email: 'ops@acme.test', allowed_ips: ['127.0.0.1/32'] });
    expect((await patchAccount(key, { email: null })).body.account.email).toBeNull();
    expectProblem(await patchAccount(key, { email: 'nope' }), 400, 'validation_failed');
    expectProblem(await patchAccount(key, { plan: 'enterprise' }), 400, 'validation_failed');
  });
});
