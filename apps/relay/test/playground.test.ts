import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { removeExpiredPlaygrounds } from '@hook/db';
import { api, expectProblem, sendEvent, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
const open = new Set<WebSocket>();

beforeAll(async () => {
  relay = await startTestRelay();
});
afterEach(() => {
  for (const socket of open) socket.terminate();
  open.clear();
});
afterAll(async () => relay.close());

interface Session {
  token: string;
  account_id: string;
  endpoint: { id: string; url: string };
  expires_at: string | null;
  claimed: boolean;
}

async function startSession(): Promise<Session> {
  const response = await api(relay.baseUrl, 'POST', '/playground/session');
  expect(response.status).toBe(201);
  return response.body;
}

const withToken = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

/** A playground stream that collects messages; `next()` waits for the next one. */
function stream(token: string): Promise<{ next(timeoutMs?: number): Promise<any> }> {
  const socket = new WebSocket(`${relay.baseUrl.replace('http', 'ws')}/playground/stream?token=${token}`);
  open.add(socket);
  const messages: any[] = [];
  let wake: (() => void) | undefined;
  socket.on('message', (data) => {
    messages.push(JSON.parse(data.toString()));
    wake?.();
  });
  const next = (timeoutMs = 3000): Promise<any> => {
    if (messages.length > 0) return Promise.resolve(messages.shift());
    // The next message as it arrives; fails after timeoutMs (a guard, not a wait).
    return new Promise((resolve, reject) => {
      const guard = setTimeout(() => {
        wake = undefined;
        reject(new Error('no stream message in time'));
      }, timeoutMs);
      wake = () => {
        wake = undefined;
        clearTimeout(guard);
        resolve(messages.shift());
      };
    });
  };
  return new Promise((resolve, reject) => {
    socket.on('open', () => resolve({ next }));
    socket.on('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
    socket.on('error', reject);
  });
}

describe('the playground page', () => {
  it('is served as HTML with its script and stylesheet from the relay, under a strict CSP', async () => {
    const page = await fetch(`${relay.baseUrl}/playground`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<label for="event-type">');
    expect(html).toContain('src="/playground/playground.js"');
    const script = await fetch(`${relay.baseUrl}/playground/playground.js`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await script.text()).toContain('An event type cannot be empty');
    expect((await fetch(`${relay.baseUrl}/playground/playground.css`)).status).toBe(200);
  });
});

describe('playground sessions', () => {
  it('start a temporary account with an endpoint for 24 hours and a token, not an API key', async () => {
    const before = Date.now();
    const session = await startSession();
    expect(session.token).toMatch(/^pgt_[\w-]{43}$/);
    expect(session.endpoint.url).toMatch(new RegExp(`^${relay.baseUrl}/v1/ingest/\\S+$`));
    expect(session.claimed).toBe(false);
    const lifetime = Date.parse(session.expires_at!) - before;
    expect(lifetime).toBeGreaterThan(24 * 3600_000 - 5000);
    expect(lifetime).toBeLessThanOrEqual(24 * 3600_000 + 1000);
    expect(await sqlRows(relay, 'select count(*)::int as n from api_key where account_id = ?', [session.account_id])).toEqual([{ n: 0 }]);
    // The token is no API key: the REST API refuses it.
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { key: session.token }), 401, 'invalid_api_key');
    const again = await api(relay.baseUrl, 'GET', '/playground/session', withToken(session.token));
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ account_id: session.account_id, endpoint: session.endpoint, expires_at: session.expires_at, claimed: false });
  });

  it('refuse a missing or unknown token', async () => {
    expectProblem(await api(relay.baseUrl, 'GET', '/playground/events'), 401, 'playground_token_invalid');
    expectProblem(await api(relay.baseUrl, 'GET', '/playground/events', withToken('pgt_nope')), 401, 'playground_token_invalid');
    await expect(stream('pgt_nope')).rejects.toThrow('upgrade refused: 401');
  });
});

