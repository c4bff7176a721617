import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyWebhook } from '@hook/client';
import { startReceiver, type Receiver } from '@hook/test/receiver';
import { workerCaughtUp } from '@hook/test/signals';
import { api, createEndpoint, createEndpointWithSecret, expectProblem, readJson, sendEvent, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

const FAST_SCHEDULE = [30, 30, 30, 30, 30, 30];

let relay: TestRelay;
let key: string;
let receiver: Receiver;

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: FAST_SCHEDULE, deliveryTimeoutMs: 1000 }, { workerPollMs: 20, workerStatisticsIntervalMs: 200 });
  // One account for the whole file, with more endpoints than free allows.
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
  receiver = await startReceiver();
});
afterAll(async () => {
  await relay.close();
  await receiver.close();
});

function urlEndpoint(url = receiver.url): Promise<{ id: string; url: string; secret: string }> {
  return createEndpointWithSecret(relay.baseUrl, key, { name: 'dest', destination: { type: 'url', url } });
}

const send = sendEvent;

async function eventOf(id: string): Promise<any> {
  return (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body;
}

/** The event once it reaches `status` (the worker runs in the background). */
function until(id: string, status: string, timeout = 10_000): Promise<any> {
  return vi.waitFor(async () => {
    const event = await eventOf(id);
    expect(event.status, JSON.stringify(event.attempts)).toBe(status);
    return event;
  }, { timeout, interval: 20 });
}

/** The event once it has at least one attempt recorded (on this file's relay unless told). */
function firstAttempt(id: string, on: { baseUrl: string; key: string } = { baseUrl: relay.baseUrl, key }): Promise<any> {
  return vi.waitFor(async () => {
    const event = (await api(on.baseUrl, 'GET', `/v1/events/${id}`, { key: on.key })).body;
    expect(event.attempts).not.toHaveLength(0);
    return event;
  }, { timeout: 5000, interval: 20 });
}

function only(receiver: Receiver, eventId: string) {
  return receiver.requests.filter((request) => request.headers['webhook-id'] === eventId);
}

describe('delivery', () => {
  it('POSTs the exact bytes, original headers and a Standard Webhooks signature, at once', async () => {
    const endpoint = await urlEndpoint();
    const body = '{ "type": "order.created",  "amount": 1.50 }';
    const sentAt = Date.now();
    const id = await send(endpoint.url, body, { 'content-type': 'application/json', 'x-custom': 'kept', 'stripe-signature': 't=1,v1=abc' });
    const event = await until(id, 'delivered');
    const [delivery] = only(receiver, id);
    expect(delivery!.receivedAtMs - sentAt).toBeLessThan(2000);
    expect(delivery!.method).toBe('POST');
    expect(delivery!.body.toString()).toBe(body);
    expect(delivery!.headers).toMatchObject({
      'content-type': 'application/json', 'x-custom': 'kept', 'stripe-signature': 't=1,v1=abc',
      'webhook-id': id, 'x-hook-event-id': id, 'x-hook-attempt': '1',
    });
    expect(delivery!.headers['x-hook-signature']).toBe(delivery!.headers['webhook-signature']);
    expect(delivery!.headers.host).toBe(new URL(receiver.url).host); // the destination's, not the relay's
    // Any Standard Webhooks library verifies it.
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(delivery!.headers['webhook-timestamp']), 'webhook-signature': String(delivery!.headers['webhook-signature']) };
    expect(new Webhook(endpoint.secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(event.attempts).toEqual([expect.objectContaining({ n: 1, trigger: 'auto', response_status: 200, response_body: 'answer 200', error: null })]);
    expect(event.attempt_count).toBe(1);
    expect(event.next_attempt_at).toBeNull();
  });

  it('signs the raw bytes of a binary body', async () => {
    const endpoint = await urlEndpoint();
    const body = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00]), randomBytes(2048)]);
    const id = await send(endpoint.url, body, { 'content-type': 'application/octet-stream' });
    await until(id, 'delivered');
    const [delivery] = only(receiver, id);
    expect(Buffer.compare(delivery!.body, body)).toBe(0);
    expect(verifyWebhook(delivery!.body, delivery!.headers as Record<string, string>, endpoint.secret).id).toBe(id);
  });

  it('retries a failure and delivers when the receiver recovers', async () => {
    const flaky = await startReceiver((_, index) => (index === 0 ? { status: 503, body: 'down for a moment' } : { status: 204 }));
    try {
      const endpoint = await urlEndpoint(flaky.url);
      const id = await send(endpoint.url, '{"n":1}');
      const event = await until(id, 'delivered');
      expect(event.attempts.map((attempt: any) => [attempt.n, attempt.response_status])).toEqual([[1, 503], [2, 204]]);
      expect(event.attempts[0].response_body).toBe('down for a moment');
      expect(flaky.requests.map((request) => request.headers['x-hook-attempt'])).toEqual(['1', '2']);
      expect(new Set(flaky.requests.map((request) => request.headers['webhook-id']))).toEqual(new Set([id]));
    } finally {
      await flaky.close();
    }
  });

  it('fails after the 6th automatic retry, with 7 attempts recorded', async () => {
    const broken = await startReceiver(() => ({ status: 500 }));
    try {
      const endpoint = await urlEndpoint(broken.url);
      const id = await send(endpoint.url, '{"n":2}');
      const event = await until(id, 'failed');
      expect(event.attempts).toHaveLength(7);
      expect(event.attempts.every((attempt: any) => attempt.trigger === 'auto' && attempt.response_status === 500)).toBe(true);
      expect(event.next_attempt_at).toBeNull();
      await workerCaughtUp(relay.worker); // it has claimed since the 7th was recorded, and tried nothing more
      expect(broken.requests).toHaveLength(7); // and no more
    } finally {
      await broken.close();
    }
  });

  it('counts a timeout and a refused connection as failures, with the reason recorded', async () => {
    const slow = await startReceiver(() => ({ status: 200, delayMs: 3000 }));
    try {
      const endpoint = await urlEndpoint(slow.url);
      const id = await send(endpoint.url, '{"n":3}');
      await slow.waitFor(1);
      const event = await firstAttempt(id);
      expect(event.attempts[0]).toMatchObject({ response_status: null, error: expect.stringMatching(/no answer within 1000 ms/) });
      expect(event.attempts[0].duration_ms).toBeGreaterThanOrEqual(900);
    } finally {
      await slow.close();
    }
    const closed = await startReceiver();
    const closedUrl = closed.url;
    await closed.close();
    const endpoint = await urlEndpoint(closedUrl);
    const id = await send(endpoint.url, '{"n":4}');
    const event = await firstAttempt(id);
    expect(event.attempts[0].error).toMatch(/ECONNREFUSED/);
    await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { status: 'paused' } });
  });

  it('stores any answer a receiver gives, NUL characters included', async () => {
    const odd = await startReceiver(() => ({ status: 200, body: 'ok\u0000done' }));
    try {
      const endpoint = await urlEndpoint(odd.url);
      const id = await send(endpoint.url, '{"type":"nul\\u0000type"}');
      const event = await until(id, 'delivered');
      expect(event.type).toBe('nultype');
      expect(event.attempts[0].response_body).toBe('ok\uFFFDdone');
    } finally {
      await odd.close();
    }
  });

  it('waits as long as Retry-After asks when that is longer than the schedule', async () => {
    const busy = await startReceiver((_, index) => (index === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
    try {
      const endpoint = await urlEndpoint(busy.url);
      const id = await send(endpoint.url, '{"n":6}');
      await until(id, 'delivered');
      const gapMs = busy.requests[1]!.receivedAtMs - busy.requests[0]!.receivedAtMs;
      expect(gapMs).toBeGreaterThanOrEqual(950);
      expect(gapMs).toBeLessThan(3000);
    } finally {
      await busy.close();
    }
  });

  it('disables the endpoint when the receiver answers 410 Gone', async () => {
    const gone = await startReceiver(() => ({ status: 410 }));
    try {
      const endpoint = await urlEndpoint(gone.url);
      const id = await send(endpoint.url, '{"n":5}');
      await gone.waitFor(1);
      await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key })).body.status, { timeout: 5000, interval: 20 }).toBe('disabled');
      expect((await fetch(endpoint.url, { method: 'POST', body: 'x' })).status).toBe(410);
      expect((await eventOf(id)).attempts[0].response_status).toBe(410);
    } finally {
      await gone.close();
    }
  });

  it('holds deliveries while paused and starts them oldest first on resume', async () => {
    const ordered = await startReceiver();
    try {
      const endpoint = await urlEndpoint(ordered.url);
      await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { status: 'paused' } });
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push(await send(endpoint.url, `{"i":${i}}`));
      await workerCaughtUp(relay.worker); // claimed since they were stored: none was taken
      expect(ordered.requests).toHaveLength(0);
      expect((await eventOf(ids[0]!)).status).toBe('pending');
      await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { status: 'active' } });
      await ordered.waitFor(5);
      expect(new Set(ordered.requests.map((request) => request.headers['webhook-id']))).toEqual(new Set(ids));
      // Attempts start oldest first. (Several are in flight at once, so the receiver may
      // see neighbours swap places; the order they were sent in is the order they arrived.)
      // The receiver answers before the attempt is recorded (recorded in batches), so wait for each record.
      const starts = [];
      for (const id of ids) {
        const event = await firstAttempt(id);
        starts.push(Date.parse(event.attempts[0].started_at));
      }
      expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    } finally {
      await ordered.close();
    }
  });

  it('delivers events that waited for a listener once the endpoint gets a URL destination', async () => {
    const later = await startReceiver();
    try {
      const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'cli first' });
      const id = await send(endpoint.url, '{"waited":true}');
      await workerCaughtUp(relay.worker); // the worker has claimed since: a delivery to a listener is not its to take
      expect((await eventOf(id)).status).toBe('pending');
      await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { destination: { type: 'url', url: later.url } } });
      await until(id, 'delivered');
      expect(later.requests[0]!.body.toString()).toBe('{"waited":true}');
    } finally {
      await later.close();
    }
  });

  it('keeps one slow destination from stalling the others', async () => {
    // Well apart, so a loaded machine cannot blur them: a stalled fast event would wait 2 s.
    const slow = await startReceiver(() => ({ status: 200, delayMs: 2000 }));
    try {
      const slowEndpoint = await urlEndpoint(slow.url);
      const fastEndpoint = await urlEndpoint();
      const slowIds = [];
      for (let i = 0; i < 60; i++) slowIds.push(send(slowEndpoint.url, `{"slow":${i}}`));
      await Promise.all(slowIds);
      await slow.waitFor(1);
      const started = Date.now();
      const id = await send(fastEndpoint.url, '{"fast":true}');
      await until(id, 'delivered', 5000);
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      await slow.close();
    }
  });
});

