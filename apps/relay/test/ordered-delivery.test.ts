/**
 * Ordered delivery (issue 31), against a real relay with its worker, a real PostgreSQL
 * and real HTTP receivers that record when each exchange began and ended
 * (test/support/timed-receiver.ts): within a key, one event at a time and in the order
 * received; a failing event holds its key's later events while other keys flow; a
 * give-up blocks its key (until a replay delivers it, or the key is unblocked) or is
 * skipped; keys from a header or a JSON field ("" when absent); ordering turned off
 * releases what waited; an unordered destination still delivers concurrently.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstSuccessOrder, overlappingExchanges, startTimedReceiver, succeeded, type Exchange, type ExchangeResponder, type TimedReceiver } from '@hook/test/timed-receiver';
import { api, createEndpoint, expectProblem, sendEvent, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

/** Nine attempts 40 ms apart: a failing event gives up within about half a second. */
const FAST_SCHEDULE = Array<number>(8).fill(40);

let relay: TestRelay;
let key: string;
const receivers: TimedReceiver[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: FAST_SCHEDULE, deliveryTimeoutMs: 2000 }, { workerPollMs: 20 });
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
});
afterAll(async () => {
  await relay.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

async function receiver(respond?: ExchangeResponder): Promise<TimedReceiver> {
  const started = await startTimedReceiver(respond);
  receivers.push(started);
  return started;
}

type Ordering = { key?: { header: string } | { json_field: string } | null; on_give_up?: 'block' | 'skip' } | null;

/** An endpoint whose one destination is `at`'s URL, ordered as `ordering` says. */
async function orderedEndpoint(at: TimedReceiver, ordering: Ordering): Promise<{ ingestUrl: string; destinationId: string }> {
  const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'ordered', destination: { type: 'url', url: at.url } });
  const [destination] = (await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/destinations`, { key })).body.data;
  const changed = await api(relay.baseUrl, 'PATCH', `/v1/destinations/${destination.id}`, { key, json: { ordering } });
  expect(changed.status, JSON.stringify(changed.body)).toBe(200);
  return { ingestUrl: endpoint.url, destinationId: destination.id };
}

/** Sends an event with ordering key `orderKey` in the x-key header (none: no header); returns its id. */
function sendKeyed(ingestUrl: string, orderKey: string | null, body: unknown = {}): Promise<string> {
  return sendEvent(ingestUrl, JSON.stringify(body), { 'content-type': 'application/json', ...(orderKey === null ? {} : { 'x-key': orderKey }) });
}

/** Sends events one after the other (each acknowledged before the next goes). */
async function sendInTurn(send: (() => Promise<string>)[]): Promise<string[]> {
  const ids: string[] = [];
  for (const next of send) ids.push(await next());
  return ids;
}

/** Columns of the deliveries of events `ids`, with their event_id. */
function deliveryRows(ids: string[], columns: string): Promise<any[]> {
  return sqlRows(relay, `select event_id, ${columns} from delivery where event_id in (${ids.map(() => '?').join(', ')}) order by event_id`, ids);
}

/** The `marker` field of a delivered JSON body (what a test's receiver answers by), or undefined. */
function markerOf(exchange: Exchange): unknown {
  try {
    return JSON.parse(exchange.body.toString()).marker;
  } catch {
    return undefined;
  }
}

async function statusOf(id: string): Promise<string> {
  return (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body.status;
}

async function blockedKeysOf(destinationId: string): Promise<any[]> {
  const listed = await api(relay.baseUrl, 'GET', `/v1/destinations/${destinationId}/blocked-keys`, { key });
  expect(listed.status).toBe(200);
  return listed.body.data;
}

const keyOf = (exchange: Exchange) => String(exchange.headers['x-key'] ?? '');
const exchangesOf = (at: TimedReceiver, id: string) => at.exchanges.filter((exchange) => exchange.eventId === id);
const delivered = (at: TimedReceiver, id: string) => exchangesOf(at, id).some(succeeded);
const firstSuccess = (at: TimedReceiver, id: string) => exchangesOf(at, id).find(succeeded);
const waitForDelivery = (at: TimedReceiver, ids: string[], timeout = 10_000) =>
  expect.poll(() => ids.filter((id) => !delivered(at, id)), { timeout, interval: 20 }).toEqual([]);

describe('ordered delivery', () => {
  it('one key: 30 events reach a slow receiver one at a time, in the order they were received', async () => {
    const at = await receiver(() => ({ status: 200, delayMs: 25 }));
    const { ingestUrl } = await orderedEndpoint(at, { key: null });
    const ids = await sendInTurn(Array.from({ length: 30 }, (_, n) => () => sendKeyed(ingestUrl, null, { n })));
    await waitForDelivery(at, ids);

    expect(firstSuccessOrder(at.exchanges, () => 'all').get('all')).toEqual(ids);
    expect(at.exchanges).toHaveLength(30); // each once
    expect(at.maxInFlight).toBe(1);
  });

  it('one key, 30 events sent at once: still one at a time, in the order ingest committed them (their ordering_seq)', async () => {
    const at = await receiver(() => ({ status: 200, delayMs: 15 }));
    const { ingestUrl } = await orderedEndpoint(at, { key: null });
    const ids = await Promise.all(Array.from({ length: 30 }, (_, n) => sendKeyed(ingestUrl, null, { n })));
    await waitForDelivery(at, ids);

    expect(at.maxInFlight).toBe(1);
    // Sent at once, the events have no order of their own: the relay's is the order their
    // statements committed in (concurrent batches may commit out of event id order).
    const committed = (await deliveryRows(ids, 'ordering_seq')).sort((a, b) => Number(a.ordering_seq) - Number(b.ordering_seq)).map((row) => row.event_id);
    expect(new Set((await deliveryRows(ids, 'ordering_seq')).map((row) => row.ordering_seq)).size).toBe(30);
    expect(firstSuccessOrder(at.exchanges, () => 'all').get('all')).toEqual(committed);
  });

  it('one key, bursts sent at once to two relay processes: never two in flight, in commit order', async () => {
    // The race of two ingests storing one key's events at once, each not seeing the other:
    // the key's numbers are taken under its row, which each holds until it commits.
    const second = await startTestRelay({ retryScheduleMs: FAST_SCHEDULE, deliveryTimeoutMs: 2000 }, { workerPollMs: 20, sharing: relay });
    try {
      const at = await receiver(() => ({ status: 200, delayMs: 2 }));
      const { ingestUrl } = await orderedEndpoint(at, { key: null });
      const viaSecond = ingestUrl.replace(relay.baseUrl, second.baseUrl);
      const ids: string[] = [];
      for (let burst = 0; burst < 25; burst++) {
        const sent = await Promise.all(Array.from({ length: 6 }, (_, n) => sendKeyed(n % 2 === 0 ? ingestUrl : viaSecond, null, { burst, n })));
        ids.push(...sent);
        await waitForDelivery(at, sent);
      }
      expect(overlappingExchanges(at.exchanges, () => 'all')).toEqual([]);
      expect(at.maxInFlight).toBe(1);
      const committed = (await deliveryRows(ids, 'ordering_seq')).sort((a, b) => Number(a.ordering_seq) - Number(b.ordering_seq)).map((row) => row.event_id);
      expect(firstSuccessOrder(at.exchanges, () => 'all').get('all')).toEqual(committed);
    } finally {
      await second.close();
    }
  });

  it('keyed by a header: a failing event holds the later events of its key while another key flows on', async () => {
    let bIds: string[] = [];
    // A's second event fails until every event of B was delivered, and at least twice; it
    // asks for its next try a second later (Retry-After), so its retries last while the test sends.
    const at = await receiver((exchange, earlier) => {
      if (markerOf(exchange) !== 'a2') return { status: 200, delayMs: 5 };
      const failures = earlier.filter((e) => e.eventId === exchange.eventId && !succeeded(e)).length;
      const bDone = bIds.length > 0 && bIds.every((id) => earlier.some((e) => e.eventId === id && succeeded(e) && e.endTick !== null));
      return failures >= 2 && bDone ? { status: 200 } : { status: 500, headers: { 'retry-after': '1' } };
    });
    const { ingestUrl } = await orderedEndpoint(at, { key: { header: 'x-key' } });
    const sent = await sendInTurn([1, 2, 3, 4, 5, 6].flatMap((n) => [
      () => sendKeyed(ingestUrl, 'a', { marker: `a${n}` }),
      () => sendKeyed(ingestUrl, 'b', { marker: `b${n}` }),
    ]));
    const aIds = sent.filter((_, i) => i % 2 === 0);
    const aSecond = aIds[1]!;
    bIds = sent.filter((_, i) => i % 2 === 1);
    await waitForDelivery(at, sent);

    const orders = firstSuccessOrder(at.exchanges, keyOf);
    expect(orders.get('a')).toEqual(aIds);
    expect(orders.get('b')).toEqual(bIds);
    const aSecondSuccess = firstSuccess(at, aSecond)!;
    expect(exchangesOf(at, aSecond).filter((e) => !succeeded(e)).length).toBeGreaterThanOrEqual(2);
    // A's later events were not sent before its second was delivered; B's were all delivered meanwhile.
    for (const id of aIds.slice(2)) expect(exchangesOf(at, id).every((e) => e.startTick > aSecondSuccess.endTick!)).toBe(true);
    for (const id of bIds) expect(firstSuccess(at, id)!.endTick!).toBeLessThan(aSecondSuccess.startTick);
    expect(overlappingExchanges(at.exchanges, keyOf)).toEqual([]);
  });

  it("on_give_up block: an event that gave up holds its key; replayed and delivered, the rest follow in order", async () => {
    let fixed = false;
    const at = await receiver((exchange) => ({ status: markerOf(exchange) === 'fails' && !fixed ? 500 : 200 }));
    const { ingestUrl, destinationId } = await orderedEndpoint(at, { key: { header: 'x-key' }, on_give_up: 'block' });
    const [k1, k2, ...later] = await sendInTurn([
      () => sendKeyed(ingestUrl, 'k'),
      () => sendKeyed(ingestUrl, 'k', { marker: 'fails' }),
      () => sendKeyed(ingestUrl, 'k'),
      () => sendKeyed(ingestUrl, 'k'),
    ]) as [string, string, ...string[]];

    await expect.poll(() => statusOf(k2), { timeout: 10_000, interval: 25 }).toBe('failed');
    await expect.poll(() => blockedKeysOf(destinationId), { timeout: 5000, interval: 25 })
      .toEqual([{ key: 'k', event_id: k2, blocked_at: expect.any(String), waiting: 2 }]);
    expect(exchangesOf(at, k2).length).toBe(FAST_SCHEDULE.length + 1);
    // Another key's event, sent after the block, is delivered; the blocked key's are not.
    const other = await sendKeyed(ingestUrl, 'other');
    await waitForDelivery(at, [other]);
    for (const id of later) {
      expect(exchangesOf(at, id)).toEqual([]);
      expect(await statusOf(id)).toBe('pending');
    }

    fixed = true;
    const replayed = await api(relay.baseUrl, 'POST', `/v1/events/replay/${k2}`, { key, json: {} });
    expect(replayed.status, JSON.stringify(replayed.body)).toBe(200);
    expect(replayed.body.replay).toEqual([{ destination_id: destinationId, outcome: 'attempted' }]);
    await waitForDelivery(at, later);
    expect(firstSuccessOrder(at.exchanges, keyOf).get('k')).toEqual([k1, k2, ...later]);
    expect(firstSuccess(at, later[0]!)!.startTick).toBeGreaterThan(firstSuccess(at, k2)!.endTick!);
    expect(await blockedKeysOf(destinationId)).toEqual([]);
    expect(overlappingExchanges(at.exchanges, keyOf)).toEqual([]);
  });

  it('on_give_up block: unblocking the key leaves its event failed and sends the next in order; a key not blocked is 404', async () => {
    const at = await receiver((exchange) => ({ status: markerOf(exchange) === 'fails' ? 500 : 200 }));
    const { ingestUrl, destinationId } = await orderedEndpoint(at, { key: { header: 'x-key' } }); // block is the default
    const failing = await sendKeyed(ingestUrl, 'u', { marker: 'fails' });
    const later = await sendInTurn([1, 2, 3].map(() => () => sendKeyed(ingestUrl, 'u')));
    await expect.poll(() => blockedKeysOf(destinationId), { timeout: 10_000, interval: 25 })
      .toEqual([{ key: 'u', event_id: failing, blocked_at: expect.any(String), waiting: 3 }]);
    const attemptsBefore = exchangesOf(at, failing).length;
    expect(later.flatMap((id) => exchangesOf(at, id))).toEqual([]);

    const unblocked = await api(relay.baseUrl, 'POST', `/v1/destinations/${destinationId}/unblock`, { key, json: { key: 'u' } });
    expect(unblocked.status, JSON.stringify(unblocked.body)).toBe(200);
    expect(unblocked.body.id).toBe(destinationId);
    await waitForDelivery(at, later);
    expect(firstSuccessOrder(at.exchanges, keyOf).get('u')).toEqual(later);
    expect(await statusOf(failing)).toBe('failed');
    expect(exchangesOf(at, failing)).toHaveLength(attemptsBefore); // not tried again
    expect(await blockedKeysOf(destinationId)).toEqual([]);
    expect(overlappingExchanges(at.exchanges, keyOf)).toEqual([]);

    const again = await api(relay.baseUrl, 'POST', `/v1/destinations/${destinationId}/unblock`, { key, json: { key: 'u' } });
    expectProblem(again, 404, 'key_not_blocked');
    expectProblem(await api(relay.baseUrl, 'POST', `/v1/destinations/${destinationId}/unblock`, { key, json: { key: 'never-seen' } }), 404, 'key_not_blocked');
  });

  it('on_give_up skip: an event that gave up is failed and the next of its key go on, in order', async () => {
    const at = await receiver((exchange) => ({ status: markerOf(exchange) === 'fails' ? 500 : 200 }));
    const { ingestUrl, destinationId } = await orderedEndpoint(at, { key: { header: 'x-key' }, on_give_up: 'skip' });
    const [s1, failing, ...later] = await sendInTurn([
      () => sendKeyed(ingestUrl, 's'),
      () => sendKeyed(ingestUrl, 's', { marker: 'fails' }),
      ...[1, 2, 3].map(() => () => sendKeyed(ingestUrl, 's')),
    ]) as [string, string, ...string[]];
    await waitForDelivery(at, later);

    expect(await statusOf(failing)).toBe('failed');
    const failures = exchangesOf(at, failing);
    expect(failures).toHaveLength(FAST_SCHEDULE.length + 1);
    expect(firstSuccessOrder(at.exchanges, keyOf).get('s')).toEqual([s1, ...later]);
    // Nothing of the key went while the failing event still had attempts to make.
    expect(firstSuccess(at, later[0]!)!.startTick).toBeGreaterThan(failures.at(-1)!.endTick!);
    expect(await blockedKeysOf(destinationId)).toEqual([]);
    expect(overlappingExchanges(at.exchanges, keyOf)).toEqual([]);
  });

  it('keyed by a JSON field: each value is a key, and events without it (or not JSON) share the key ""', async () => {
    let othersIds: string[] = [];
    // The first keyless event fails until every keyed one was delivered (at least twice).
    const at = await receiver((exchange, earlier) => {
      if (markerOf(exchange) !== 'held') return { status: 200, delayMs: 5 };
      const failures = earlier.filter((e) => e.eventId === exchange.eventId && !succeeded(e)).length;
      const othersDone = othersIds.length > 0 && othersIds.every((id) => earlier.some((e) => e.eventId === id && succeeded(e) && e.endTick !== null));
      return { status: failures >= 2 && othersDone ? 200 : 500 };
    });
    const { ingestUrl } = await orderedEndpoint(at, { key: { json_field: 'order.id' } });
    const sendBody = (body: string, contentType = 'application/json') => sendEvent(ingestUrl, body, { 'content-type': contentType });
    const held = await sendBody('{"order":{},"marker":"held"}');
    const sent = await sendInTurn([
      () => sendBody('{"order":{"id":"a"}}'),
      () => sendBody('{"order":{"id":"b"}}'),
      () => sendBody('{"other":1}'),
      () => sendBody('{"order":{"id":"a"},"n":2}'),
      () => sendBody('not json', 'text/plain'),
      () => sendBody('{"order":{"id":"b"},"n":2}'),
    ]);
    const [a1, b1, keyless2, a2, keyless3, b2] = sent as [string, string, string, string, string, string];
    othersIds = [a1, b1, a2, b2];
    await waitForDelivery(at, [held, ...sent]);

    const stored = await deliveryRows([held, ...sent], 'ordering_key');
    expect(Object.fromEntries(stored.map((row) => [row.event_id, row.ordering_key]))).toEqual({
      [held]: '', [a1]: 'a', [b1]: 'b', [keyless2]: '', [a2]: 'a', [keyless3]: '', [b2]: 'b',
    });
    const keyOfBody = (exchange: Exchange) => {
      try {
        return String(JSON.parse(exchange.body.toString()).order?.id ?? '');
      } catch {
        return '';
      }
    };
    const orders = firstSuccessOrder(at.exchanges, keyOfBody);
    expect(orders.get('a')).toEqual([a1, a2]);
    expect(orders.get('b')).toEqual([b1, b2]);
    expect(orders.get('')).toEqual([held, keyless2, keyless3]);
    // a and b flowed while "" waited behind its failing first event.
    for (const id of othersIds) expect(firstSuccess(at, id)!.endTick!).toBeLessThan(firstSuccess(at, held)!.startTick);
    expect(overlappingExchanges(at.exchanges, keyOfBody)).toEqual([]);
  });

  it('ordering turned off releases the deliveries that waited: they are delivered while the one before still fails', async () => {
    let fixed = false;
    // The head fails, asking for its next try a second later (Retry-After), so it keeps its retries through the test.
    const at = await receiver((exchange) => (markerOf(exchange) === 'head' && !fixed ? { status: 500, headers: { 'retry-after': '1' } } : { status: 200 }));
    const { ingestUrl, destinationId } = await orderedEndpoint(at, { key: null });
    const head = await sendKeyed(ingestUrl, null, { marker: 'head' });
    const later = await sendInTurn([1, 2, 3].map(() => () => sendKeyed(ingestUrl, null)));
    await expect.poll(() => exchangesOf(at, head).length, { timeout: 5000, interval: 20 }).toBeGreaterThanOrEqual(1);
    const parked = await deliveryRows(later, 'next_attempt_at');
    expect(parked.map((row) => row.next_attempt_at)).toEqual([null, null, null]);
    expect(later.flatMap((id) => exchangesOf(at, id))).toEqual([]);

    const changed = await api(relay.baseUrl, 'PATCH', `/v1/destinations/${destinationId}`, { key, json: { ordering: null } });
    expect(changed.status).toBe(200);
    expect(changed.body.ordering).toBeNull();
    await waitForDelivery(at, later);
    expect(delivered(at, head)).toBe(false); // still waiting for its next try
    fixed = true;
    await waitForDelivery(at, [head]);
    expect(await statusOf(head)).toBe('delivered');
  });

  it('a destination without ordering is unchanged: events go concurrently', async () => {
    const at = await receiver(() => ({ status: 200, delayMs: 150 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'unordered', destination: { type: 'url', url: at.url } });
    const [destination] = (await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/destinations`, { key })).body.data;
    expect(destination.ordering).toBeNull();
    const ids = await sendInTurn(Array.from({ length: 10 }, (_, n) => () => sendKeyed(endpoint.url, 'same', { n })));
    await waitForDelivery(at, ids);
    expect(at.maxInFlight).toBeGreaterThan(1);
    expect(overlappingExchanges(at.exchanges, keyOf).length).toBeGreaterThan(0);
    const stored = await deliveryRows(ids, 'ordering_key');
    expect(stored.every((row) => row.ordering_key === null)).toBe(true);
  });

  it('a cli destination takes no ordering: 400 validation_failed naming body.ordering', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'listened', destination: { type: 'cli' } });
    const [destination] = (await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/destinations`, { key })).body.data;
    const patched = await api(relay.baseUrl, 'PATCH', `/v1/destinations/${destination.id}`, { key, json: { ordering: { key: null } } });
    expect(expectProblem(patched, 400, 'validation_failed').errors).toEqual([{ field: 'body.ordering', message: expect.stringContaining('cli destination') }]);
    const added = await api(relay.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/destinations`, { key, json: { destination: { type: 'cli' }, ordering: { key: { header: 'x-key' } } } });
    expect(expectProblem(added, 400, 'validation_failed').errors).toEqual([{ field: 'body.ordering', message: expect.stringContaining('cli destination') }]);
    // ordering: null is no ordering, which a cli destination may say.
    expect((await api(relay.baseUrl, 'PATCH', `/v1/destinations/${destination.id}`, { key, json: { ordering: null } })).status).toBe(200);
  });
});
