/**
 * What an attempt keeps of its exchange (issue 32; docs/api.md#attempts), against a real
 * relay, real receivers on local ports and an in-process MQTT broker (aedes): the request
 * Hook sent, whose stored headers verify against the body sent; the receiver's answer
 * headers; a transformation's output as the request body, the event's own body kept once;
 * a destination's credentials never shown; an answer's headers cut to the bound.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { Aedes } from 'aedes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '@hook/client';
import { ATTEMPT_BODY_MAX_BYTES, ATTEMPT_HEADERS_MAX_BYTES, HEADERS_NOT_KEPT, REDACTED_HEADER_VALUE } from '@hook/core';
import { startReceiver, type ReceivedRequest, type Receiver } from '@hook/test/receiver';
import { api, createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';

/** Long waits between retries: every attempt here is the first. */
const SLOW_SCHEDULE = [3_600_000, 3_600_000, 3_600_000];
/** Bytes a re-serialisation would change: the signature must be over these exactly. */
const BODY = '{ "type" : "order.paid",  "amount": [1, 2.50], "secret": "s3cr3t" }\n';

/** Drops `secret` and adds a field: the bytes sent differ from the event's. */
const RESHAPE = `addHandler('transform', (request) => {
  const { secret, ...rest } = request.body;
  request.body = { ...rest, reshaped: true };
  request.headers['x-reshaped'] = 'yes';
  return request;
});`;
/** Returns the request as it came: the body sent is the event's, byte for byte. */
const IDENTITY = `addHandler('transform', (request) => request);`;
/** A body longer than an attempt keeps, of two-byte characters. */
const LONG = `addHandler('transform', (request) => ({ ...request, body: 'é'.repeat(5000) }));`;
const THROWS = `addHandler('transform', (request) => request.body.items.length);`;

let relay: TestRelay;
let key: string;
let receiver: Receiver;
let broker: Aedes;
let brokerServer: Server;

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: SLOW_SCHEDULE, deliveryTimeoutMs: 2000 }, { workerPollMs: 20 });
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
  receiver = await startReceiver(() => ({ status: 200, body: '{"ok":true}', headers: { 'x-receiver-trace': 'trace-7f3k', 'content-type': 'application/json' } }));
  broker = await Aedes.createBroker();
  brokerServer = createServer(broker.handle);
  await new Promise<void>((resolve) => brokerServer.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await relay?.close();
  await receiver?.close();
  await new Promise<void>((resolve) => (broker ? broker.close(() => resolve()) : resolve()));
  await new Promise<void>((resolve) => (brokerServer ? brokerServer.close(() => resolve()) : resolve()));
});

async function call(method: string, path: string, body?: unknown) {
  return api(relay.baseUrl, method, path, { key, ...(body === undefined ? {} : { json: body }) });
}

/** An endpoint whose one destination is `destination` (with `options`: auth, transformation), and its signing secret. */
async function endpointTo(destination: Record<string, unknown>, options: Record<string, unknown> = {}): Promise<{ url: string; secret: string; destinationId: string }> {
  const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'attempt-request' });
  const created = await call('POST', `/v1/endpoints/${endpoint.id}/destinations`, { destination, ...options });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect((await call('DELETE', `/v1/destinations/${endpoint.destinations[0].id}`)).status).toBe(204);
  const secret = (await call('GET', `/v1/endpoints/${endpoint.id}/secret`)).body.secret as string;
  return { url: endpoint.url, secret, destinationId: created.body.id };
}

/** The event once its first attempt is recorded. */
async function attempted(id: string): Promise<any> {
  await expect.poll(async () => (await call('GET', `/v1/events/${id}`)).body.attempts?.length ?? 0).toBeGreaterThanOrEqual(1);
  return (await call('GET', `/v1/events/${id}`)).body;
}

function receivedFor(id: string, on: Receiver = receiver): ReceivedRequest {
  const found = on.requests.filter((request) => request.headers['webhook-id'] === id);
  expect(found).toHaveLength(1);
  return found[0]!;
}

