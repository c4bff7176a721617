/**
 * Retention by partition (docs/retention.md#partitions) against a real relay, worker,
 * receiver and PostgreSQL: an event is stored with its delivery (once done) and attempts in
 * its account's retention class, kept for the whole retention and removed by dropping its
 * partitions (no row deleted one by one) at most one period after; an upgrade moves what it lengthens;
 * a downgrade keeps what was promised; a missing partition never fails ingest.
 *
 * The pruning clock is moved on from the event's own partition, whose bounds the test reads
 * from its name, so it holds whatever the time of day.
 */
import { describe, expect, it } from 'vitest';
import { historyLeaves, pruneExpiredEvents } from '@hook/db';
import { api, createEndpoint, sendEvent, signUp, sqlRows, type TestRelay, useRelayWithReceiver } from '@hook/test/relay';
import type { Receiver } from '@hook/test/receiver';

const DAY_MS = 86_400_000;

let relay: TestRelay;
let receiver: Receiver;
useRelayWithReceiver((started) => ({ relay, receiver } = started));

/** A new account on `plan` with an endpoint delivering to the receiver; returns its key and ingest URL. */
async function account(plan: 'free' | 'pro' | 'enterprise' = 'free') {
  const { key, accountId } = await signUp(relay.baseUrl, { plan: plan === 'enterprise' ? 'free' : plan });
  if (plan === 'enterprise') await sqlRows(relay, `update account set plan = 'enterprise' where id = ?`, [accountId]);
  const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'kept', destination: { type: 'url', url: `${receiver.url}/kept` } });
  return { key, accountId, url: endpoint.url as string };
}

/** Sends an event and waits until its attempt is recorded, so it has a row in each of the three tables. */
async function delivered(url: string): Promise<string> {
  const id = await sendEvent(url, JSON.stringify({ at: Date.now() }));
  await expect.poll(async () => (await sqlRows(relay, 'select count(*)::int as n from attempt where event_id = ?', [id]))[0].n).toBe(1);
  return id;
}

/** The leaf each table holds the event's rows in (null: no row). */
async function leavesOf(eventId: string): Promise<{ event: string | null; delivery: string | null; attempt: string | null }> {
  const [row] = await sqlRows(relay, `
    select (select tableoid::regclass::text from event where id = ?) as event,
           (select tableoid::regclass::text from delivery where event_id = ? limit 1) as delivery,
           (select tableoid::regclass::text from attempt where event_id = ? limit 1) as attempt`, [eventId, eventId, eventId]);
  return row;
}

/** When the event's partition's period ends (from the partition's name). */
async function periodEndOf(eventId: string): Promise<number> {
  const { event } = await leavesOf(eventId);
  const leaf = (await historyLeaves(relay.orm.em.fork())).find((candidate) => candidate.eventLeaf === event);
  if (!leaf) throw new Error(`event ${eventId} is in ${event}, not a partition of a class`);
  return leaf.endMs;
}

const pruneAt = (nowMs: number) => pruneExpiredEvents(relay.orm, { now: new Date(nowMs), pauseMs: 0 });
const exists = async (table: string) => (await sqlRows(relay, 'select to_regclass(?) is not null as exists', [table]))[0].exists as boolean;