describe('test events', () => {
  it('are stored through the endpoint byte-exact and listed with headers and status', async () => {
    const session = await startSession();
    const payload = '{"id": 7,   "note": "spacing kept"}';
    const sent = await api(relay.baseUrl, 'POST', '/playground/events', { ...withToken(session.token), json: { type: 'order.created', payload } });
    expect(sent.status).toBe(200);
    expect(sent.body.id).toMatch(/^evt_/);
    const list = await api(relay.baseUrl, 'GET', '/playground/events', withToken(session.token));
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ id: sent.body.id, type: 'order.created', body: payload, body_encoding: 'utf8', status: 'pending', method: 'POST' });
    expect(list.body.data[0].headers['x-event-type']).toBe('order.created');
  });

  it('with an empty or blank type are refused: "An event type cannot be empty"', async () => {
    const session = await startSession();
    for (const type of ['', '   ']) {
      const problem = expectProblem(await api(relay.baseUrl, 'POST', '/playground/events', { ...withToken(session.token), json: { type, payload: '{}' } }), 400, 'event_type_empty');
      expect(problem.detail).toBe('An event type cannot be empty');
    }
    expect((await api(relay.baseUrl, 'GET', '/playground/events', withToken(session.token))).body.data).toEqual([]);
  });

  it('with a payload that is not JSON are refused', async () => {
    const session = await startSession();
    const problem = expectProblem(await api(relay.baseUrl, 'POST', '/playground/events', { ...withToken(session.token), json: { type: 'a', payload: '{"id": ' } }), 400, 'payload_not_json');
    expect(problem.detail).toMatch(/^The test event payload is not valid JSON: /);
  });
});

describe('the playground stream', () => {
  it('pushes events sent to the ingest URL with payload and headers, and only the session\'s own', async () => {
    const mine = await startSession();
    const other = await startSession();
    const live = await stream(mine.token);
    expect(await live.next()).toEqual({ type: 'hello', endpoint_id: mine.endpoint.id });
    await sendEvent(other.endpoint.url, '{"secret": "other"}');
    const id = await sendEvent(mine.endpoint.url, '{"hello": "world"}', { 'content-type': 'application/json', 'x-event-type': 'ping', 'x-custom': 'yes' });
    const message = await live.next();
    expect(message).toMatchObject({ type: 'event.received', event: { id, type: 'ping', body: '{"hello": "world"}', status: 'pending' } });
    expect(message.event.headers['x-custom']).toBe('yes');
    await expect(live.next(300)).rejects.toThrow('no stream message');
  });
});

describe('isolation', () => {
  it('a token never reads another account\'s events, real or playground', async () => {
    const mine = await startSession();
    const other = await startSession();
    const { key } = await signUp(relay.baseUrl);
    const endpoint = (await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'real' } })).body;
    await sendEvent(endpoint.url, '{"real": true}');
    await sendEvent(other.endpoint.url, '{"other": true}');
    const ownId = await sendEvent(mine.endpoint.url, '{"mine": true}');
    const list = await api(relay.baseUrl, 'GET', '/playground/events', withToken(mine.token));
    expect(list.body.data.map((event: { id: string }) => event.id)).toEqual([ownId]);
    // The real account's key sees nothing of the playground either.
    const real = await api(relay.baseUrl, 'GET', '/v1/events', { key });
    expect(real.body.data.map((event: { body?: string; endpoint_id: string }) => event.endpoint_id)).toEqual([endpoint.id]);
  });
});

