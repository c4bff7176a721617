/**
 * Crash safety of the one delivery engine with several destinations and listeners: two
 * relay processes share one database; relays and `hook listen` processes are SIGKILLed
 * mid-delivery and started again. Every acknowledged event must reach every destination
 * (each URL receiver, and the `hook listen` destination's local server); duplicates
 * (an event answered 2xx twice at one destination, with the same webhook-id) stay below 1%.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '@hook/client';
import type { TestDatabase } from '@hook/db/testing';
import { HookUser } from '../support/cli.ts';
import { freshDatabase } from '../support/database.ts';
import { startHook, stopAllHookProcesses, type HookProcess } from '../support/hook-process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { callRelay as call, startRelayProcess, type RelayProcess } from '../support/relay-process.ts';

const children = new Set<ChildProcess>();
const receivers: Receiver[] = [];
const databases: TestDatabase[] = [];
const users: HookUser[] = [];

async function startRelay(databaseUrl: string): Promise<RelayProcess> {
  const relay = await startRelayProcess(databaseUrl, {
    // Twelve fast retries: an event failing thirteen times at 20% is a one-in-a-billion event.
    HOOK_RETRY_SCHEDULE: Array(12).fill('20ms').join(','),
    HOOK_DELIVERY_TIMEOUT: '1s',
    // A killed relay's deliveries in flight are the duplicates: at most 8 per destination
    // here (half of 16), so the 1% bound says something about the engine, not the setting.
    HOOK_DELIVERY_CONCURRENCY: '16',
  });
  children.add(relay.child);
  return relay;
}

/** A receiver that fails `failing` of its deliveries at random, answering after `delayMs`; it remembers each answer. */
async function flakyReceiver(failing: number, delayMs = 20): Promise<{ receiver: Receiver; answers: number[] }> {
  const answers: number[] = [];
  const receiver = await startReceiver((_, index) => {
    answers[index] = Math.random() < failing ? 500 : 200;
    return { status: answers[index]!, delayMs };
  });
  receivers.push(receiver);
  return { receiver, answers };
}

