/**
 * Transformations and filters on the delivery paths (issue 7): the worker, replays and
 * `hook listen`, against a real relay, real receivers and the real sandbox.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { verifyWebhook } from '@hook/client';
import type { DeliveryMessage, ServerMessage } from '@hook/core';
import { startReceiver, type Receiver } from '@hook/test/receiver';
import { api, createEndpointWithSecret, expectProblem, sendEvent, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';

const FAST_SCHEDULE = [30, 30, 30, 30, 30, 30];

let relay: TestRelay;
let key: string;
let receiver: Receiver;
const sockets = new Set<WebSocket>();

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: FAST_SCHEDULE, deliveryTimeoutMs: 1000 }, { workerPollMs: 20 });
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
  receiver = await startReceiver();
});
afterEach(() => {
  for (const socket of sockets) socket.terminate();
  sockets.clear();
});
afterAll(async () => {
  await relay.close();
  await receiver.close();
});

/** Renames x-shop to x-store, drops `secret` from the body and routes by type. */
const RESHAPE = `
addHandler('transform', (request, context) => {
  const { secret, ...rest } = request.body;
  request.headers['x-store'] = request.headers['x-shop'];
  delete request.headers['x-shop'];
  request.body = { ...rest, seen_type: context.type };
  request.path = '/orders';
  request.query = 'v=2';
  return request;
});`;

const THROWS = `addHandler('transform', (request) => {
  const total = request.body.items.length;
  return request;
});`;

async function endpointWith(body: Record<string, unknown>, apiKey = key, url = receiver.url): Promise<{ id: string; url: string; secret: string }> {
  return createEndpointWithSecret(relay.baseUrl, apiKey, { name: 'transformed', destination: { type: 'url', url }, ...body });
}

async function eventOf(id: string, apiKey = key): Promise<any> {
  return (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key: apiKey })).body;
}

/** The event once it reaches `status`. */
function until(id: string, status: string, apiKey = key, timeout = 10_000): Promise<any> {
  return vi.waitFor(async () => {
    const event = await eventOf(id, apiKey);
    expect(event.status, JSON.stringify(event.attempts)).toBe(status);
    return event;
  }, { timeout, interval: 20 });
}

function received(id: string, on: Receiver = receiver) {
  return on.requests.filter((request) => request.headers['webhook-id'] === id);
}

describe('transformations on delivery', () => {
  it('delivers the transformed request: renamed header, dropped field, path and query appended, signed over the bytes sent', async () => {
    const endpoint = await endpointWith({ transformation: { code: RESHAPE } });
    const id = await sendEvent(endpoint.url, '{"type":"order.created","id":7,"secret":"s3cr3t"}', { 'content-type': 'application/json', 'x-shop': 'acme' });
    await until(id, 'delivered');
    const [delivery] = received(id);
    expect(delivery!.url).toBe('/hooks/orders?v=2'); // appended to the destination's path (receiver.url ends in /hooks)
    expect(delivery!.headers['x-store']).toBe('acme');
    expect(delivery!.headers['x-shop']).toBeUndefined();
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(delivery!.body.toString())).toEqual({ type: 'order.created', id: 7, seen_type: 'order.created' });
    expect(verifyWebhook(delivery!.body, delivery!.headers as Record<string, string>, endpoint.secret).id).toBe(id);
  });

  it('stores the type the transformation set', async () => {
    const code = `addHandler('transform', (request, context) => { context.setType('invoice.' + request.body.kind); return request; });`;
    const endpoint = await endpointWith({ transformation: { code } });
    const id = await sendEvent(endpoint.url, '{"kind":"paid"}');
    const event = await until(id, 'delivered');
    expect(event.type).toBe('invoice.paid');
  });

  it('fails an event whose transformation throws at once, with the message and line; replay after a fix delivers', async () => {
    const endpoint = await endpointWith({ transformation: { code: THROWS } });
    const id = await sendEvent(endpoint.url, '{"n":1}');
    const failed = await until(id, 'failed');
    expect(failed.attempts).toHaveLength(1);
    expect(failed.attempts[0].error).toMatch(/^transformation_failed: .*TypeError.* \(line 2\)$/);
    expect(failed.next_attempt_at).toBeNull();
    expect(received(id)).toHaveLength(0);

    const fixed = `addHandler('transform', (request) => {\n  request.body.total = (request.body.items ?? []).length;\n  return request;\n});`;
    const patched = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { transformation: { code: fixed } } });
    expect(patched.status).toBe(200);
    const replayed = await api(relay.baseUrl, 'POST', `/v1/events/replay/${id}`, { key, json: {} });
    expect(replayed.body.status).toBe('delivered');
    expect(JSON.parse(received(id)[0]!.body.toString())).toEqual({ n: 1, total: 0 });
  });

  it('a transformation that never ends fails its own events while another account keeps delivering', async () => {
    const hostile = await endpointWith({ transformation: { code: `addHandler('transform', (request) => { for (;;) {} });` } });
    const other = await signUp(relay.baseUrl, { plan: 'pro' });
    const healthy = await endpointWith({}, other.key);
    const hostileIds = await Promise.all([1, 2, 3].map((n) => sendEvent(hostile.url, `{"n":${n}}`)));
    const startedAt = Date.now();
    const healthyIds = await Promise.all([1, 2, 3, 4, 5].map((n) => sendEvent(healthy.url, `{"n":${n}}`)));
    for (const id of healthyIds) await until(id, 'delivered', other.key);
    expect(Date.now() - startedAt).toBeLessThan(3000);
    for (const id of hostileIds) {
      const event = await until(id, 'failed');
      expect(event.attempts[0].error).toMatch(/^transformation_failed: /);
    }
  });
});

