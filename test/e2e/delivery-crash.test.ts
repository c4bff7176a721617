/**
 * Crash safety of the delivery queue: two relay processes share one database, a
 * receiver fails ~30% of deliveries at random, and one relay is SIGKILLed in the middle
 * of the run and started again. Every acknowledged event must end delivered and reach
 * the receiver; duplicates (the same webhook-id twice) are allowed but reported.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startRelayProcess, type RelayProcess } from '../support/relay-process.ts';
import type { TestDatabase } from '@hook/db/testing';

const EVENTS = 2000;
const children = new Set<ChildProcess>();
let database: TestDatabase | undefined;
let receiver: Receiver | undefined;

async function startRelay(databaseUrl: string): Promise<RelayProcess> {
  const relay = await startRelayProcess(databaseUrl, {
    // Twelve fast retries: an event failing thirteen times at 30% is a one-in-six-million event.
    HOOK_RETRY_SCHEDULE: Array(12).fill('20ms').join(','),
    HOOK_DELIVERY_TIMEOUT: '1s',
  });
  children.add(relay.child);
  return relay;
}

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await receiver?.close();
  await database?.drop().catch(() => undefined);
});

describe('delivery survives a killed relay process', () => {
  it('delivers every acknowledged event at least once, with few duplicates', async () => {
    database = await freshDatabase();
    const answers: number[] = [];
    receiver = await startReceiver((_, index) => {
      answers[index] = Math.random() < 0.3 ? 500 : 200;
      return { status: answers[index]!, delayMs: 20 };
    });
    const relayA = await startRelay(database.url);
    let relayB = await startRelay(database.url);

    const account = await (await fetch(`${relayA.baseUrl}/v1/accounts`, { method: 'POST' })).json() as { api_key: string };
    const endpoint = await (await fetch(`${relayA.baseUrl}/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'crash', destination: { type: 'url', url: receiver.url } }),
    })).json() as { url: string };
    const ingestPath = new URL(endpoint.url).pathname;

    // One stream of events, spread over the live relays. Halfway through, relay B is
    // killed while its deliveries are in flight (the receiver takes 20 ms to answer);
    // at three quarters it comes back.
    const acknowledged: string[] = [];
    let unanswered = 0;
    let bases = [relayA.baseUrl, relayB.baseUrl];
    let next = 0;
    let restarting: Promise<void> | undefined;
    await Promise.all(Array.from({ length: 20 }, async () => {
      while (next < EVENTS) {
        const n = next++;
        if (n === EVENTS / 2) {
          relayB.child.kill('SIGKILL');
          bases = [relayA.baseUrl];
        }
        if (n === (EVENTS * 3) / 4) {
          restarting = startRelay(database!.url).then((restarted) => {
            relayB = restarted;
            bases = [relayA.baseUrl, restarted.baseUrl];
          });
        }
        const base = bases[n % bases.length]!;
        try {
          const response = await fetch(`${base}${ingestPath}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }) });
          if (response.status === 200) acknowledged.push(((await response.json()) as { id: string }).id);
          else unanswered++;
        } catch {
          unanswered++; // in flight to the relay that was killed: never acknowledged
        }
      }
    }));
    await restarting;

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await expect.poll(async () => (await client.query("select count(*)::int as n from delivery where status <> 'delivered'")).rows[0].n, { timeout: 90_000, message: 'events still undelivered' }).toBe(0);
      const stored = (await client.query('select count(*)::int as n from event')).rows[0].n as number;
      expect(stored).toBeGreaterThanOrEqual(acknowledged.length);
    } finally {
      await client.end();
    }

    // Every acknowledged event got at least one 2xx from the receiver; a duplicate is an
    // event it answered 2xx more than once (a lease that died with the killed process).
    const successes = new Map<string, number>();
    receiver.requests.forEach((request, index) => {
      if (answers[index] !== 200) return;
      const id = String(request.headers['webhook-id']);
      successes.set(id, (successes.get(id) ?? 0) + 1);
    });
    const missing = acknowledged.filter((id) => !successes.has(id));
    expect(missing, `${missing.length} acknowledged events never delivered`).toEqual([]);
    const duplicates = [...successes.values()].filter((count) => count > 1).length;
    console.info(
      `delivery crash test: ${acknowledged.length} events acknowledged (${unanswered} unanswered while a relay died), ` +
        `${receiver.requests.length} deliveries received, ${duplicates} events delivered twice or more`,
    );
    expect(acknowledged.length).toBeGreaterThan(EVENTS * 0.9);
    expect(duplicates).toBeLessThan(acknowledged.length * 0.05);
  }, 180_000);
});
