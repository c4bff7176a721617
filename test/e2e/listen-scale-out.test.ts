/**
 * `hook listen` across relay processes (docs/listen.md#several-listeners): two listeners
 * on one endpoint, connected to different relay processes on one database, each see every
 * event: the deliveries one decides reach the other as mirror copies, bodies larger than a
 * NOTIFY payload included, signed with the destination's secret. On an endpoint without a
 * `cli` destination, listeners on each process see the events stored by the other.
 */
import { createHmac } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { relayMetric, startRelayProcess, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';

const children: ChildProcess[] = [];
const sockets: WebSocket[] = [];
let database: TestDatabase | undefined;
let receiver: Receiver;
let relays: RelayProcess[];
let key: string;

beforeAll(async () => {
  database = await freshDatabase();
  receiver = await startReceiver();
  relays = await Promise.all([0, 1].map(() => startRelayProcess(database!.url)));
  children.push(...relays.map((relay) => relay.child));
  ({ api_key: key } = (await (await fetch(`${relays[0]!.baseUrl}/v1/accounts`, { method: 'POST' })).json()) as { api_key: string });
}, 60_000);

afterAll(async () => {
  for (const socket of sockets) socket.close();
  await stopRelayProcesses(children);
  await receiver?.close();
  await database?.drop();
});

interface Delivery {
  type: 'delivery';
  delivery_id: string;
  mirror?: true;
  attempt: number;
  event: { id: string };
  headers: Record<string, string>;
  body_base64: string;
}

/** A listener speaking the stream protocol to one relay process, answering every delivery with 200. */
async function listen(relay: RelayProcess, endpointId: string): Promise<{ deliveries: Delivery[] }> {
  const socket = new WebSocket(`${relay.baseUrl.replace('http', 'ws')}/v1/stream?mode=listen&endpoint_id=${endpointId}`, { headers: { authorization: `Bearer ${key}` } });
  sockets.push(socket);
  const deliveries: Delivery[] = [];
  const hello = new Promise<void>((resolve) => {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string };
      if (message.type === 'hello') resolve();
      if (message.type !== 'delivery') return;
      const delivery = message as Delivery;
      deliveries.push(delivery);
      socket.send(JSON.stringify({ type: 'result', version: 1, delivery_id: delivery.delivery_id, status: 200, duration_ms: 1, error: null, response_body: 'ok' }));
    });
  });
  await hello;
  return { deliveries };
}

async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await fetch(`${relays[0]!.baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${key}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });
  expect(response.status, path).toBeLessThan(300);
  return (await response.json()) as T;
}

/** Sends `count` events alternately to each relay process; bodies of every third are larger than a NOTIFY payload. */
async function sendEvents(ingestPath: string, count: number): Promise<Map<string, string>> {
  const bodies = new Map<string, string>();
  for (let index = 0; index < count; index += 1) {
    const body = JSON.stringify({ index, padding: index % 3 === 0 ? 'x'.repeat(12_000) : '' });
    const response = await fetch(`${relays[index % 2]!.baseUrl}${ingestPath}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(response.status).toBe(200);
    bodies.set(((await response.json()) as { id: string }).id, body);
  }
  return bodies;
}

/** Whether the delivery carries a valid signature of its bytes by `secret` (whsec_…). */
function signedBy(delivery: Delivery, secret: string): boolean {
  const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = delivery.headers;
  const body = Buffer.from(delivery.body_base64, 'base64');
  const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return signature!.split(' ').includes(`v1,${expected}`);
}

async function untilSeen(listeners: { deliveries: Delivery[] }[], ids: Iterable<string>): Promise<void> {
  const wanted = [...ids];
  await expect.poll(() => listeners.map((listener) => wanted.filter((id) => listener.deliveries.some((delivery) => delivery.event.id === id)).length), { timeout: 30_000 })
    .toEqual(listeners.map(() => wanted.length));
}

/**
 * Until each process has learned (one NOTIFY) of the other's `watches`: its sessions' account,
 * and the URL destinations they mirror. Then each sends the other what it needs.
 */
