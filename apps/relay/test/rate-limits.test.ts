/**
 * API rate limits: every authenticated route is limited per API key per minute, to the
 * plan's figure or HOOK_API_RATE_LIMIT; ingest URLs and /healthz are not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { api, createEndpoint, expectProblem, signUp, sqlRows, startTestRelay, type ApiResponse, type TestRelay } from '@hook/test/relay';

/** Answers of `count` sequential requests with `key`. */
async function calls(relay: TestRelay, key: string, count: number, path = '/v1/endpoints'): Promise<ApiResponse[]> {
  const answers: ApiResponse[] = [];
  for (let i = 0; i < count; i++) answers.push(await api(relay.baseUrl, 'GET', path, { key }));
  return answers;
}

/** The HTTP status a WebSocket upgrade of /v1/stream is refused with (0 when it opens). */
function streamUpgradeStatus(relay: TestRelay, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${relay.baseUrl.replace('http', 'ws')}/v1/stream`, { headers: { authorization: `Bearer ${key}` } });
    socket.once('open', () => {
      socket.close();
      resolve(0);
    });
    socket.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? -1);
      response.resume();
      socket.terminate();
    });
    socket.once('error', (error) => reject(error));
  });
}

describe('with HOOK_API_RATE_LIMIT=5', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startTestRelay({ apiRateLimit: 5 });
  });
  afterAll(async () => relay.close());

  it('answers the 6th request of a key within a minute with 429 rate_limited, Retry-After and RateLimit-* headers', async () => {
    const { key } = await signUp(relay.baseUrl);
    const answers = await calls(relay, key, 5);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.map((answer) => answer.headers.get('ratelimit-remaining'))).toEqual(['4', '3', '2', '1', '0']);
    for (const answer of answers) {
      expect(answer.headers.get('ratelimit-limit')).toBe('5');
      expect(Number(answer.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
      expect(Number(answer.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
      expect(answer.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const refused = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'refused' } });
    const problem = expectProblem(refused, 429, 'rate_limited');
    expect(problem.detail).toMatch(/allows 5 requests per API key per minute/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit-limit')).toBe('5');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    // The refused request did nothing.
    expect((await api(relay.baseUrl, 'GET', '/v1/endpoints', { key })).status).toBe(429);
  });

  it('counts each key on its own, even within one account', async () => {
    const { key } = await signUp(relay.baseUrl);
    const second = (await api(relay.baseUrl, 'POST', '/v1/api-keys', { key, json: { name: 'second' } })).body.api_key as string;
    await calls(relay, key, 4); // with the POST above: 5 of the first key's
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { key }), 429, 'rate_limited');
    const other = await api(relay.baseUrl, 'GET', '/v1/account', { key: second });
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-remaining')).toBe('4');
    const stranger = await signUp(relay.baseUrl);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key: stranger.key })).headers.get('ratelimit-remaining')).toBe('4');
  });

  it('gives all the keys of an account three keys\' worth together: minting keys does not multiply the budget', async () => {
    const { key } = await signUp(relay.baseUrl);
    const keys = [key];
    for (let i = 0; i < 4; i++) keys.push((await api(relay.baseUrl, 'POST', '/v1/api-keys', { key, json: { name: `k${i}` } })).body.api_key as string);
    expect(keys.every(Boolean)).toBe(true);
    // 4 of the account's 15 went on minting; every key but the first has 5 of its own, 20 in all.
    const answers: ApiResponse[] = [];
    for (const minted of keys.slice(1)) answers.push(...await calls(relay, minted, 5));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(15 - 4);
    const refused = answers.find((answer) => answer.status === 429)!;
    const problem = expectProblem(refused, 429, 'rate_limited');
    expect(problem.detail).toMatch(/allows 15 requests per account per minute/);
    expect(refused.headers.get('ratelimit-limit')).toBe('15');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    // Another account's budget is its own.
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key: (await signUp(relay.baseUrl)).key })).status).toBe(200);
  });

  it('limits /mcp and /v1/stream upgrades too, but not ingest URLs, /healthz or requests without a valid key', async () => {
    const { key } = await signUp(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, key);
    expect(await streamUpgradeStatus(relay, key)).toBe(0);
    await calls(relay, key, 3);
    expect(await streamUpgradeStatus(relay, key)).toBe(429);
    const mcp = await api(relay.baseUrl, 'POST', '/mcp', {
      key,
      headers: { accept: 'application/json, text/event-stream' },
      json: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expectProblem(mcp, 429, 'rate_limited');

    for (let i = 0; i < 8; i++) {
      const ingest = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(ingest.status).toBe(200);
      expect(ingest.headers.get('ratelimit-limit')).toBeNull();
      await ingest.body?.cancel();
    }
    const health = await fetch(`${relay.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('ratelimit-limit')).toBeNull();
    await health.body?.cancel();
    const unknown = await api(relay.baseUrl, 'GET', '/v1/account', { key: `hk_${'A'.repeat(43)}` });
    expectProblem(unknown, 401, 'invalid_api_key');
    expect(unknown.headers.get('ratelimit-limit')).toBeNull();
  });
});

