import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { api, createEndpoint, expectProblem, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
let behindProxy: TestRelay;

beforeAll(async () => {
  relay = await startTestRelay({}, { streamHeartbeatIntervalMs: 200 });
  behindProxy = await startTestRelay({ trustProxy: true }, { sharing: relay });
});
afterAll(async () => {
  await behindProxy?.close();
  await relay?.close();
});

/** Signs in with a key; returns the raw Set-Cookie header and the `hook_console=…` pair to send back. */
async function signIn(baseUrl: string, apiKey: string, headers: Record<string, string> = {}): Promise<{ setCookie: string; cookie: string }> {
  const response = await api(baseUrl, 'POST', '/console/session', { json: { api_key: apiKey }, headers });
  expect(response.status).toBe(204);
  const setCookie = response.headers.get('set-cookie') ?? '';
  return { setCookie, cookie: setCookie.split(';')[0]! };
}

const asConsole = (cookie: string) => ({ headers: { cookie, 'x-hook-console': '1' } });

describe('console session', () => {
  it('signs in with an API key: an HttpOnly, SameSite=Strict cookie holding a random token, stored hashed; GET says who; DELETE signs out', async () => {
    const account = await signUp(relay.baseUrl);
    const { setCookie, cookie } = await signIn(relay.baseUrl, account.key);
    expect(setCookie).toMatch(/^hook_console=[A-Za-z0-9_-]{43}; /);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/');
    expect(setCookie).not.toContain('Secure'); // plain http, no trusted proxy
    expect(setCookie).not.toContain(account.key);
    const token = cookie.split('=')[1]!;
    const rows = await sqlRows(relay, 'select token_hash, account_id, expires_at - created_at as lifetime from console_session where account_id = ?', [account.accountId]);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).not.toBe(token);
    expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);

    const who = await api(relay.baseUrl, 'GET', '/console/session', asConsole(cookie));
    expect(who.status).toBe(200);
    expect(who.body).toEqual({ account_id: account.accountId, member_id: expect.stringMatching(/^mem_/), role: 'admin', key_prefix: account.key.slice(0, who.body.key_prefix.length) });
    expect(who.body.key_prefix.length).toBeGreaterThan(3);

    const out = await api(relay.baseUrl, 'DELETE', '/console/session', asConsole(cookie));
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^hook_console=; .*Max-Age=0/);
    expect(await sqlRows(relay, 'select 1 from console_session where account_id = ?', [account.accountId])).toHaveLength(0);
    expectProblem(await api(relay.baseUrl, 'GET', '/console/session', asConsole(cookie)), 401, 'console_session_invalid');
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', asConsole(cookie)), 401, 'console_session_invalid');
  });

  it('refuses a bad key with invalid_api_key and sets no cookie; no cookie at all is console_session_invalid', async () => {
    for (const apiKey of ['hk_not-a-real-key-0000000000000000', 'nonsense']) {
      const response = await api(relay.baseUrl, 'POST', '/console/session', { json: { api_key: apiKey } });
      expectProblem(response, 401, 'invalid_api_key');
      expect(response.headers.get('set-cookie')).toBeNull();
    }
    expectProblem(await api(relay.baseUrl, 'GET', '/console/session'), 401, 'console_session_invalid');
  });

  it('sets Secure when the request came over https through a trusted proxy (x-forwarded-proto), and not from an untrusted one', async () => {
    const account = await signUp(relay.baseUrl);
    expect((await signIn(behindProxy.baseUrl, account.key, { 'x-forwarded-proto': 'https' })).setCookie).toMatch(/; Secure$|; Secure;/);
    expect((await signIn(relay.baseUrl, account.key, { 'x-forwarded-proto': 'https' })).setCookie).not.toContain('Secure');
  });

  it('authenticates /v1 routes with the cookie only beside X-Hook-Console: 1; Bearer keeps working and wins over the cookie', async () => {
    const alice = await signUp(relay.baseUrl);
    const bob = await signUp(relay.baseUrl);
    const { cookie } = await signIn(relay.baseUrl, alice.key);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { headers: { cookie } }), 401, 'console_header_required');
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { headers: { cookie, 'x-hook-console': 'yes' } }), 401, 'console_header_required');
    const account = await api(relay.baseUrl, 'GET', '/v1/account', asConsole(cookie));
    expect(account.status).toBe(200);
    expect(account.body.account.id).toBe(alice.accountId);
    const created = await api(relay.baseUrl, 'POST', '/v1/endpoints', { json: { name: 'from-console' }, ...asConsole(cookie) });
    expect(created.status).toBe(201);
    const both = await api(relay.baseUrl, 'GET', '/v1/account', { key: bob.key, ...asConsole(cookie) });
    expect(both.body.account.id).toBe(bob.accountId);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { key: 'hk_wrong', ...asConsole(cookie) }), 401, 'invalid_api_key');
  });

  it('ends the session at once when its key is revoked, or its member removed', async () => {
    const admin = await signUp(relay.baseUrl);
    const second = await api(relay.baseUrl, 'POST', '/v1/api-keys', { key: admin.key, json: { name: 'console' } });
    const { cookie } = await signIn(relay.baseUrl, second.body.api_key);
    expect((await api(relay.baseUrl, 'GET', '/v1/endpoints', asConsole(cookie))).status).toBe(200);
    expect((await api(relay.baseUrl, 'DELETE', `/v1/api-keys/${second.body.id}`, { key: admin.key })).status).toBe(204);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/endpoints', asConsole(cookie)), 401, 'console_session_invalid');
    expectProblem(await api(relay.baseUrl, 'GET', '/console/session', asConsole(cookie)), 401, 'console_session_invalid');

    const member = await api(relay.baseUrl, 'POST', '/v1/members', { key: admin.key, json: { email: 'console@example.com' } });
    const memberSession = await signIn(relay.baseUrl, member.body.api_key);
    expect((await api(relay.baseUrl, 'GET', '/console/session', asConsole(memberSession.cookie))).body.role).toBe('member');
    expect((await api(relay.baseUrl, 'DELETE', `/v1/members/${member.body.member.id}`, { key: admin.key })).status).toBe(204);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', asConsole(memberSession.cookie)), 401, 'console_session_invalid');
  });

  it('an expired session is refused; use slides the expiry, never past 7 days from sign-in', async () => {
    const account = await signUp(relay.baseUrl);
    const { cookie } = await signIn(relay.baseUrl, account.key);
    await sqlRows(relay, `update console_session set created_at = now() - interval '6 days 23 hours', last_used_at = now() - interval '2 hours' where account_id = ?`, [account.accountId]);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', asConsole(cookie))).status).toBe(200);
    const [slid] = await sqlRows(relay, `select extract(epoch from expires_at - (created_at + interval '7 days')) as past_cap, extract(epoch from now() - last_used_at) as since_use from console_session where account_id = ?`, [account.accountId]);
    expect(Number(slid.past_cap)).toBe(0); // capped at 7 days, not 12 hours from now
    expect(Number(slid.since_use)).toBeLessThan(60);
    await sqlRows(relay, `update console_session set expires_at = now() - interval '1 second' where account_id = ?`, [account.accountId]);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', asConsole(cookie)), 401, 'console_session_invalid');
  });
});

