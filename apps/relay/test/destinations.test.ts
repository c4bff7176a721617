/**
 * Destinations and the one delivery engine, against a real relay, real receivers and
 * real WebSocket listeners: fan-out with a secret per destination, per-destination
 * status and limits, the v1 endpoint fields as the first destination's, replay to a
 * listened destination, and destinations that come back getting their backlog now.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { verifyWebhook } from '@hook/client';
import { startReceiver, type Receiver } from '@hook/test/receiver';
import { api, createEndpoint, expectProblem, sendEvent, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';
import { workerCaughtUp } from '@hook/test/signals';

/** Long waits between retries: anything delivered within a test came due because something made it due. */
const SLOW_SCHEDULE = [3_600_000, 3_600_000, 3_600_000];

let relay: TestRelay;
let key: string;
const receivers: Receiver[] = [];
const sockets = new Set<WebSocket>();

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: SLOW_SCHEDULE, deliveryTimeoutMs: 1000 }, { workerPollMs: 20 });
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
});
afterEach(() => {
  for (const socket of sockets) socket.terminate();
  sockets.clear();
});
afterAll(async () => {
  await relay.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

async function receiver(status = 200): Promise<Receiver> {
  const started = await startReceiver(() => ({ status }));
  receivers.push(started);
  return started;
}

async function eventOf(id: string): Promise<any> {
  return (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body;
}

/** `read()`'s value once `accept` takes it. */
function until<T>(what: string, read: () => Promise<T>, accept: (value: T) => boolean, timeout = 8000): Promise<T> {
  return vi.waitFor(async () => {
    const value = await read();
    expect(accept(value), `${what}; last: ${JSON.stringify(value)}`).toBe(true);
    return value;
  }, { timeout, interval: 25 });
}

const arrivals = (at: Receiver, id: string) => at.requests.filter((request) => request.headers['webhook-id'] === id);

/** A `hook listen`-style WebSocket session that answers every delivery with `status`. */
function listen(endpointId: string, status: number): { deliveries: any[]; opened: Promise<void> } {
  const socket = new WebSocket(`${relay.baseUrl.replace('http', 'ws')}/v1/stream?mode=listen&endpoint_id=${endpointId}`, { headers: { authorization: `Bearer ${key}` } });
  sockets.add(socket);
  const deliveries: any[] = [];
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (message.type !== 'delivery') return;
    deliveries.push(message);
    socket.send(JSON.stringify({ type: 'result', version: 1, delivery_id: message.delivery_id, status, duration_ms: 1 }));
  });
  return { deliveries, opened: new Promise((resolve, reject) => { socket.once('open', () => resolve()); socket.once('error', reject); }) };
}

describe('destinations', () => {
  it('fans one event out to every destination, each signed with its own secret; the endpoint fields are the first destination\'s', async () => {
    const [a, b] = [await receiver(), await receiver()];
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'fan', destination: { type: 'url', url: a.url } });
    const added = await api(relay.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/destinations`, { key, json: { destination: { type: 'url', url: b.url }, max_in_flight: 4 } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ endpoint_id: endpoint.id, position: 1, destination: { type: 'url', url: b.url }, status: 'active', max_in_flight: 4, rate_per_second: null });
    const listed = (await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/destinations`, { key })).body.data;
    expect(listed.map((row: any) => row.id)).toEqual([endpoint.destinations[0].id, added.body.id]);
    const secretA = (await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/secret`, { key })).body.secret;
    expect((await api(relay.baseUrl, 'GET', `/v1/destinations/${endpoint.destinations[0].id}/secret`, { key })).body.secret).toBe(secretA);
    const secretB = (await api(relay.baseUrl, 'GET', `/v1/destinations/${added.body.id}/secret`, { key })).body.secret;
    expect(secretB).not.toBe(secretA);

    const id = await sendEvent(endpoint.url, '{"fan":1}');
    const event = await until('delivered to both', () => eventOf(id), (e) => e.status === 'delivered');
    expect(event.deliveries.map((delivery: any) => [delivery.destination_id, delivery.status])).toEqual([[endpoint.destinations[0].id, 'delivered'], [added.body.id, 'delivered']]);
    expect(event.attempts.map((attempt: any) => attempt.destination_id).sort()).toEqual([endpoint.destinations[0].id, added.body.id].sort());
    const [atA] = arrivals(a, id);
    const [atB] = arrivals(b, id);
    expect(verifyWebhook(atA!.body, atA!.headers as Record<string, string>, secretA).id).toBe(id);
    expect(verifyWebhook(atB!.body, atB!.headers as Record<string, string>, secretB).id).toBe(id);
    expect(() => verifyWebhook(atB!.body, atB!.headers as Record<string, string>, secretA)).toThrow();

    // The v1 fields still write the first destination.
    const c = await receiver();
    const patched = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { destination: { type: 'url', url: c.url }, filter: { body: { fan: 2 } } } });
    expect(patched.body.destinations[0]).toMatchObject({ destination: { type: 'url', url: c.url }, filter: { body: { fan: 2 } } });
    expect(patched.body.destinations[1].destination).toEqual({ type: 'url', url: b.url });
    const filtered = await sendEvent(endpoint.url, '{"fan":1}');
    const after = await until('summarised', () => eventOf(filtered), (e) => e.status === 'delivered');
    expect(after.deliveries.map((delivery: any) => delivery.status)).toEqual(['filtered', 'delivered']);
  });

  it('keeps a paused destination\'s deliveries until it is active again, refuses deleting the last one, and caps destinations at 10', async () => {
    const [a, b] = [await receiver(), await receiver()];
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'paused one', destination: { type: 'url', url: a.url } });
    const second = (await api(relay.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/destinations`, { key, json: { destination: { type: 'url', url: b.url } } })).body;
    expect((await api(relay.baseUrl, 'PATCH', `/v1/destinations/${second.id}`, { key, json: { status: 'paused' } })).body.status).toBe('paused');
    const id = await sendEvent(endpoint.url, '{"held":1}');
    await until('the active destination', async () => arrivals(a, id).length, (n) => n === 1);
    await workerCaughtUp(relay.worker); // it has claimed since: the paused destination's delivery was not taken
    expect(arrivals(b, id)).toHaveLength(0);
    expect((await eventOf(id)).status).toBe('pending');
    await api(relay.baseUrl, 'PATCH', `/v1/destinations/${second.id}`, { key, json: { status: 'active' } });
    await until('the resumed destination', async () => arrivals(b, id).length, (n) => n === 1);

    expect((await api(relay.baseUrl, 'DELETE', `/v1/destinations/${second.id}`, { key })).status).toBe(204);
    expectProblem(await api(relay.baseUrl, 'DELETE', `/v1/destinations/${endpoint.destinations[0].id}`, { key }), 409, 'last_destination');
    expectProblem(await api(relay.baseUrl, 'GET', `/v1/destinations/${second.id}`, { key }), 404, 'destination_not_found');
    for (let i = 1; i < 10; i++) expect((await api(relay.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/destinations`, { key, json: { destination: { type: 'cli' } } })).status).toBe(201);
    expectProblem(await api(relay.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/destinations`, { key, json: { destination: { type: 'cli' } } }), 409, 'destination_limit_reached');
  });

  it('a URL destination that answers 2xx after failures gets its other retrying deliveries now, not at their next retry', async () => {
    let status = 503;
    const flaky = await startReceiver(() => ({ status }));
    receivers.push(flaky);
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'comes back', destination: { type: 'url', url: flaky.url } });
    const failed = [await sendEvent(endpoint.url, '{"n":1}'), await sendEvent(endpoint.url, '{"n":2}')];
    for (const id of failed) await until(`${id} retrying`, () => eventOf(id), (e) => e.status === 'retrying');
    const destination = (await api(relay.baseUrl, 'GET', `/v1/destinations/${endpoint.destinations[0].id}`, { key })).body;
    expect(destination.health).toEqual({ consecutive_failures: 2, failing_since: expect.stringMatching(/Z$/) });
    status = 200;
    const fresh = await sendEvent(endpoint.url, '{"n":3}');
    await until('the new one delivered', () => eventOf(fresh), (e) => e.status === 'delivered');
    // Their next retry is an hour away: only the destination coming back makes them due.
    for (const id of failed) await until(`${id} delivered`, () => eventOf(id), (e) => e.status === 'delivered');
    expect((await api(relay.baseUrl, 'GET', `/v1/destinations/${endpoint.destinations[0].id}`, { key })).body.health).toEqual({ consecutive_failures: 0, failing_since: null });
  });

  it('a listener that connects gets its destination\'s retrying deliveries at once, and a replay reaches a listened destination', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'listened' });
    const failing = listen(endpoint.id, 500);
    await failing.opened;
    const id = await sendEvent(endpoint.url, '{"listen":1}');
    await until('retrying', () => eventOf(id), (e) => e.status === 'retrying');
    await Promise.all([...sockets].map((socket) => new Promise((closed) => {
      socket.once('close', closed);
      socket.terminate();
    })));

    // The developer fixed their handler and listens again: the event comes now, not in an hour.
    const fixed = listen(endpoint.id, 200);
    await fixed.opened;
    await until('delivered to the new listener', () => eventOf(id), (e) => e.status === 'delivered');
    expect(fixed.deliveries.map((delivery) => delivery.event.id)).toEqual([id]);

    // A replay with the listener connected goes to it at once.
    const replayed = await api(relay.baseUrl, 'POST', `/v1/events/replay/${id}`, { key });
    expect(replayed.body.replay).toEqual([{ destination_id: endpoint.destinations[0].id, outcome: 'sent_to_listener' }]);
    await until('the replay answered', () => eventOf(id), (e) => e.attempts.length === 3);
    expect((await eventOf(id)).attempts.at(-1)).toMatchObject({ trigger: 'replay', response_status: 200, destination_id: endpoint.destinations[0].id });

    // The bulk replay queues listened deliveries too, and says so.
    const bulk = await api(relay.baseUrl, 'POST', '/v1/events/replay', { key, json: { endpoint_id: endpoint.id, status: 'delivered' } });
    expect(bulk.body).toMatchObject({ replayed: 1, deliveries: 1, waiting_for_listener: 1 });
    await until('the bulk replay answered', () => eventOf(id), (e) => e.attempts.length === 4);
  });

  it('re-enabling a destination the relay disabled makes its waiting deliveries due at once', async () => {
    let status = 410;
    const gone = await startReceiver(() => ({ status }));
    receivers.push(gone);
    const other = await receiver();
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'gone one', destination: { type: 'url', url: gone.url } });
    await api(relay.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/destinations`, { key, json: { destination: { type: 'url', url: other.url } } });
    const id = await sendEvent(endpoint.url, '{"gone":1}');
    const disabled = await until('disabled', async () => (await api(relay.baseUrl, 'GET', `/v1/destinations/${endpoint.destinations[0].id}`, { key })).body, (d) => d.status === 'disabled');
    expect(disabled.disabled_reason).toBe('gone_410');
    // The other destination keeps the endpoint open.
    expect((await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key })).body.status).toBe('active');
    const later = await sendEvent(endpoint.url, '{"gone":2}');
    await until('the other destination', async () => arrivals(other, later).length, (n) => n === 1);
    expect(arrivals(gone, later)).toHaveLength(0);
    status = 200;
    await api(relay.baseUrl, 'PATCH', `/v1/destinations/${endpoint.destinations[0].id}`, { key, json: { status: 'active' } });
    for (const eventId of [id, later]) await until(`${eventId} delivered`, () => eventOf(eventId), (e) => e.status === 'delivered');
  });

  it('an endpoint the relay disabled with its only destination comes back, with that destination, when set active', async () => {
    let status = 410;
    const gone = await startReceiver(() => ({ status }));
    receivers.push(gone);
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'gone alone', destination: { type: 'url', url: gone.url } });
    const id = await sendEvent(endpoint.url, '{"alone":1}');
    await until('endpoint disabled', async () => (await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key })).body.status, (value) => value === 'disabled');
    expectProblem(await api(relay.baseUrl, 'POST', new URL(endpoint.url).pathname, { rawBody: 'x' }), 410, 'endpoint_disabled');
    status = 200;
    const resumed = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { status: 'active' } });
    expect(resumed.body.destinations[0]).toMatchObject({ status: 'active', disabled_reason: null, health: { consecutive_failures: 0, failing_since: null } });
    // Its retry was an hour away: the destination coming back makes it due now.
    await until('delivered', () => eventOf(id), (e) => e.status === 'delivered');
  });
});