describe('the request an attempt sent', () => {
  it('keeps the headers sent, signature included, which verify against the event body; the body is the event\'s; the answer\'s headers are kept', async () => {
    const endpoint = await endpointTo({ type: 'url', url: receiver.url });
    const id = await sendEvent(endpoint.url, BODY, { 'content-type': 'application/json', 'x-shop': 'acme' });
    const event = await attempted(id);
    const [attempt] = event.attempts;
    const sent = receivedFor(id);

    expect(attempt.request).toMatchObject({ body: null, body_encoding: null, body_truncated: false, body_is_event_body: true });
    const headers: Record<string, string> = attempt.request.headers;
    expect(headers).toMatchObject({ 'webhook-id': id, 'x-hook-event-id': id, 'x-hook-attempt': '1', 'x-shop': 'acme', 'content-type': 'application/json' });
    // Every header kept is the one the receiver got.
    for (const [name, value] of Object.entries(headers)) expect(sent.headers[name], name).toBe(value);
    // The kept headers alone verify against the event's body: what a receiver checks is all there.
    const body = Buffer.from(event.body, event.body_encoding === 'base64' ? 'base64' : 'utf8');
    expect(body.equals(sent.body)).toBe(true);
    expect(verifyWebhook(body, headers, endpoint.secret).id).toBe(id);

    expect(attempt.response_status).toBe(200);
    expect(attempt.response_headers).toMatchObject({ 'x-receiver-trace': 'trace-7f3k', 'content-type': 'application/json' });
    expect(attempt.response_body).toBe('{"ok":true}');
  });

  it('keeps a transformation\'s output as the body sent, and its stored headers verify against it', async () => {
    const endpoint = await endpointTo({ type: 'url', url: receiver.url }, { transformation: { code: RESHAPE } });
    const id = await sendEvent(endpoint.url, BODY);
    const [attempt] = (await attempted(id)).attempts;
    const sent = receivedFor(id);

    expect(attempt.request).toMatchObject({ body_encoding: 'utf8', body_truncated: false, body_is_event_body: false });
    expect(attempt.request.body).toBe(sent.body.toString('utf8'));
    expect(JSON.parse(attempt.request.body)).toEqual({ type: 'order.paid', amount: [1, 2.5], reshaped: true });
    expect(attempt.request.headers['x-reshaped']).toBe('yes');
    expect(verifyWebhook(attempt.request.body, attempt.request.headers, endpoint.secret).id).toBe(id);
  });

  it('keeps the first 4 KiB of a long body a transformation made, and says it was cut', async () => {
    const endpoint = await endpointTo({ type: 'url', url: receiver.url }, { transformation: { code: LONG } });
    const id = await sendEvent(endpoint.url, BODY);
    const [attempt] = (await attempted(id)).attempts;
    expect(receivedFor(id).body.toString()).toBe('é'.repeat(5000));
    expect(attempt.request).toMatchObject({ body: 'é'.repeat(ATTEMPT_BODY_MAX_BYTES / 2), body_encoding: 'utf8', body_truncated: true, body_is_event_body: false });
  });

  it('says the event\'s body was sent when a transformation returned the same bytes', async () => {
    const endpoint = await endpointTo({ type: 'url', url: receiver.url }, { transformation: { code: IDENTITY } });
    const id = await sendEvent(endpoint.url, 'as it came', { 'content-type': 'text/plain' });
    const [attempt] = (await attempted(id)).attempts;
    expect(receivedFor(id).body.toString()).toBe('as it came');
    expect(attempt.request).toMatchObject({ body: null, body_encoding: null, body_is_event_body: true });
  });

  it('has no request when nothing was sent: a transformation that throws', async () => {
    const endpoint = await endpointTo({ type: 'url', url: receiver.url }, { transformation: { code: THROWS } });
    const id = await sendEvent(endpoint.url, BODY);
    const [attempt] = (await attempted(id)).attempts;
    expect(attempt.error).toMatch(/^transformation_failed: /);
    expect(attempt).toMatchObject({ request: null, response_headers: null, response_status: null });
  });

  it('redacts a destination\'s credentials: Basic, Bearer and static auth headers, never the signature', async () => {
    const cases: Array<{ auth: Record<string, unknown>; secretHeaders: Record<string, string> }> = [
      { auth: { type: 'basic', username: 'hook', password: 'basic-s3cret' }, secretHeaders: { authorization: `Basic ${Buffer.from('hook:basic-s3cret').toString('base64')}` } },
      { auth: { type: 'bearer', token: 'bearer-s3cret' }, secretHeaders: { authorization: 'Bearer bearer-s3cret' } },
      // The original sender's Authorization travels when the destination sets none, and is not shown either. A static
      // header named like the signature is never sent (the relay's own headers win), so the signature is kept as sent.
      { auth: { type: 'headers', headers: { 'X-Api-Key': 'header-s3cret', 'Webhook-Signature': 'v1,forged' } }, secretHeaders: { 'x-api-key': 'header-s3cret', authorization: 'Bearer from-the-sender' } },
    ];
    for (const { auth, secretHeaders } of cases) {
      const endpoint = await endpointTo({ type: 'url', url: receiver.url }, { auth });
      const id = await sendEvent(endpoint.url, BODY, { 'content-type': 'application/json', authorization: 'Bearer from-the-sender' });
      const event = await attempted(id);
      const sent = receivedFor(id);
      const kept: Record<string, string> = event.attempts[0].request.headers;
      for (const [name, value] of Object.entries(secretHeaders)) {
        expect(sent.headers[name], `${auth.type}: the receiver got ${name}`).toBe(value);
        expect(kept[name], `${auth.type}: ${name} is kept redacted`).toBe(REDACTED_HEADER_VALUE);
      }
      expect(kept['webhook-signature']).toBe(sent.headers['webhook-signature']);
      expect(verifyWebhook(BODY, kept, endpoint.secret).id).toBe(id);
      const answer = JSON.stringify(event.attempts);
      for (const secret of ['basic-s3cret', 'bearer-s3cret', 'header-s3cret', secretHeaders.authorization!]) expect(answer).not.toContain(secret);
    }
  });

  it('cuts an answer of 200 headers (100 KiB) to the bound, counting those left out', async () => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < 200; i++) headers[`x-big-${String(i).padStart(3, '0')}`] = 'v'.repeat(500);
    const loud = await startReceiver(() => ({ status: 200, headers }));
    try {
      const endpoint = await endpointTo({ type: 'url', url: loud.url });
      const id = await sendEvent(endpoint.url, BODY);
      const event = await attempted(id);
      const [attempt] = event.attempts;
      expect(attempt).toMatchObject({ response_status: 200, error: null });
      expect(event.status).toBe('delivered');
      const kept: Record<string, string> = attempt.response_headers;
      const size = Object.entries(kept).filter(([name]) => name !== HEADERS_NOT_KEPT).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(value), 0);
      expect(size).toBeLessThanOrEqual(ATTEMPT_HEADERS_MAX_BYTES);
      const big = Object.keys(kept).filter((name) => name.startsWith('x-big-'));
      expect(big.length).toBeGreaterThan(0);
      expect(big.length).toBeLessThan(200);
      // The receiver's first headers are kept in order; the rest are counted.
      expect(big).toEqual(Object.keys(headers).slice(0, big.length));
      expect(kept[HEADERS_NOT_KEPT]).toMatch(/^\d+ more headers not kept$/);
      const notKept = Number(kept[HEADERS_NOT_KEPT]!.split(' ')[0]);
      // Kept and counted: every header the receiver sent (its 200, content-type, date, connection, …).
      expect(big.length + notKept).toBeGreaterThanOrEqual(200);
    } finally {
      await loud.close();
    }
  });
});

describe('the message a queue destination published', () => {
  it('keeps the headers that went with it: none over MQTT 3.1.1 (aedes), the body being the event\'s', async () => {
    const port = (brokerServer.address() as AddressInfo).port;
    const endpoint = await endpointTo({ type: 'mqtt', url: `mqtt://127.0.0.1:${port}`, topic: 'hook/attempt-request' });
    const id = await sendEvent(endpoint.url, BODY);
    const event = await attempted(id);
    const [attempt] = event.attempts;
    expect(attempt).toMatchObject({ error: null, response_status: null, response_headers: null });
    expect(attempt.response_body).toMatch(/MQTT 3\.1\.1 only, so the headers \(webhook-id, signature\) were not carried$/);
    expect(attempt.request).toEqual({ headers: {}, body: null, body_encoding: null, body_truncated: false, body_is_event_body: true });
  });
});
