/**
 * API rate limits: every authenticated route is limited per API key per minute, to the
 * plan's figure or HOOK_API_RATE_LIMIT; ingest URLs and /healthz are not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { api, createEndpoint, expectProblem, signUp, sqlRows, startTestRelay, type ApiResponse, type TestRelay } from '../../../test/support/relay.ts';

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