async function untilEachKnowsOfTheOther(watches: number): Promise<void> {
  await expect.poll(() => Promise.all(relays.map((relay) => relayMetric(relay.baseUrl, 'hook_stream_watches_elsewhere'))), { timeout: 10_000 }).toEqual(relays.map(() => watches));
}

describe('hook listen on several relay processes', () => {
  it('shows each listener every event: deliveries another process sent arrive as mirror copies', { timeout: 90_000 }, async () => {
    const endpoint = await api<{ id: string; url: string }>('/v1/endpoints', { method: 'POST', body: { name: 'shared-cli', destination: { type: 'cli' } } });
    const { secret } = await api<{ secret: string }>(`/v1/endpoints/${endpoint.id}/secret`);
    const listeners = [await listen(relays[0]!, endpoint.id), await listen(relays[1]!, endpoint.id)];
    await untilEachKnowsOfTheOther(1); // the account

    const bodies = await sendEvents(new URL(endpoint.url).pathname, 30);
    await untilSeen(listeners, bodies.keys());

    for (const listener of listeners) {
      for (const [id, body] of bodies) {
        const shown = listener.deliveries.filter((delivery) => delivery.event.id === id);
        expect(shown.length, id).toBeGreaterThanOrEqual(1);
        for (const delivery of shown) {
          expect(Buffer.from(delivery.body_base64, 'base64').toString()).toBe(body);
          expect(signedBy(delivery, secret)).toBe(true);
          expect(delivery.attempt).toBe(1);
          expect(delivery.headers['x-hook-mirror'] === 'true').toBe(delivery.mirror === true);
        }
      }
    }
    // Each event decided once, by one listener; the other saw a copy.
    for (const id of bodies.keys()) {
      const decided = listeners.flatMap((listener) => listener.deliveries.filter((delivery) => delivery.event.id === id && !delivery.mirror));
      const copies = listeners.flatMap((listener) => listener.deliveries.filter((delivery) => delivery.event.id === id && delivery.mirror));
      expect(decided, id).toHaveLength(1);
      expect(copies.length, id).toBeGreaterThanOrEqual(1);
    }
    // Both processes decided some: the copies crossed between processes both ways.
    expect(listeners.every((listener) => listener.deliveries.some((delivery) => !delivery.mirror))).toBe(true);
    expect(listeners.every((listener) => listener.deliveries.some((delivery) => delivery.mirror))).toBe(true);
    const events = await Promise.all([...bodies.keys()].map((id) => api<{ status: string; attempts: unknown[] }>(`/v1/events/${id}`)));
    expect(events.map((event) => [event.status, event.attempts.length])).toEqual(events.map(() => ['delivered', 1]));
  });

  it('on an endpoint without a cli destination, shows listeners on each process the events the other stored', { timeout: 90_000 }, async () => {
    const endpoint = await api<{ id: string; url: string }>('/v1/endpoints', { method: 'POST', body: { name: 'shared-url', destination: { type: 'url', url: receiver.url } } });
    const { secret } = await api<{ secret: string }>(`/v1/endpoints/${endpoint.id}/secret`);
    const listeners = [await listen(relays[0]!, endpoint.id), await listen(relays[1]!, endpoint.id)];
    await untilEachKnowsOfTheOther(2); // the account, and this URL destination (mirrored)

    const bodies = await sendEvents(new URL(endpoint.url).pathname, 12);
    await untilSeen(listeners, bodies.keys());
    for (const listener of listeners) {
      for (const [id, body] of bodies) {
        const shown = listener.deliveries.filter((delivery) => delivery.event.id === id);
        expect(shown, id).toHaveLength(1);
        expect(shown[0]!.mirror).toBe(true);
        expect(Buffer.from(shown[0]!.body_base64, 'base64').toString()).toBe(body);
        expect(signedBy(shown[0]!, secret)).toBe(true);
      }
    }
    // The URL destination decided each event; the listeners' answers were not recorded.
    await receiver.waitFor(bodies.size, 30_000);
  });
});