describe('queue statistics', () => {
  it('are refreshed by the worker once the table has rows, so the claim is planned as an index probe even where autovacuum is off', async () => {
    const endpoint = await urlEndpoint();
    await send(endpoint.url, '{"statistics":1}');
    const lastAnalyze = async (): Promise<Date | null> =>
      // the queue: delivery's partition of open deliveries (migration 021)
      (await sqlRows(relay, "select last_analyze from pg_stat_user_tables where relname = 'delivery_open'"))[0].last_analyze;
    await expect.poll(lastAnalyze, { timeout: 10_000, interval: 50 }).not.toBeNull();
  });
});

describe('replay', () => {
  it('replays one event now and answers with it; status follows the attempt', async () => {
    const switchable = await startReceiver(() => ({ status: 500 }));
    try {
      const endpoint = await urlEndpoint(switchable.url);
      const id = await send(endpoint.url, '{"replay":1}');
      await until(id, 'failed');
      switchable.respond = () => ({ status: 200 });
      const replayed = await api(relay.baseUrl, 'POST', `/v1/events/replay/${id}`, { key });
      expect(replayed.status).toBe(200);
      expect(replayed.body.status).toBe('delivered');
      expect(replayed.body.attempts).toHaveLength(8);
      expect(replayed.body.attempts[7]).toMatchObject({ n: 8, trigger: 'replay', response_status: 200 });
      // Replaying a delivered event delivers it again.
      const again = await api(relay.baseUrl, 'POST', `/v1/events/replay/${id}`, { key });
      expect(again.body.attempts).toHaveLength(9);
      expect(switchable.requests).toHaveLength(9);
    } finally {
      await switchable.close();
    }
  });

  it('answers 404 for unknown and foreign events, queues a `hook listen` destination\'s for the next listener, 409 when nothing is left to deliver to', async () => {
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/events/replay/evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', { key }), 404, 'event_not_found');
    const endpoint = await urlEndpoint();
    const id = await send(endpoint.url, '{}');
    const stranger = await signUp(relay.baseUrl);
    expectProblem(await api(relay.baseUrl, 'POST', `/v1/events/replay/${id}`, { key: stranger.key }), 404, 'event_not_found');
    const cli = await createEndpoint(relay.baseUrl, key, { name: 'cli' });
    const cliEvent = await send(cli.url, '{}');
    const queued = await api(relay.baseUrl, 'POST', `/v1/events/replay/${cliEvent}`, { key });
    expect(queued.status).toBe(200);
    expect(queued.body.replay).toEqual([{ destination_id: cli.destinations[0].id, outcome: 'waiting_for_listener' }]);
    expect(queued.body.deliveries).toEqual([expect.objectContaining({ destination_id: cli.destinations[0].id, status: 'pending', next_trigger: 'replay' })]);
    expectProblem(await api(relay.baseUrl, 'POST', `/v1/events/replay/${cliEvent}`, { key, json: { destination_id: 'dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY' } }), 404, 'destination_not_found');
    expect((await api(relay.baseUrl, 'DELETE', `/v1/endpoints/${cli.id}`, { key })).status).toBe(204);
    expectProblem(await api(relay.baseUrl, 'POST', `/v1/events/replay/${cliEvent}`, { key }), 409, 'replay_nowhere');
  });

  it('replays many by filter and says how many', async () => {
    const switchable = await startReceiver(() => ({ status: 500 }));
    try {
      const endpoint = await urlEndpoint(switchable.url);
      const ids = [];
      for (let i = 0; i < 4; i++) ids.push(await send(endpoint.url, `{"bulk":${i}}`));
      for (const id of ids) await until(id, 'failed');
      switchable.respond = () => ({ status: 200 });
      const response = await api(relay.baseUrl, 'POST', '/v1/events/replay', { key, json: { endpoint_id: endpoint.id, status: 'failed' } });
      expect(response.status).toBe(202);
      expect(response.body).toEqual({ replayed: 4, deliveries: 4, waiting_for_listener: 0, limit: 10_000, status: ['failed'] });
      for (const id of ids) {
        const event = await until(id, 'delivered');
        expect(event.attempts.at(-1)).toMatchObject({ trigger: 'replay', response_status: 200 });
      }
      const none = await api(relay.baseUrl, 'POST', '/v1/events/replay', { key, json: { endpoint_id: endpoint.id } });
      expect(none.body.replayed).toBe(0);
      expectProblem(await api(relay.baseUrl, 'POST', '/v1/events/replay', { key, json: { since: 'yesterday' } }), 400, 'validation_failed');
      expectProblem(await api(relay.baseUrl, 'POST', '/v1/events/replay', { key, json: { status: 'failed,failing' } }), 400, 'validation_failed');
      expectProblem(await api(relay.baseUrl, 'GET', '/v1/events?status=failed,', { key }), 400, 'validation_failed');
      const both = await api(relay.baseUrl, 'GET', `/v1/events?endpoint_id=${endpoint.id}&status=retrying,delivered`, { key });
      expect(both.body.data.map((event: any) => event.id).sort()).toEqual([...ids].sort());
    } finally {
      await switchable.close();
    }
  });
});