describe('filters on delivery', () => {
  it('delivers a match; a miss is filtered, never sent, listed by status, and replay forces it', async () => {
    const endpoint = await endpointWith({ filter: { body: { type: { $startsWith: 'order.' } }, headers: { 'x-env': 'prod' } } });
    const hit = await sendEvent(endpoint.url, '{"type":"order.paid"}', { 'content-type': 'application/json', 'x-env': 'prod' });
    const miss = await sendEvent(endpoint.url, '{"type":"customer.created"}', { 'content-type': 'application/json', 'x-env': 'prod' });
    await until(hit, 'delivered');
    const filtered = await until(miss, 'filtered');
    expect(filtered.attempts).toEqual([]);
    expect(filtered.next_attempt_at).toBeNull();
    expect(received(miss)).toHaveLength(0);

    const list = await api(relay.baseUrl, 'GET', `/v1/events?status=filtered&endpoint_id=${endpoint.id}`, { key });
    expect(list.body.data.map((event: any) => event.id)).toEqual([miss]);

    const replayed = await api(relay.baseUrl, 'POST', `/v1/events/replay/${miss}`, { key, json: {} });
    expect(replayed.body.status).toBe('delivered');
    expect(received(miss)).toHaveLength(1);
  });

  it('applies the filter to the transformed request', async () => {
    const code = `addHandler('transform', (request) => { request.body.priority = request.body.amount > 100 ? 'high' : 'low'; return request; });`;
    const endpoint = await endpointWith({ transformation: { code }, filter: { body: { priority: 'high' } } });
    const big = await sendEvent(endpoint.url, '{"amount":500}');
    const small = await sendEvent(endpoint.url, '{"amount":5}');
    await until(big, 'delivered');
    await until(small, 'filtered');
  });
});

describe('endpoint transformation and filter settings', () => {
  it('shows, validates and clears them', async () => {
    const endpoint = await endpointWith({ transformation: { code: RESHAPE }, filter: { path: { $startsWith: '/a' } } });
    const shown = await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key });
    expect(shown.body).toMatchObject({ transformation: { code: RESHAPE }, filter: { path: { $startsWith: '/a' } } });

    const badCode = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { transformation: { code: 'addHandler("transform", (r) => {\n  return r;;\n  }}' } } });
    const problem = expectProblem(badCode, 400, 'validation_failed');
    expect(problem.errors).toEqual([{ field: 'body.transformation.code', message: expect.stringMatching(/^line \d+: /) }]);

    const badFilter = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { filter: { body: { amount: { $gt: [1] }, a: { $regex: 'x' } } } } });
    expect(expectProblem(badFilter, 400, 'validation_failed').errors.map((error: any) => error.field)).toEqual(['body.filter.body.amount.$gt', 'body.filter.body.a.$regex']);

    const cleared = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { transformation: null, filter: null } });
    expect(cleared.body).toMatchObject({ transformation: null, filter: null });
  });
});

describe('hook listen deliveries', () => {
  function connect(query: string): Promise<{ next: () => Promise<DeliveryMessage>; answer: (delivery: DeliveryMessage, status: number) => void }> {
    const socket = new WebSocket(`${relay.baseUrl.replace('http', 'ws')}/v1/stream?${query}`, { headers: { authorization: `Bearer ${key}` } });
    sockets.add(socket);
    const deliveries: DeliveryMessage[] = [];
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as ServerMessage;
      if (message.type === 'delivery') deliveries.push(message);
    });
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.once('open', () => resolve({
        async next() {
          await vi.waitFor(() => expect(deliveries, 'a delivery').not.toHaveLength(0), { timeout: 5000, interval: 20 });
          return deliveries.shift()!;
        },
        answer(delivery, status) {
          socket.send(JSON.stringify({ type: 'result', version: 1, delivery_id: delivery.delivery_id, status, duration_ms: 2, error: null, response_body: 'ok' }));
        },
      }));
    });
  }

  it('offers the transformed request, signed over its bytes, and applies the filter', async () => {
    const endpoint = await createEndpointWithSecret(relay.baseUrl, key, { name: 'listen-transformed', transformation: { code: RESHAPE }, filter: { body: { id: { $gte: 10 } } } });
    const miss = await sendEvent(endpoint.url, '{"type":"order.created","id":1,"secret":"x"}', { 'content-type': 'application/json', 'x-shop': 'acme' });
    const hit = await sendEvent(endpoint.url, '{"type":"order.created","id":12,"secret":"x"}', { 'content-type': 'application/json', 'x-shop': 'acme' });
    const listener = await connect(`mode=listen&endpoint_id=${endpoint.id}`);
    const delivery = await listener.next();
    expect(delivery.event.id).toBe(hit);
    expect(delivery.event).toMatchObject({ path: '/orders', query: 'v=2', content_type: 'application/json' });
    expect(delivery.headers['x-store']).toBe('acme');
    expect(delivery.headers['x-shop']).toBeUndefined();
    const body = Buffer.from(delivery.body_base64, 'base64');
    expect(JSON.parse(body.toString())).toEqual({ type: 'order.created', id: 12, seen_type: 'order.created' });
    expect(verifyWebhook(body, delivery.headers, endpoint.secret).id).toBe(hit);
    listener.answer(delivery, 200);
    await until(hit, 'delivered');
    await until(miss, 'filtered');
  });
});