describe('console stream', () => {
  const wsUrl = () => `${relay.baseUrl.replace('http', 'ws')}/v1/stream`;

  /** Opens a stream with the given headers; resolves with its first message, or rejects with the refused status. */
  function openStream(headers: Record<string, string>): Promise<{ socket: WebSocket; hello: any }> {
    const socket = new WebSocket(wsUrl(), { headers });
    return new Promise((resolve, reject) => {
      socket.once('message', (data) => resolve({ socket, hello: JSON.parse(data.toString()) }));
      socket.on('unexpected-response', (_request, response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => { text += chunk.toString(); });
        response.on('end', () => reject(Object.assign(new Error(`refused ${response.statusCode}`), { status: response.statusCode, body: JSON.parse(text) })));
      });
      socket.on('error', reject);
    });
  }

  it('accepts the cookie when Origin is this relay, refuses a foreign Origin, and closes when the key is revoked', async () => {
    const admin = await signUp(relay.baseUrl);
    await createEndpoint(relay.baseUrl, admin.key);
    const second = await api(relay.baseUrl, 'POST', '/v1/api-keys', { key: admin.key, json: { name: 'stream' } });
    const { cookie } = await signIn(relay.baseUrl, second.body.api_key);

    await expect(openStream({ cookie, origin: 'https://evil.example' })).rejects.toMatchObject({ status: 403, body: { code: 'console_origin_refused' } });
    await expect(openStream({ cookie })).rejects.toMatchObject({ status: 403, body: { code: 'console_origin_refused' } });

    const { socket, hello } = await openStream({ cookie, origin: relay.baseUrl });
    expect(hello.type).toBe('hello');
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    expect((await api(relay.baseUrl, 'DELETE', `/v1/api-keys/${second.body.id}`, { key: admin.key })).status).toBe(204);
    expect(await closed).toBe(4001);
  });

  it('closes a console stream when its session is signed out', async () => {
    const account = await signUp(relay.baseUrl);
    const { cookie } = await signIn(relay.baseUrl, account.key);
    const { socket } = await openStream({ cookie, origin: relay.baseUrl });
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    expect((await api(relay.baseUrl, 'DELETE', '/console/session', asConsole(cookie))).status).toBe(204);
    expect(await closed).toBe(4001);
  });
});

describe('console session limits', () => {
  let limited: TestRelay;
  beforeAll(async () => {
    limited = await startTestRelay({ apiRateLimit: 4 });
  });
  afterAll(async () => limited?.close());

  it('counts cookie requests against the key\'s rate limit, together with its Bearer requests', async () => {
    const account = await signUp(limited.baseUrl);
    const { cookie } = await signIn(limited.baseUrl, account.key);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await api(limited.baseUrl, 'GET', '/v1/endpoints', { key: account.key })).status);
    statuses.push((await api(limited.baseUrl, 'GET', '/v1/endpoints', asConsole(cookie))).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    expectProblem(await api(limited.baseUrl, 'GET', '/v1/endpoints', asConsole(cookie)), 429, 'rate_limited');
  });
});

describe('sign-in from another site', () => {
  it('refuses a sign-in posted as a plain form (what another site can send without CORS), even with a valid key', async () => {
    const account = await signUp(relay.baseUrl);
    for (const [type, body] of [['text/plain', JSON.stringify({ api_key: account.key })], ['application/x-www-form-urlencoded', `api_key=${account.key}`]] as const) {
      const response = await fetch(`${relay.baseUrl}/console/session`, { method: 'POST', headers: { 'content-type': type, origin: 'https://evil.example' }, body });
      expect(response.status, type).toBeGreaterThanOrEqual(400);
      expect(response.headers.get('set-cookie'), type).toBeNull();
    }
  });
});
