/**
 * Ordered delivery (issue 31) across relay processes that die: two relay processes on one
 * database both deliver to one destination ordered by a header, 50 keys, 600 events sent
 * by ten senders at once (each key's events one after another, each acknowledged before
 * the next is sent: the order a key's events were sent in is then the order the relay
 * owes). The receiver fails a fifth of its requests at random; each relay is SIGKILLed
 * once mid-run and started again. What the receiver saw must show, for every key, its
 * events first delivered in the order they were sent, every one of them delivered, and
 * never two requests of one key in flight together. A delivery may be sent again
 * after a kill (at least once: the killed relay's lease runs out), so duplicates are
 * allowed and counted.
 *
 * No event should give up: twelve retries 20 ms apart, so an event fails thirteen times
 * in a row one time in a billion (0.2^13). on_give_up is `block` so that one that did
 * would hold its key and fail the test by the events stuck behind it, not slip by as a
 * skip would.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { callRelay as call, startRelayProcess, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';
import { firstSuccessOrder, overlappingExchanges, startTimedReceiver, succeeded, type Exchange, type TimedReceiver } from '../support/timed-receiver.ts';

const KEYS = 50;
const EVENTS_PER_KEY = 12;
const SENDERS = 10;
const FAILING = 0.2;

const children = new Set<ChildProcess>();
let database: TestDatabase | undefined;
let receiver: TimedReceiver | undefined;

afterAll(async () => {
  await stopRelayProcesses([...children]);
  await receiver?.close();
  await database?.drop();
});

async function startRelay(databaseUrl: string): Promise<RelayProcess> {
  const relay = await startRelayProcess(databaseUrl, {
    HOOK_RETRY_SCHEDULE: Array(12).fill('20ms').join(','),
    // A killed relay's leases run out 3 s after they were taken (2 × timeout + 1 s).
    HOOK_DELIVERY_TIMEOUT: '1s',
    HOOK_DELIVERY_CONCURRENCY: '32',
  });
  children.add(relay.child);
  relay.child.once('exit', () => children.delete(relay.child));
  return relay;
}

const keyOf = (exchange: Exchange) => String(exchange.headers['x-key']);

describe('ordered delivery across relay processes', () => {
  it('two relays, each SIGKILLed once: every key\'s events first delivered in the order sent, all of them, never two of a key at once', { timeout: 120_000 }, async () => {
    const startedAt = Date.now();
    database = await freshDatabase();
    receiver = await startTimedReceiver(() => ({ status: Math.random() < FAILING ? 500 : 200, delayMs: 10 + Math.floor(Math.random() * 30) }));
    const [first, second] = await Promise.all([startRelay(database.url), startRelay(database.url)]);
    const relays = { a: first!, b: second! };
    const key = (await call(relays.a.baseUrl, 'POST', '/v1/accounts', '')).api_key as string;
    const endpoint = await call(relays.a.baseUrl, 'POST', '/v1/endpoints', key, { name: 'ordered', destination: { type: 'url', url: receiver.url } });
    const [destination] = (await call(relays.a.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/destinations`, key)).data;
    await call(relays.a.baseUrl, 'PATCH', `/v1/destinations/${destination.id}`, key, { ordering: { key: { header: 'x-key' }, on_give_up: 'block' } });
    const ingestPath = new URL(endpoint.url).pathname;
    const readyAtMs = Date.now();

    // Relays taking events now; a killed one leaves before it dies, a restarted one joins once it listens.
    const live = new Set<RelayProcess>([relays.a, relays.b]);
    let turn = 0;
    let sent = 0;
    let unanswered = 0;
    /** Sends one event to a live relay, again (elsewhere) until one acknowledges it; returns its id. */
    const ingest = async (orderKey: string, seq: number): Promise<string> => {
      for (;;) {
        const bases = [...live].map((relay) => relay.baseUrl);
        try {
          const response = await fetch(`${bases[turn++ % bases.length]}${ingestPath}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-key': orderKey },
            body: JSON.stringify({ key: orderKey, seq }),
          });
          if (response.status === 200) return ((await response.json()) as { id: string }).id;
          unanswered++;
        } catch {
          unanswered++; // in flight to the relay that was killed: perhaps stored, never acknowledged
        }
      }
    };

    const inFlight = () => receiver!.exchanges.filter((exchange) => exchange.endTick === null).length;
    const kills: { relay: string; atMs: number; inFlight: number }[] = [];
    const killAndRestart = async (name: 'a' | 'b') => {
      const victim = relays[name];
      live.delete(victim);
      const exited = new Promise((resolve) => victim.child.once('exit', resolve));
      kills.push({ relay: name, atMs: Date.now(), inFlight: inFlight() });
      victim.child.kill('SIGKILL');
      await exited;
      relays[name] = await startRelay(database!.url);
      live.add(relays[name]);
    };
    // b dies while events still arrive, a as soon as b is back: each while deliveries are at the receiver.
    // The senders hold the last third of the events until b is back, so that events still
    // arrive (and deliveries are at the receiver) when a dies, however slowly b restarts.
    const bIsBack = Promise.withResolvers<void>();
    const chaos = (async () => {
      await expect.poll(() => sent >= 200 && inFlight() >= 3, { timeout: 30_000, interval: 2 }).toBe(true);
      await killAndRestart('b');
      bIsBack.resolve();
      await expect.poll(() => inFlight() >= 2, { timeout: 30_000, interval: 2 }).toBe(true);
      await killAndRestart('a');
    })();
    chaos.catch(() => bIsBack.resolve()); // awaited below, once every event was sent

    // Each sender owns five keys and sends them round by round, each event acknowledged before the next.
    const acknowledged = new Map<string, string[]>();
    await Promise.all(Array.from({ length: SENDERS }, async (_, sender) => {
      const keys = Array.from({ length: KEYS / SENDERS }, (_, i) => `key-${sender + i * SENDERS}`);
      for (let seq = 0; seq < EVENTS_PER_KEY; seq++) {
        for (const orderKey of keys) {
          if (sent >= 400) await bIsBack.promise;
          const id = await ingest(orderKey, seq);
          acknowledged.set(orderKey, [...(acknowledged.get(orderKey) ?? []), id]);
          sent++;
        }
      }
    }));
    const sentAtMs = Date.now();
    const ids = new Set([...acknowledged.values()].flat());
    expect(ids.size).toBe(KEYS * EVENTS_PER_KEY);
    // The relay orders a key by event id (a ULID of the time it was received): sent one
    // after another, a key's events have increasing ids, whichever process took each.
    for (const [orderKey, sentIds] of acknowledged) expect(sentIds, orderKey).toEqual([...sentIds].sort());

    await chaos;
    await expect.poll(() => [...ids].filter((id) => !receiver!.exchanges.some((exchange) => exchange.eventId === id && succeeded(exchange))).length,
      { timeout: 60_000, interval: 50 }).toBe(0);
    const doneAtMs = Date.now();

    // Every key's acknowledged events, in the order of their first 2xx, are the order they were sent in.
    const orders = firstSuccessOrder(receiver.exchanges, keyOf);
    for (const [orderKey, sentIds] of acknowledged) {
      expect(orders.get(orderKey)!.filter((id) => ids.has(id)), orderKey).toEqual(sentIds);
    }

    // Nothing left open or blocked: a delivery sent again after a kill (its first 2xx never recorded) is done too.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const notDelivered = async () => (await client.query("select status, count(*)::int as n from delivery where status <> 'delivered' group by status")).rows;
      await expect.poll(notDelivered, { timeout: 20_000, interval: 100 }).toEqual([]);
      expect((await client.query('select count(*)::int as n from ordering_block')).rows).toEqual([{ n: 0 }]);
    } finally {
      await client.end();
    }

    // No two requests of one key were in flight together, re-sends included: two different
    // events never, and not one event twice either (a killed relay's requests end with its
    // sockets, and its deliveries are sent again only when their leases run out, 3 s later).
    const overlaps = overlappingExchanges(receiver.exchanges, keyOf);
    expect(overlaps.map(([a, b]) => `${keyOf(a)}: ${a.eventId} and ${b.eventId}`)).toEqual([]);

    const successes = receiver.exchanges.filter(succeeded);
    const duplicates = successes.length - new Set(successes.map((exchange) => exchange.eventId)).size;
    const unacknowledgedStored = new Set(successes.map((exchange) => exchange.eventId).filter((id) => !ids.has(id))).size;
    console.log([
      `ordered delivery across processes: ${ids.size} events acknowledged over ${KEYS} keys (${unanswered} sends unanswered and sent again,`,
      `${unacknowledgedStored} of those stored all the same and delivered too); ${receiver.exchanges.length} requests at the receiver,`,
      `${receiver.exchanges.filter((exchange) => !succeeded(exchange)).length} answered 500; ${duplicates} duplicate 2xx deliveries;`,
      `kills: ${kills.map((kill) => `${kill.relay} at +${kill.atMs - startedAt} ms with ${kill.inFlight} in flight`).join(', ')};`,
      `relays up at +${readyAtMs - startedAt} ms, all sent at +${sentAtMs - startedAt} ms, all delivered at +${doneAtMs - startedAt} ms; most in flight at once ${receiver.maxInFlight}`,
    ].join(' '));
    expect(kills).toHaveLength(2);
  });
});