describe('private destinations', () => {
  it('are refused at creation and at delivery unless allowed', async () => {
    const strict = await startTestRelay({ allowPrivateDestinations: false, retryScheduleMs: FAST_SCHEDULE }, { workerPollMs: 20 });
    try {
      const { key: strictKey } = await signUp(strict.baseUrl);
      for (const url of ['http://127.0.0.1:9/x', 'http://localhost/x', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/x', 'http://10.0.0.8/x']) {
        const problem = expectProblem(await api(strict.baseUrl, 'POST', '/v1/endpoints', { key: strictKey, json: { name: 'x', destination: { type: 'url', url } } }), 422, 'destination_not_allowed');
        expect(problem.fix).toMatch(/HOOK_ALLOW_PRIVATE_DESTINATIONS/);
      }
      // A destination that became private after it was accepted is refused when delivering.
      const endpoint = await createEndpoint(strict.baseUrl, strictKey, { name: 'public', destination: { type: 'url', url: 'http://public.invalid/x' } });
      await sqlRows(strict, 'update destination set url = ? where endpoint_id = ?', [receiver.url, endpoint.id]);
      const id = (await readJson(await fetch(endpoint.url, { method: 'POST', body: 'x' }))).id;
      const { attempts } = await firstAttempt(id, { baseUrl: strict.baseUrl, key: strictKey });
      expect(attempts[0]).toMatchObject({ response_status: null, error: expect.stringMatching(/private, loopback or link-local/) });
      expect(only(receiver, id)).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });
});

describe('a worker whose slots are full', () => {
  it('claims the events stored meanwhile as its deliveries finish, without waiting for its poll', async () => {
    // One slot per destination (concurrency 2) and a poll too slow to matter: only the
    // worker's own backlog handling can deliver the events ingest could not hand it.
    const busy = await startTestRelay({ deliveryConcurrency: 2 }, { workerPollMs: 600_000 });
    const slow = await startReceiver(() => ({ status: 200, delayMs: 100 }));
    try {
      const { key: busyKey } = await signUp(busy.baseUrl);
      const endpoint = await createEndpointWithSecret(busy.baseUrl, busyKey, { name: 'busy', destination: { type: 'url', url: slow.url } });
      const ids = await Promise.all(Array.from({ length: 5 }, (_, n) => send(endpoint.url, JSON.stringify({ n }))));
      await slow.waitFor(5, 5_000);
      expect(new Set(slow.requests.map((request) => request.headers['webhook-id']))).toEqual(new Set(ids));
    } finally {
      await busy.close();
      await slow.close();
    }
  });
});
