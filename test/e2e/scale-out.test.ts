/**
 * Scale-out (issue 8, item 6): three relay processes on one PostgreSQL — one `api`, two
 * `all` — take events round-robin. A tail on the `api` process sees every event, each
 * once, whichever process stored it, and the attempts the other processes made; the
 * receiver gets each event once per attempt while every process is healthy. An event too
 * large for one NOTIFY reaches the tail too.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { relayMetric, startRelayProcess, stopRelayProcesses } from '../support/relay-process.ts';

const EVENT_COUNT = 300;
const children: ChildProcess[] = [];
let database: TestDatabase | undefined;
let receiver: Receiver | undefined;
let markerReceiver: Receiver | undefined;
let tail: WebSocket | undefined;

afterAll(async () => {
  tail?.close();
  await stopRelayProcesses(children);
  await receiver?.close();
  await markerReceiver?.close();
  await database?.drop();
});

/** Deliveries of the endpoint's events not yet recorded delivered, or still held under a lease. */
async function openDeliveries(databaseUrl: string, endpointId: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query("select count(*)::int as n from delivery where endpoint_id = $1 and (status <> 'delivered' or lease_id is not null)", [endpointId])).rows[0].n as number;
  } finally {
    await client.end();
  }
}

interface TailMessage {
  type: string;
  event?: { id: string; endpoint_id: string; query: string };
  event_id?: string;
  attempt?: { n: number; trigger: string };
}

describe('several relay processes on one database', () => {
  it('tails every process from one, and delivers each event once per attempt', { timeout: 90_000 }, async () => {
    database = await freshDatabase();
    receiver = await startReceiver();
    markerReceiver = await startReceiver();
    const relays = await Promise.all(['api', 'all', 'all'].map((role) => startRelayProcess(database!.url, { HOOK_ROLE: role })));
    children.push(...relays.map((relay) => relay.child));
    const [apiUrl] = relays.map((relay) => relay.baseUrl);

    const { api_key: key } = (await (await fetch(`${apiUrl}/v1/accounts`, { method: 'POST' })).json()) as { api_key: string };
    const endpoint = (await (await fetch(`${apiUrl}/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'scale-out', destination: { type: 'url', url: receiver.url } }),
    })).json()) as { id: string; url: string };
    const ingestPath = new URL(endpoint.url).pathname;

    const messages: TailMessage[] = [];
    tail = new WebSocket(`${apiUrl!.replace(/^http/, 'ws')}/v1/stream`, { headers: { authorization: `Bearer ${key}` } });
    tail.on('message', (data) => messages.push(JSON.parse(String(data)) as TailMessage));
    await expect.poll(() => messages.some((message) => message.type === 'hello'), { timeout: 10_000, message: 'no hello on the tail' }).toBe(true);
    // The other processes learn that this account is watched from the tail's process (one NOTIFY).
    await expect.poll(() => Promise.all(relays.slice(1).map((relay) => relayMetric(relay.baseUrl, 'hook_stream_watches_elsewhere'))), { timeout: 10_000 }).toEqual([1, 1]);

    const accepted: { id: string; by: number }[] = [];
    for (let batch = 0; batch < EVENT_COUNT; batch += 30) {
      accepted.push(...await Promise.all(Array.from({ length: 30 }, async (_, offset) => {
        const index = batch + offset;
        const by = index % relays.length;
        const response = await fetch(`${relays[by]!.baseUrl}${ingestPath}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ index }) });
        expect(response.status).toBe(200);
        return { id: ((await response.json()) as { id: string }).id, by };
      })));
    }
    const ids = new Set(accepted.map((event) => event.id));
    expect(ids.size).toBe(EVENT_COUNT);

    await receiver.waitFor(EVENT_COUNT, 60_000);
    // What the tail showed of this endpoint's events (markers, below, go to another endpoint).
    const received = () => messages.filter((message) => message.type === 'event.received' && message.event!.endpoint_id === endpoint.id).map((message) => message.event!.id);
    const attempted = () => messages.filter((message) => message.type === 'attempt.finished' && !markerIds.has(message.event_id!)).map((message) => message.event_id!);
    const markerIds = new Set<string>();
    await expect.poll(() => ({ events: received().length >= EVENT_COUNT, attempts: attempted().length >= EVENT_COUNT }), { timeout: 15_000 }).toEqual({ events: true, attempts: true });
    // Then one marker event through each process: each process sends its facts in order, so a
    // late duplicate of the facts above would reach the tail before that process's marker.
    const markers = (await (await fetch(`${apiUrl}/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'markers', destination: { type: 'url', url: markerReceiver.url } }),
    })).json()) as { id: string; url: string };
    for (const relay of relays) {
      const response = await fetch(`${relay.baseUrl}${new URL(markers.url).pathname}`, { method: 'POST', body: 'marker' });
      expect(response.status).toBe(200);
      markerIds.add(((await response.json()) as { id: string }).id);
    }
    await expect.poll(() => [...markerIds].filter((id) => messages.some((message) => message.type === 'event.received' && message.event!.id === id)).length, { timeout: 15_000 }).toBe(relays.length);

    // Every event once on the tail, whichever process stored it.
    expect(received()).toHaveLength(EVENT_COUNT);
    expect(new Set(received())).toEqual(ids);
    expect(accepted.filter((event) => event.by !== 0).length).toBe(EVENT_COUNT * 2 / 3);
    // Every first attempt once on the tail, though the api process delivers nothing itself.
    expect(attempted()).toHaveLength(EVENT_COUNT);
    expect(new Set(attempted())).toEqual(ids);
    expect(messages.filter((message) => message.type === 'attempt.finished').every((message) => message.attempt!.n === 1)).toBe(true);

    // Each event delivered once per attempt: no webhook-id twice with the same attempt number.
    // Every delivery is recorded delivered with no lease left, so no process holds one it could send again.
    await expect.poll(() => openDeliveries(database!.url, endpoint.id), { timeout: 15_000 }).toBe(0);
    const perAttempt = new Map<string, number>();
    for (const request of receiver.requests) {
      const delivery = `${request.headers['webhook-id']}#${request.headers['x-hook-attempt']}`;
      perAttempt.set(delivery, (perAttempt.get(delivery) ?? 0) + 1);
    }
    expect(receiver.requests).toHaveLength(EVENT_COUNT);
    expect([...perAttempt.values()].every((count) => count === 1)).toBe(true);
    expect(new Set(receiver.requests.map((request) => request.headers['webhook-id']))).toEqual(ids);

    // An event whose summary is too large for one NOTIFY (a 9,000-character query) still reaches the tail, whole.
    const query = `q=${'x'.repeat(9000)}`;
    const large = (await (await fetch(`${relays[1]!.baseUrl}${ingestPath}?${query}`, { method: 'POST', body: 'large' })).json()) as { id: string };
    await expect.poll(() => received().includes(large.id), { timeout: 10_000, message: 'the large event never reached the tail' }).toBe(true);
    const shown = messages.find((message) => message.type === 'event.received' && message.event!.id === large.id);
    expect(shown!.event!.query).toContain(query);
  });
});