describe('retention by partition', () => {
  it('free: the event, its delivery and its attempt share a class 7 period, kept 7 days, then dropped whole with no row deleted one by one', async () => {
    const free = await account('free');
    const receivedAt = Date.now();
    const id = await delivered(free.url);
    const leaves = await leavesOf(id);
    expect(leaves.event).toMatch(/^event_r7_\d{8}$/);
    expect(leaves.delivery).toBe(leaves.event!.replace('event', 'delivery')); // done: out of the queue (delivery_open)
    expect(leaves.attempt).toBe(leaves.event!.replace('event', 'attempt'));
    const end = await periodEndOf(id);

    // 7 days after it was received, and up to the end of its period + 7 days, it is kept
    await pruneAt(receivedAt + 7 * DAY_MS);
    await pruneAt(end + 7 * DAY_MS - 1);
    expect((await leavesOf(id)).event).toBe(leaves.event);

    const result = await pruneAt(end + 7 * DAY_MS);
    expect(result.partitionsDropped).toBeGreaterThanOrEqual(1);
    expect(result.events).toBe(0); // nothing removed row by row
    expect(await leavesOf(id)).toEqual({ event: null, delivery: null, attempt: null });
    for (const leaf of [leaves.event, leaves.delivery, leaves.attempt]) expect(await exists(leaf!)).toBe(false);
    // the event is gone from the API too
    expect((await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key: free.key })).status).toBe(404);
  });

  it('pro: class 90, kept 90 days, gone one period later', async () => {
    const pro = await account('pro');
    const receivedAt = Date.now();
    const id = await delivered(pro.url);
    expect((await leavesOf(id)).event).toMatch(/^event_r90_\d{8}$/);
    const end = await periodEndOf(id);
    expect(end - receivedAt).toBeLessThanOrEqual(3 * DAY_MS); // a class 90 period spans 3 days
    await pruneAt(receivedAt + 90 * DAY_MS);
    expect((await leavesOf(id)).event).toMatch(/^event_r90_/);
    await pruneAt(end + 90 * DAY_MS);
    expect(await leavesOf(id)).toEqual({ event: null, delivery: null, attempt: null });
  });

  it('upgrade free → pro: the event received under free is moved to class 90 when its partition expires, and kept 90 days', async () => {
    const upgraded = await account('free');
    const receivedAt = Date.now();
    const id = await delivered(upgraded.url);
    const end = await periodEndOf(id);
    expect((await api(relay.baseUrl, 'POST', '/v1/account/plan', { key: upgraded.key, json: { plan: 'pro' } })).status).toBe(200);

    const result = await pruneAt(end + 7 * DAY_MS);
    expect(result.eventsMoved).toBeGreaterThanOrEqual(1);
    const moved = await leavesOf(id);
    expect(moved.event).toMatch(/^event_r90_\d{8}$/);
    expect(moved.delivery).toBe(moved.event!.replace('event', 'delivery'));
    expect(moved.attempt).toBe(moved.event!.replace('event', 'attempt'));
    expect((await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key: upgraded.key })).body.attempt_count).toBe(1);

    await pruneAt(receivedAt + 90 * DAY_MS);
    expect((await leavesOf(id)).event).toBe(moved.event);
    await pruneAt(receivedAt + 94 * DAY_MS);
    expect((await leavesOf(id)).event).toBeNull();
  });

  it('downgrade pro → free: what was received under pro keeps 90 days; what comes after goes after 7', async () => {
    const downgraded = await account('pro');
    const underPro = await delivered(downgraded.url);
    expect((await api(relay.baseUrl, 'POST', '/v1/account/plan', { key: downgraded.key, json: { plan: 'free' } })).status).toBe(200);
    const underFree = await delivered(downgraded.url);
    expect((await leavesOf(underPro)).event).toMatch(/^event_r90_/);
    expect((await leavesOf(underFree)).event).toMatch(/^event_r7_/);
    await pruneAt(await periodEndOf(underFree) + 7 * DAY_MS);
    expect((await leavesOf(underFree)).event).toBeNull();
    expect((await leavesOf(underPro)).event).toMatch(/^event_r90_/);
  });

  it('a class with no partition yet (an enterprise retention of 45 days) never fails ingest: the partition is made on the spot and counted', async () => {
    const enterprise = await account('enterprise');
    await sqlRows(relay, 'update account set retention_days = 45 where id = ?', [enterprise.accountId]);
    const before = await missingPartitionCount();
    const id = await delivered(enterprise.url);
    expect((await leavesOf(id)).event).toMatch(/^event_r45_\d{8}$/);
    expect(await missingPartitionCount()).toBeGreaterThan(before);
  });

  it('an account that sets a retention of its own gets its partitions at once: its next event needs none made on the spot', async () => {
    const enterprise = await account('enterprise');
    const changed = await api(relay.baseUrl, 'PATCH', '/v1/account', { key: enterprise.key, json: { retention_days: 60 } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    const before = await missingPartitionCount();
    const id = await delivered(enterprise.url);
    expect((await leavesOf(id)).event).toMatch(/^event_r60_\d{8}$/);
    expect(await missingPartitionCount()).toBe(before);
  });
});

async function missingPartitionCount(): Promise<number> {
  const text = await (await fetch(`${relay.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith('hook_history_partitions_missing_total '));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}