describe('with the default (each plan\'s figure)', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startTestRelay();
  });
  afterAll(async () => relay.close());

  it('gives a free key the free limit and a pro key the pro limit', async () => {
    const free = await signUp(relay.baseUrl);
    const pro = await signUp(relay.baseUrl);
    expect((await api(relay.baseUrl, 'POST', '/v1/account/plan', { key: pro.key, json: { plan: 'pro' } })).status).toBe(200);
    const freeAnswer = await api(relay.baseUrl, 'GET', '/v1/account', { key: free.key });
    const proAnswer = await api(relay.baseUrl, 'GET', '/v1/account', { key: pro.key });
    expect(freeAnswer.headers.get('ratelimit-limit')).toBe('1200');
    expect(freeAnswer.headers.get('ratelimit-remaining')).toBe('1199');
    expect(proAnswer.headers.get('ratelimit-limit')).toBe('12000');
    expect(proAnswer.headers.get('ratelimit-remaining')).toBe('11998'); // the plan change counted too
  });
});

describe('with HOOK_API_RATE_LIMIT=0', () => {
  it('limits nothing and sends no RateLimit headers', async () => {
    const relay = await startTestRelay({ apiRateLimit: 0 });
    try {
      const { key } = await signUp(relay.baseUrl);
      const answer = await api(relay.baseUrl, 'GET', '/v1/account', { key });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit-limit')).toBeNull();
    } finally {
      await relay.close();
    }
  });
});

describe('when the shared counters cannot be written', () => {
  it('lets requests through uncounted (fail open), and counts again once they can', async () => {
    const relay = await startTestRelay({ apiRateLimit: 2 });
    try {
      const { key } = await signUp(relay.baseUrl);
      // The counting statement now fails, as it would with the database overloaded or the table gone.
      await sqlRows(relay, 'alter table rate_limit_counter rename to rate_limit_counter_away');
      expect((await calls(relay, key, 4)).map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      await sqlRows(relay, 'alter table rate_limit_counter_away rename to rate_limit_counter');
      const answers = await calls(relay, key, 3);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
      expect(answers.map((answer) => answer.headers.get('ratelimit-remaining'))).toEqual(['1', '0', '0']);
    } finally {
      await relay.close();
    }
  });
});

describe('sign-ups per client network (HOOK_TRUST_PROXY set, so X-Forwarded-For names the client)', () => {
  const SIGNUPS = 3;
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startTestRelay({ trustProxy: true, signupsPerAddressPerHour: SIGNUPS, playgroundSessionsPerAddressPerHour: 10 });
  });
  afterAll(async () => relay.close());

  const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });
  const signUpFrom = async (address: string) => (await api(relay.baseUrl, 'POST', '/v1/accounts', from(address))).status;

  it('counts an IPv6 client by its /64, so new addresses in it get no new budget; an IPv4 client by its address', async () => {
    expect(await Promise.all(['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff:ffff:ffff:fffe'].map(signUpFrom))).toEqual([201, 201, 201]);
    const refused = await api(relay.baseUrl, 'POST', '/v1/accounts', from('2001:db8:1:2:abcd::9'));
    expect(expectProblem(refused, 429, 'rate_limited').detail).toMatch(/per client address per hour/);
    // The next /64 is another client; so is each IPv4 address, and an IPv4-mapped address is its IPv4 one.
    expect(await signUpFrom('2001:db8:1:3::1')).toBe(201);
    for (let i = 0; i < SIGNUPS; i++) expect(await signUpFrom(i === 0 ? '::ffff:198.51.100.7' : '198.51.100.7')).toBe(201);
    expect(await signUpFrom('198.51.100.7')).toBe(429);
    expect(await signUpFrom('198.51.100.8')).toBe(201);
  });

  it('counts playground claims against the same sign-up budget (one bucket), not beside it', async () => {
    const client = from('2001:db8:9:9::1');
    const claims: number[] = [];
    for (let i = 0; i < 2; i++) {
      const session = await api(relay.baseUrl, 'POST', '/playground/session', client);
      expect(session.status).toBe(201);
      claims.push((await api(relay.baseUrl, 'POST', '/playground/claim', { headers: { ...client.headers, authorization: `Bearer ${session.body.token}` } })).status);
    }
    expect(claims).toEqual([201, 201]);
    expect(await signUpFrom('2001:db8:9:9::2')).toBe(201);
    expect(await signUpFrom('2001:db8:9:9::3')).toBe(429);
    // And a claim past the budget is refused before it makes the account permanent.
    const session = await api(relay.baseUrl, 'POST', '/playground/session', client);
    const claim = await api(relay.baseUrl, 'POST', '/playground/claim', { headers: { ...client.headers, authorization: `Bearer ${session.body.token}` } });
    expectProblem(claim, 429, 'rate_limited');
    expect((await api(relay.baseUrl, 'GET', '/playground/session', { headers: { authorization: `Bearer ${session.body.token}` } })).body.claimed).toBe(false);
  });
});