/** Events each delivered with a 2xx at a receiver, and how often (not counting `hook listen` mirror copies, whose answers decide nothing). */
function successes({ receiver, answers }: { receiver: Receiver; answers: number[] }): Map<string, number> {
  const counts = new Map<string, number>();
  receiver.requests.forEach((request, index) => {
    if (answers[index] !== 200 || request.headers['x-hook-mirror'] === 'true') return;
    const id = String(request.headers['webhook-id']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  });
  return counts;
}

/** Sends `count` events over the relays `bases()` names at each moment, 20 at a time; `at(n)` runs before event n. Returns the acknowledged ids. */
async function sendEvents(count: number, ingestPath: string, bases: () => string[], at: (n: number) => void): Promise<{ acknowledged: string[]; unanswered: number }> {
  const acknowledged: string[] = [];
  let unanswered = 0;
  let next = 0;
  await Promise.all(Array.from({ length: 20 }, async () => {
    while (next < count) {
      const n = next++;
      at(n);
      const live = bases();
      try {
        const response = await fetch(`${live[n % live.length]}${ingestPath}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }) });
        if (response.status === 200) acknowledged.push(((await response.json()) as { id: string }).id);
        else unanswered++;
      } catch {
        unanswered++; // in flight to the relay that was killed: never acknowledged
      }
    }
  }));
  return { acknowledged, unanswered };
}

async function untilSettled(databaseUrl: string, ids: string[], timeoutMs = 120_000): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await expect.poll(async () => (await client.query("select count(*)::int as n from delivery where event_id = any($1) and status <> 'delivered'", [ids])).rows[0].n as number, { timeout: timeoutMs, message: 'deliveries still open' }).toBe(0);
  } finally {
    await client.end();
  }
}

afterEach(async () => {
  await stopAllHookProcesses();
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(receivers.map((receiver) => receiver.close()));
  for (const database of databases) await database.drop().catch(() => undefined);
  for (const user of users) user.remove();
});

describe('one engine, several destinations, processes killed', () => {
  it('a relay SIGKILLed during fan-out: every acknowledged event reaches each of three destinations, each signed with its own secret', async () => {
    const EVENTS = 1500;
    const database = await freshDatabase();
    databases.push(database);
    const destinations = await Promise.all([0.2, 0.2, 0.2].map((failing) => flakyReceiver(failing)));
    const relayA = await startRelay(database.url);
    let relayB = await startRelay(database.url);
    const key = (await call(relayA.baseUrl, 'POST', '/v1/accounts', '')).api_key as string;
    const endpoint = await call(relayA.baseUrl, 'POST', '/v1/endpoints', key, { name: 'fan', destination: { type: 'url', url: destinations[0]!.receiver.url } });
    for (const extra of destinations.slice(1)) await call(relayA.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/destinations`, key, { destination: { type: 'url', url: extra.receiver.url } });
    const destinationIds = (await call(relayA.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/destinations`, key)).data.map((row: { id: string }) => row.id) as string[];
    const secrets = await Promise.all(destinationIds.map(async (id) => (await call(relayA.baseUrl, 'GET', `/v1/destinations/${id}/secret`, key)).secret as string));

    let bases = [relayA.baseUrl, relayB.baseUrl];
    let restarting: Promise<void> | undefined;
    const { acknowledged, unanswered } = await sendEvents(EVENTS, new URL(endpoint.url).pathname, () => bases, (n) => {
      if (n === EVENTS / 2) {
        relayB.child.kill('SIGKILL');
        bases = [relayA.baseUrl];
      }
      if (n === (EVENTS * 3) / 4) {
        restarting = startRelay(database.url).then((restarted) => {
          relayB = restarted;
          bases = [relayA.baseUrl, restarted.baseUrl];
        });
      }
    });
    await restarting;
    await untilSettled(database.url, acknowledged);

    const report: string[] = [];
    destinations.forEach((destination, i) => {
      const delivered = successes(destination);
      const missing = acknowledged.filter((id) => !delivered.has(id));
      expect(missing, `destination ${i}: ${missing.length} acknowledged events never delivered`).toEqual([]);
      const duplicates = [...delivered.values()].filter((count) => count > 1).length;
      report.push(`destination ${i}: ${destination.receiver.requests.length} requests, ${duplicates} events twice`);
      expect(duplicates).toBeLessThan(acknowledged.length * 0.01);
      // Each destination's deliveries verify with its own secret, and not with another's.
      const sample = destination.receiver.requests[0]!;
      expect(verifyWebhook(sample.body, sample.headers as Record<string, string>, secrets[i]!).id).toBe(String(sample.headers['webhook-id']));
      expect(() => verifyWebhook(sample.body, sample.headers as Record<string, string>, secrets[(i + 1) % 3]!)).toThrow();
    });
    console.info(`fan-out crash test: ${acknowledged.length} events acknowledged (${unanswered} unanswered while a relay died); ${report.join('; ')}`);
    expect(acknowledged.length).toBeGreaterThan(EVENTS * 0.9);
  }, 240_000);

  it('two relays and two `hook listen` processes on one database: a listener and then a relay SIGKILLed mid-delivery, every event still reaches the listened and the URL destination', async () => {
    const EVENTS = 3000;
    const database = await freshDatabase();
    databases.push(database);
    const url = await flakyReceiver(0.2);
    const localServer = await flakyReceiver(0.1, 10);
    const relayA = await startRelay(database.url);
    const relayB = await startRelay(database.url);
    const key = (await call(relayA.baseUrl, 'POST', '/v1/accounts', '')).api_key as string;
    const endpoint = await call(relayA.baseUrl, 'POST', '/v1/endpoints', key, { name: 'both', destination: { type: 'cli' } });
    await call(relayA.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/destinations`, key, { destination: { type: 'url', url: url.receiver.url } });
    const listenOn = (baseUrl: string): HookProcess => {
      const user = new HookUser();
      users.push(user);
      return startHook(user, ['listen', localServer.receiver.url, '--endpoint', endpoint.id, '--max-in-flight', '8', '--json'], { HOOK_API_KEY: key, HOOK_API_URL: baseUrl });
    };
    let listenerA = listenOn(relayA.baseUrl);
    let listenerB = listenOn(relayB.baseUrl);
    await Promise.all([listenerA, listenerB].map((listener) => listener.waitForJson((line) => line.type === 'ready')));

    let bases = [relayA.baseUrl, relayB.baseUrl];
    const { acknowledged, unanswered } = await sendEvents(EVENTS, new URL(endpoint.url).pathname, () => bases, (n) => {
      if (n === EVENTS / 4) {
        // A listener killed mid-delivery: its leases are given back when its socket closes.
        listenerA.child.kill('SIGKILL');
        listenerA = listenOn(relayA.baseUrl);
      }
      if (n === EVENTS / 2) {
        // A relay killed with listen deliveries in flight: their leases run out, and the other relay's listener takes them.
        relayB.child.kill('SIGKILL');
        bases = [relayA.baseUrl];
        listenerB.child.kill('SIGKILL');
        listenerB = listenOn(relayA.baseUrl);
      }
    });
    await untilSettled(database.url, acknowledged, 150_000);

    const report: string[] = [];
    for (const [name, destination] of [['hook listen', localServer], ['url', url]] as const) {
      const delivered = successes(destination);
      const missing = acknowledged.filter((id) => !delivered.has(id));
      expect(missing, `${name}: ${missing.length} acknowledged events never delivered`).toEqual([]);
      const duplicates = [...delivered.values()].filter((count) => count > 1).length;
      report.push(`${name}: ${destination.receiver.requests.length} requests, ${duplicates} events twice`);
      expect(duplicates, name).toBeLessThan(acknowledged.length * 0.01);
    }
    // Two listeners on one destination each saw the deliveries the other decided, marked as copies.
    expect(localServer.receiver.requests.some((request) => request.headers['x-hook-mirror'] === 'true')).toBe(true);
    console.info(`listen crash test: ${acknowledged.length} events acknowledged (${unanswered} unanswered while a relay died); ${report.join('; ')}`);
    expect(acknowledged.length).toBeGreaterThan(EVENTS * 0.9);
  }, 300_000);
});
