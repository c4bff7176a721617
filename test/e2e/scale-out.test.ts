/**
 * Scale-out (issue 8, item 6): three relay processes on one PostgreSQL — one `api`, two
 * `all` — take events round-robin. A tail on the `api` process sees every event, each
 * once, whichever process stored it, and the attempts the other processes made; the
 * receiver gets each event once per attempt while every process is healthy. An event too
 * large for one NOTIFY reaches the tail too.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startRelayProcess, stopRelayProcesses } from '../support/relay-process.ts';

const EVENT_COUNT = 300;
const children: ChildProcess[] = [];
let database: TestDatabase | undefined;
let receiver: Receiver | undefined;
let tail: WebSocket | undefined;

afterAll(async () => {
  tail?.close();
  await stopRelayProcesses(children);
  await receiver?.close();
  await database?.drop();
});

interface TailMessage {
  type: string;
  event?: { id: string; endpoint_id: string; query: string };
  event_id?: string;
  attempt?: { n: number; trigger: string };
}

async function until(condition: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('several relay processes on one database', () => {
  it('tails every process from one, and delivers each event once per attempt', { timeout: 90_000 }, async () => {
    database = await freshDatabase();
    receiver = await startReceiver();
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
    await until(() => messages.some((message) => message.type === 'hello'), 10_000, () => 'no hello on the tail');
    // The other processes learn that this account is watched from the tail's process (one NOTIFY, ≤ ~100 ms).
    await new Promise((resolve) => setTimeout(resolve, 1000));

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
    const received = () => messages.filter((message) => message.type === 'event.received').map((message) => message.event!.id);
    const attempted = () => messages.filter((message) => message.type === 'attempt.finished').map((message) => message.event_id!);
    await until(() => received().length >= EVENT_COUNT && attempted().length >= EVENT_COUNT, 15_000,
      () => `tail saw ${received().length} events and ${attempted().length} attempts of ${EVENT_COUNT}`);
    // Late duplicates would arrive within a flush or two.
    await new Promise((resolve) => setTimeout(resolve, 500));

    // Every event once on the tail, whichever process stored it.
    expect(received()).toHaveLength(EVENT_COUNT);
    expect(new Set(received())).toEqual(ids);
    expect(accepted.filter((event) => event.by !== 0).length).toBe(EVENT_COUNT * 2 / 3);
    // Every first attempt once on the tail, though the api process delivers nothing itself.
    expect(attempted()).toHaveLength(EVENT_COUNT);
    expect(new Set(attempted())).toEqual(ids);
    expect(messages.filter((message) => message.type === 'attempt.finished').every((message) => message.attempt!.n === 1)).toBe(true);

    // Each event delivered once per attempt: no webhook-id twice with the same attempt number.
    await new Promise((resolve) => setTimeout(resolve, 500));
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
    await until(() => received().includes(large.id), 10_000, () => 'the large event never reached the tail');
    const shown = messages.find((message) => message.type === 'event.received' && message.event!.id === large.id);
    expect(shown!.event!.query).toContain(query);
  });
});
