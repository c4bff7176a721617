import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { verifyWebhook } from '@hook/client';
import type { DeliveryMessage, ServerMessage } from '@hook/core';
import { startReceiver, type Receiver } from '@hook/test/receiver';
import { api, createEndpoint, createEndpointWithSecret, sendEvent, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';
import { collectSignals, type Signals } from '@hook/test/signals';
import { LISTEN_SESSION_CHANNEL, type ListenSessionSignal } from '../src/stream/listen-session.ts';

const FAST_SCHEDULE = [30, 30, 30, 30, 30, 30];

let relay: TestRelay;
let key: string;
let receiver: Receiver;
const open = new Set<WebSocket>();
/** What the listen sessions did (listen-session.ts): claims and the results they took in. */
let sessions: Signals<ListenSessionSignal>;

beforeAll(async () => {
  sessions = collectSignals(LISTEN_SESSION_CHANNEL);
  // Sessions poll every 100 ms here, so a test can wait for a poll rather than a second.
  relay = await startTestRelay({ retryScheduleMs: FAST_SCHEDULE, deliveryTimeoutMs: 1000 }, { workerPollMs: 20, listenPollIntervalMs: 100 });
  // One account for the whole file, with more endpoints than free allows.
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
  receiver = await startReceiver();
});
afterEach(() => {
  for (const socket of open) socket.terminate();
  open.clear();
});
afterAll(async () => {
  sessions.stop();
  await relay.close();
  await receiver.close();
});

/** A stream connection that collects messages; `next(type)` waits for the next one of a type. */
interface StreamClient {
  socket: WebSocket;
  messages: ServerMessage[];
  next<T extends ServerMessage['type']>(type: T, timeoutMs?: number): Promise<Extract<ServerMessage, { type: T }>>;
  answer(delivery: DeliveryMessage, status: number | null, error?: string): void;
  closed: Promise<{ code: number; reason: string }>;
}

function connect(query: string, apiKey = key): Promise<StreamClient> {
  const socket = new WebSocket(`${relay.baseUrl.replace('http', 'ws')}/v1/stream?${query}`, { headers: { authorization: `Bearer ${apiKey}` } });
  open.add(socket);
  const messages: ServerMessage[] = [];
  let consumed = 0;
  const waiters = new Set<() => void>();
  socket.on('message', (data) => {
    messages.push(JSON.parse(data.toString()));
    for (const wake of [...waiters]) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const client: StreamClient = {
    socket,
    messages,
    closed,
    next(type, timeoutMs = 5000) {
      // Looks at each message once, as it arrives; fails after timeoutMs (a guard, not a wait).
      return new Promise((resolve, reject) => {
        const look = (): void => {
          while (consumed < messages.length) {
            const message = messages[consumed++]!;
            if (message.type !== type) continue;
            waiters.delete(look);
            clearTimeout(guard);
            resolve(message as never);
            return;
          }
        };
        const guard = setTimeout(() => {
          waiters.delete(look);
          reject(new Error(`no ${type} message within ${timeoutMs} ms; got ${JSON.stringify(messages.map((m) => m.type))}`));
        }, timeoutMs);
        waiters.add(look);
        look();
      });
    },
    answer(delivery, status, error) {
      socket.send(JSON.stringify({ type: 'result', version: 1, delivery_id: delivery.delivery_id, status, duration_ms: 3, error: error ?? null, response_body: 'ok\u0000' }));
    },
  };
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(client));
    socket.once('error', reject);
  });
}