describe('claiming', () => {
  it('makes the account real: an API key shown once, no expiry, the endpoint and events kept', async () => {
    const session = await startSession();
    const eventId = await sendEvent(session.endpoint.url, '{"before": "claim"}');
    const claimed = await api(relay.baseUrl, 'POST', '/playground/claim', withToken(session.token));
    expect(claimed.status).toBe(201);
    expect(claimed.body.account.id).toBe(session.account_id);
    const key = claimed.body.api_key as string;
    expect(key).toMatch(/^hk_/);
    const endpoints = await api(relay.baseUrl, 'GET', '/v1/endpoints', { key });
    expect(endpoints.body.data).toEqual([expect.objectContaining({ id: session.endpoint.id, url: session.endpoint.url })]);
    const events = await api(relay.baseUrl, 'GET', '/v1/events', { key });
    expect(events.body.data.map((event: { id: string }) => event.id)).toEqual([eventId]);
    const after = await api(relay.baseUrl, 'GET', '/playground/session', withToken(session.token));
    expect(after.body).toMatchObject({ expires_at: null, claimed: true });
    expectProblem(await api(relay.baseUrl, 'POST', '/playground/claim', withToken(session.token)), 409, 'playground_already_claimed');
    // Claimed accounts outlive any expiry pass.
    await removeExpiredPlaygrounds(relay.orm, new Date(Date.now() + 48 * 3600_000), 0);
    expect((await api(relay.baseUrl, 'GET', '/v1/events', { key })).body.data).toHaveLength(1);
  });
});

describe('expiry', () => {
  it('disables then removes expired temporary accounts with their endpoint, events and attempts; others stay', async () => {
    const expiring = await startSession();
    const staying = await startSession();
    await sendEvent(expiring.endpoint.url, '{"n": 1}');
    await sendEvent(staying.endpoint.url, '{"n": 2}');
    const expiredEventId = (await sqlRows(relay, 'select id from event where account_id = ?', [expiring.account_id]))[0].id;
    await sqlRows(relay, `insert into attempt (id, event_id, account_id, n, trigger, started_at, duration_ms) values ('att_test', ?, ?, 1, 'listen', now(), 1)`, [expiredEventId, expiring.account_id]);
    await sqlRows(relay, `update playground_session set expires_at = now() - interval '30 seconds' where account_id = ?`, [expiring.account_id]);

    // Expired: the token stops working at once.
    expectProblem(await api(relay.baseUrl, 'GET', '/playground/events', withToken(expiring.token)), 401, 'playground_token_invalid');
    expectProblem(await api(relay.baseUrl, 'POST', '/playground/claim', withToken(expiring.token)), 401, 'playground_token_invalid');
    // Within the grace period the endpoint is only disabled, so no in-flight ingest can store an event after removal.
    expect(await removeExpiredPlaygrounds(relay.orm)).toBe(0);
    expect(await sqlRows(relay, 'select status from endpoint where account_id = ?', [expiring.account_id])).toEqual([{ status: 'disabled' }]);
    expect(await removeExpiredPlaygrounds(relay.orm, new Date(Date.now() + 60_000))).toBe(1);

    for (const table of ['account where id', 'endpoint where account_id', 'event where account_id', 'attempt where account_id', 'playground_session where account_id']) {
      expect(await sqlRows(relay, `select count(*)::int as n from ${table} = ?`, [expiring.account_id]), table).toEqual([{ n: 0 }]);
    }
    expect(await sqlRows(relay, 'select count(*)::int as n from event where account_id = ?', [staying.account_id])).toEqual([{ n: 1 }]);
    expect((await api(relay.baseUrl, 'GET', '/playground/events', withToken(staying.token))).body.data).toHaveLength(1);
  });
});

describe('the per-address limit', () => {
  it('allows HOOK_PLAYGROUND_RATE_LIMIT sessions an hour from one address, then answers 429 rate_limited with Retry-After', async () => {
    const limited = await startTestRelay({ playgroundSessionsPerAddressPerHour: 3 });
    try {
      for (let i = 0; i < 3; i++) expect((await api(limited.baseUrl, 'POST', '/playground/session')).status).toBe(201);
      const response = await api(limited.baseUrl, 'POST', '/playground/session');
      expectProblem(response, 429, 'rate_limited');
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(3500);
      expect(response.headers.get('ratelimit-limit')).toBe('3');
      expect(Number(response.headers.get('ratelimit-reset'))).toBe(Number(response.headers.get('retry-after')));
      expect(await sqlRows(limited, 'select count(*)::int as n from playground_session')).toEqual([{ n: 3 }]);
    } finally {
      await limited.close();
    }
  });
});