/** The HTTP answer a refused upgrade got: status and problem document. */
function refusal(query: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${relay.baseUrl.replace('http', 'ws')}/v1/stream?${query}`, { headers });
    socket.on('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    socket.on('open', () => reject(new Error('the upgrade was accepted')));
    socket.on('error', () => undefined);
  });
}

function cliEndpoint(name: string) {
  return createEndpointWithSecret(relay.baseUrl, key, { name });
}

const send = sendEvent;

async function eventOf(id: string): Promise<any> {
  return (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body;
}

/** The event once `check` holds for it. */
function until(id: string, check: (event: any) => boolean, timeout = 5000): Promise<any> {
  return vi.waitFor(async () => {
    const event = await eventOf(id);
    expect(check(event), `event ${id} did not get there: ${JSON.stringify({ status: event.status, attempts: event.attempts })}`).toBe(true);
    return event;
  }, { timeout, interval: 20 });
}

/** Resolves once the session took in its listener's result for `deliveryId`; returns what it took it for. */
async function resultTaken(sessionId: string, deliveryId: string): Promise<string> {
  const taken = await sessions.waitFor((signal) => signal.kind === 'result' && signal.sessionId === sessionId && signal.deliveryId === deliveryId);
  return taken.kind === 'result' ? taken.as : '';
}

describe('GET /v1/stream refusals (before the upgrade, as problem documents)', () => {
  it('refuses a bad key, a missing endpoint_id in listen mode, an unknown endpoint and a plain HTTP request', async () => {
    expect(await refusal('mode=tail', { authorization: 'Bearer hk_nope' })).toMatchObject({ status: 401, body: { code: 'invalid_api_key' } });
    expect(await refusal('mode=listen', { authorization: `Bearer ${key}` })).toMatchObject({ status: 400, body: { code: 'stream_needs_endpoint' } });
    expect(await refusal('mode=listen&endpoint_id=ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', { authorization: `Bearer ${key}` }))
      .toMatchObject({ status: 404, body: { code: 'endpoint_not_found' } });
    expect(await refusal('mode=sideways', { authorization: `Bearer ${key}` })).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
    const plain = await api(relay.baseUrl, 'GET', '/v1/stream', { key });
    expect(plain.status).toBe(426);
    expect(plain.body.code).toBe('stream_needs_websocket');
  });
});

describe('listen mode on an endpoint with a CLI destination', () => {
  it('delivers what arrived before connecting, oldest first, signed over the raw bytes, and records the answers', async () => {
    const endpoint = await cliEndpoint('listen-backlog');
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x41]);
    const first = await send(endpoint.url, '{"n":1}');
    const second = await send(endpoint.url, binary, { 'content-type': 'application/octet-stream', 'x-custom': 'kept' });
    const listener = await connect(`mode=listen&endpoint_id=${endpoint.id}`);
    const hello = await listener.next('hello');
    expect(hello).toMatchObject({ mode: 'listen', version: 1, endpoint: { id: endpoint.id, destination_type: 'cli', mirror: false, url: endpoint.url } });
    // A client that did not ask for batches gets none (an older hook CLI).
    expect(hello.batch).toBeUndefined();

    const one = await listener.next('delivery');
    const two = await listener.next('delivery');
    expect([one.event.id, two.event.id]).toEqual([first, second]);
    const body = Buffer.from(two.body_base64, 'base64');
    expect(body.equals(binary)).toBe(true);
    expect(two.headers['x-custom']).toBe('kept');
    expect(two.headers['content-type']).toBe('application/octet-stream');
    expect(verifyWebhook(body, two.headers, endpoint.secret)).toMatchObject({ id: second });
    expect(two.attempt).toBe(1);

    listener.answer(one, 204);
    listener.answer(two, 200);
    const delivered = await until(second, (event) => event.status === 'delivered');
    expect(delivered.attempts).toMatchObject([{ n: 1, trigger: 'listen', response_status: 200, response_body: 'ok\uFFFD' }]);
    expect((await eventOf(first)).status).toBe('delivered');
  });

  it('makes a failed answer retrying, offers it again when due, and leaves an unanswered delivery to be offered again', async () => {
    const endpoint = await cliEndpoint('listen-retry');
    const listener = await connect(`mode=listen&endpoint_id=${endpoint.id}`);
    await listener.next('hello');
    const id = await send(endpoint.url, '{"retry":true}');
    const first = await listener.next('delivery');
    expect(first.event.id).toBe(id);
    listener.answer(first, null, 'connect ECONNREFUSED 127.0.0.1:3000');
    const retrying = await until(id, (event) => event.attempts.length === 1);
    expect(retrying).toMatchObject({ status: 'retrying', attempts: [{ trigger: 'listen', response_status: null, error: 'connect ECONNREFUSED 127.0.0.1:3000' }] });

    // Offered again once due (the poll picks it up); this time the listener vanishes without answering.
    const again = await listener.next('delivery', 5000);
    expect(again).toMatchObject({ attempt: 2, event: { id } });
    listener.socket.terminate();
    await listener.closed;

    const back = await connect(`mode=listen&endpoint_id=${endpoint.id}`);
    const offered = await back.next('delivery');
    expect(offered).toMatchObject({ attempt: 2, event: { id } });
    back.answer(offered, 200);
    const delivered = await until(id, (event) => event.status === 'delivered');
    expect(delivered.attempts.map((attempt: any) => attempt.response_status)).toEqual([null, 200]);
  });

  it('with skip_missed offers only new events; several listeners each get every new event, one deciding and the others mirroring', async () => {
    const endpoint = await cliEndpoint('listen-skip');
    const missed = await send(endpoint.url, '{"missed":true}');
    const a = await connect(`mode=listen&endpoint_id=${endpoint.id}&skip_missed=true`);
    const b = await connect(`mode=listen&endpoint_id=${endpoint.id}&skip_missed=true`);
    const aSession = (await a.next('hello')).session_id;
    const bSession = (await b.next('hello')).session_id;
    const fresh = await send(endpoint.url, '{"fresh":true}');
    const [toA, toB] = await Promise.all([a.next('delivery'), b.next('delivery')]);
    expect([toA.event.id, toB.event.id]).toEqual([fresh, fresh]);
    // One session claimed the delivery; the other shows it as a mirror copy, whose answer is not recorded.
    expect([toA.mirror, toB.mirror].filter(Boolean)).toEqual([true]);
    const [decider, mirror] = toA.mirror ? [toB, toA] : [toA, toB];
    a.answer(toA, decider === toA ? 200 : 500);
    b.answer(toB, decider === toB ? 200 : 500);
    await until(fresh, (event) => event.status === 'delivered');
    // The mirror's session has taken its answer in, as a mirror copy's: nothing to record.
    expect(await resultTaken(mirror === toA ? aSession : bSession, mirror.delivery_id)).toBe('mirror');
    expect((await eventOf(fresh)).attempts.map((attempt: any) => attempt.response_status)).toEqual([200]);
    expect(mirror.headers['webhook-signature']).toBe(decider.headers['webhook-signature']);
    // Past a poll (a claim walking the due index from the start, after the answers): the missed event is still not offered.
    const mark = sessions.seen.length;
    await sessions.waitFor((signal, index) => index >= mark && signal.kind === 'claimed' && signal.sessionId === aSession && signal.fromStart);
    expect(sessions.seen.flatMap((signal) => (signal.kind === 'claimed' && signal.sessionId === aSession ? signal.eventIds : []))).not.toContain(missed);
    expect(a.messages.filter((m) => m.type === 'delivery').map((m) => (m as DeliveryMessage).event.id)).toEqual([fresh]);
    expect((await eventOf(missed)).status).toBe('pending');
  });

  it('to a client that asks for batches, sends what is ready at once in one frame, and records a batch of results', async () => {
    const endpoint = await cliEndpoint('listen-batches');
    const sent = [];
    for (let n = 0; n < 6; n++) sent.push(await send(endpoint.url, `{"n":${n}}`));
    const listener = await connect(`mode=listen&endpoint_id=${endpoint.id}&batch=true`);
    const frames: any[] = [];
    listener.socket.on('message', (data) => frames.push(JSON.parse(data.toString())));
    const hello = await listener.next('hello');
    expect(hello.batch).toBe(true);
    await expect.poll(() => frames.flatMap((frame) => (frame.type === 'batch' ? frame.messages : [frame])).filter((message: any) => message.type === 'delivery').length).toBe(6);
    const deliveries: DeliveryMessage[] = frames.flatMap((frame) => (frame.type === 'batch' ? frame.messages : [frame])).filter((message: any) => message.type === 'delivery');
    // The backlog is claimed at once: its deliveries share frames, oldest first.
    expect(frames.some((frame) => frame.type === 'batch' && frame.messages.length > 1)).toBe(true);
    expect(deliveries.map((delivery) => delivery.event.id)).toEqual(sent);
    listener.socket.send(JSON.stringify({
      type: 'batch',
      version: 1,
      messages: deliveries.map((delivery, n) => ({ type: 'result', version: 1, delivery_id: delivery.delivery_id, status: n === 0 ? 500 : 200, duration_ms: 2 })),
    }));
    await expect.poll(() => frames.flatMap((frame) => (frame.type === 'batch' ? frame.messages : [frame])).filter((message: any) => message.type === 'recorded').length).toBe(6);
    expect((await until(sent[5]!, (event) => event.status === 'delivered')).attempts).toMatchObject([{ n: 1, trigger: 'listen', response_status: 200 }]);
    expect((await eventOf(sent[0]!)).status).toBe('retrying');
  });

  it('closes with a protocol error on a message it cannot understand', async () => {
    const endpoint = await cliEndpoint('listen-protocol');
    const listener = await connect(`mode=listen&endpoint_id=${endpoint.id}`);
    await listener.next('hello');
    listener.socket.send('{"type":"result","delivery_id":7}');
    const error = await listener.next('error');
    expect(error).toMatchObject({ code: 'stream_protocol_error' });
    expect(error.detail).toContain('delivery_id');
    expect((await listener.closed).code).toBe(4002);
  });

  it('tells the listener when its endpoint is deleted', async () => {
    const endpoint = await cliEndpoint('listen-deleted');
    const listener = await connect(`mode=listen&endpoint_id=${endpoint.id}`);
    await listener.next('hello');
    expect((await api(relay.baseUrl, 'DELETE', `/v1/endpoints/${endpoint.id}`, { key })).status).toBe(204);
    expect(await listener.next('error', 3000)).toMatchObject({ code: 'endpoint_gone' });
    expect((await listener.closed).code).toBe(4004);
  });
});

describe('listen mode on an endpoint with a URL destination (mirror)', () => {
  it('mirrors new events without recording the answers', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'mirror', destination: { type: 'url', url: receiver.url } });
    const listener = await connect(`mode=listen&endpoint_id=${endpoint.id}`);
    const hello = await listener.next('hello');
    expect(hello).toMatchObject({ endpoint: { destination_type: 'url', mirror: true } });
    const id = await send(endpoint.url, '{"mirror":true}');
    const delivery = await listener.next('delivery');
    expect(delivery.event.id).toBe(id);
    listener.answer(delivery, 500);
    const event = await until(id, (e) => e.status === 'delivered');
    expect(await resultTaken(hello.session_id, delivery.delivery_id)).toBe('mirror'); // taken in, as a copy's answer
    expect((await eventOf(id)).attempts.map((attempt: any) => attempt.trigger)).toEqual(['auto']);
    expect(event.status).toBe('delivered');
  });
});

describe('tail mode', () => {
  it('shows received events and finished attempts, filtered by endpoint', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'tailed', destination: { type: 'url', url: receiver.url } });
    const other = await cliEndpoint('not-tailed');
    const tail = await connect(`mode=tail&endpoint_id=${endpoint.id}`);
    expect(await tail.next('hello')).toMatchObject({ mode: 'tail' });
    await send(other.url, '{"other":true}');
    const id = await send(endpoint.url, '{"tail":true}', { 'content-type': 'application/json', 'x-event-type': 'order.paid' });
    expect(await tail.next('event.received')).toMatchObject({ event: { id, endpoint_id: endpoint.id, type: 'order.paid', status: 'pending', size: 13 } });
    expect(await tail.next('attempt.finished')).toMatchObject({ event_id: id, event_status: 'delivered', attempt: { n: 1, trigger: 'auto', response_status: 200 } });
    expect(tail.messages.filter((m) => m.type === 'event.received')).toHaveLength(1);
  });
});

describe('connection lifetime', () => {
  it('disconnects a client that stops answering pings, and says goodbye (1001) when the relay shuts down', async () => {
    const own = await startTestRelay({}, { streamHeartbeatIntervalMs: 100 });
    try {
      const { key: ownKey } = await signUp(own.baseUrl);
      const url = `${own.baseUrl.replace('http', 'ws')}/v1/stream?mode=tail`;
      const headers = { authorization: `Bearer ${ownKey}` };
      const deaf = new WebSocket(url, { headers, autoPong: false });
      const alive = new WebSocket(url, { headers });
      open.add(deaf).add(alive);
      let alivePings = 0;
      alive.on('ping', () => (alivePings += 1));
      const deafClosed = new Promise<number>((resolve) => deaf.on('close', (code) => resolve(code)));
      const aliveClosed = new Promise<number>((resolve) => alive.on('close', (code) => resolve(code)));
      let aliveOpen = true;
      alive.on('close', () => (aliveOpen = false));
      const startedMs = Date.now();
      expect(await deafClosed).toBe(1006); // terminated: no closing handshake
      expect(Date.now() - startedMs).toBeLessThan(2000);
      // Well past two more heartbeats (the deaf one was dropped for missing two), answered.
      const pingsThen = alivePings;
      await vi.waitFor(() => expect(alivePings).toBeGreaterThanOrEqual(pingsThen + 3), { timeout: 5000, interval: 10 });
      expect(aliveOpen).toBe(true);
      await own.app.close();
      expect(await aliveClosed).toBe(1001);
    } finally {
      await own.close();
    }
  });
});
