import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstIdAt, type IdKind, type Plan } from '@hook/core';
import { pruneExpiredEvents, type PruneOptions } from '@hook/db';
import { startRetention } from '../src/jobs/retention.ts';
import { createEndpoint, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

let relay: TestRelay;
/** The real time the file started: events are received shortly before it and the pruning clock is moved on from it. */
let t0: number;

beforeAll(async () => {
  relay = await startTestRelay();
  t0 = Date.now();
});
afterAll(async () => relay.close());

let sequence = 0;
/**
 * An id of `kind` whose time part is exactly `timeMs` (newId never goes back in time
 * within a process, so it cannot make ids for the past after making one for now).
 */
function idAt(kind: IdKind, timeMs: number): string {
  return firstIdAt(kind, timeMs).slice(0, -16) + String(++sequence).padStart(16, '0');
}

interface TestAccount {
  accountId: string;
  endpointId: string;
}

/** A new account put on `plan` (and its own retention), with an endpoint. */
async function account(plan: Plan = 'free', retentionDays: number | null = null): Promise<TestAccount> {
  const { key, accountId } = await signUp(relay.baseUrl);
  const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'retention' });
  await sqlRows(relay, 'update account set plan = ?, retention_days = ? where id = ?', [plan, retentionDays, accountId]);
  return { accountId, endpointId: endpoint.id };
}

/** Records a plan change at `atMs` and puts the account on `to`. */
async function changePlan({ accountId }: TestAccount, from: Plan, to: Plan, atMs: number): Promise<void> {
  await sqlRows(relay, 'insert into plan_change (id, account_id, from_plan, to_plan, changed_at) values (?, ?, ?, ?, ?)', [
    idAt('planChange', atMs), accountId, from, to, new Date(atMs),
  ]);
  await sqlRows(relay, 'update account set plan = ? where id = ?', [to, accountId]);
}

/** Stores an event received at `receivedAtMs` (its id carries the same time unless `idTimeMs` says otherwise) with `attempts` attempts. */
async function storeEvent({ accountId, endpointId }: TestAccount, receivedAtMs: number, { attempts = 0, idTimeMs = receivedAtMs } = {}): Promise<string> {
  const id = idAt('event', idTimeMs);
  await sqlRows(relay, `insert into event (id, account_id, endpoint_id, method, path, query, headers, body, size, received_at)
                        values (?, ?, ?, 'POST', '', '', '{}', ?, 2, ?)`, [id, accountId, endpointId, Buffer.from('{}'), new Date(receivedAtMs)]);
  await sqlRows(relay, `insert into delivery (event_id, destination_id, account_id, endpoint_id, status, attempt_count)
                        values (?, ?, ?, ?, 'delivered', ?)`, [id, `dst_${endpointId.slice(3)}`, accountId, endpointId, attempts]);
  for (let n = 1; n <= attempts; n++) {
    await sqlRows(relay, `insert into attempt (id, event_id, account_id, n, trigger, started_at, duration_ms, response_status)
                          values (?, ?, ?, ?, 'auto', ?, 5, 500)`, [idAt('attempt', receivedAtMs + n), id, accountId, n, new Date(receivedAtMs + n)]);
  }
  return id;
}

async function eventIds({ accountId }: TestAccount): Promise<string[]> {
  return (await sqlRows(relay, 'select id from event where account_id = ? order by id', [accountId])).map((row) => row.id);
}

/** One pass with the clock at `t0 + days`. */
async function pruneAt(days: number, options: Omit<PruneOptions, 'now'> = {}) {
  return pruneExpiredEvents(relay.orm, { pauseMs: 0, ...options, now: new Date(t0 + days * DAY_MS) });
}

describe('retention on the free plan (7 days)', () => {
  it('removes events older than 7 days and keeps younger ones, with the clock moved on', async () => {
    const free = await account('free');
    const old = await storeEvent(free, t0 - 2 * HOUR_MS);
    const young = await storeEvent(free, t0 - 10 * 60_000);
    await pruneAt(6);
    expect(await eventIds(free)).toEqual([old, young]);
    // 7 days and 1 hour after `old`, 6 days 23 hours 10 minutes after `young`.
    const result = await pruneAt(7 - 1 / 24);
    expect(await eventIds(free)).toEqual([young]);
    expect(result.events).toBeGreaterThanOrEqual(1);
  });

  it('removes the attempts and deliveries of the events it removes, and only those', async () => {
    const free = await account('free');
    const old = await storeEvent(free, t0 - HOUR_MS, { attempts: 3 });
    const young = await storeEvent(free, t0, { attempts: 2 });
    await pruneAt(7 - 0.5 / 24);
    expect(await eventIds(free)).toEqual([young]);
    expect(await sqlRows(relay, 'select event_id, count(*)::int as n from attempt where event_id in (?, ?) group by event_id', [old, young])).toEqual([{ event_id: young, n: 2 }]);
    expect(await sqlRows(relay, 'select event_id from delivery where event_id in (?, ?)', [old, young])).toEqual([{ event_id: young }]);
  });

  it('never removes an event received within its retention, even when its id says it is older', async () => {
    const free = await account('free');
    const skewed = await storeEvent(free, t0 - HOUR_MS, { idTimeMs: t0 - 30 * DAY_MS });
    await pruneAt(1);
    expect(await eventIds(free)).toEqual([skewed]);
    await pruneAt(7);
    expect(await eventIds(free)).toEqual([]);
  });

  it("leaves other accounts' events alone", async () => {
    const pruned = await account('free');
    const other = await account('free');
    await storeEvent(pruned, t0 - 2 * DAY_MS);
    const otherEvent = await storeEvent(other, t0);
    await pruneAt(6.5);
    expect(await eventIds(pruned)).toEqual([]);
    expect(await eventIds(other)).toEqual([otherEvent]);
  });
});

describe('retention on other plans', () => {
  it('keeps pro events 30 days old and removes them after 90 days', async () => {
    const pro = await account('pro');
    const event = await storeEvent(pro, t0 - HOUR_MS, { attempts: 1 });
    await pruneAt(30);
    expect(await eventIds(pro)).toEqual([event]);
    await pruneAt(89.9);
    expect(await eventIds(pro)).toEqual([event]);
    await pruneAt(90);
    expect(await eventIds(pro)).toEqual([]);
    expect(await sqlRows(relay, 'select id from attempt where event_id = ?', [event])).toEqual([]);
  });

  it("honours an enterprise account's own retention_days, shorter or longer than the plan's 365", async () => {
    const short = await account('enterprise', 30);
    const long = await account('enterprise', 500);
    const shortEvent = await storeEvent(short, t0 - HOUR_MS);
    const longEvent = await storeEvent(long, t0 - HOUR_MS);
    await pruneAt(29.9);
    expect(await eventIds(short)).toEqual([shortEvent]);
    await pruneAt(30);
    expect(await eventIds(short)).toEqual([]);
    await pruneAt(400);
    expect(await eventIds(long)).toEqual([longEvent]);
    await pruneAt(500);
    expect(await eventIds(long)).toEqual([]);
  });
});

describe('plan changes change retention going forward', () => {
  it('downgrade pro → free: events received under pro keep 90 days, events received under free go after 7', async () => {
    const account_ = await account('free');
    const beforePro = await storeEvent(account_, t0 - 5 * HOUR_MS);
    await changePlan(account_, 'free', 'pro', t0 - 4 * HOUR_MS);
    const underPro = await storeEvent(account_, t0 - 3 * HOUR_MS, { attempts: 1 });
    await changePlan(account_, 'pro', 'free', t0 - 2 * HOUR_MS);
    const underFree = await storeEvent(account_, t0 - HOUR_MS);
    await pruneAt(6.5);
    expect(await eventIds(account_)).toEqual([beforePro, underPro, underFree]);
    await pruneAt(8);
    expect(await eventIds(account_)).toEqual([underPro]);
    await pruneAt(89.8);
    expect(await eventIds(account_)).toEqual([underPro]);
    await pruneAt(90);
    expect(await eventIds(account_)).toEqual([]);
  });

  it('upgrade free → pro lengthens the retention of events already received', async () => {
    const account_ = await account('free');
    const underFree = await storeEvent(account_, t0 - 2 * HOUR_MS);
    await changePlan(account_, 'free', 'pro', t0 - HOUR_MS);
    const underPro = await storeEvent(account_, t0 - 30 * 60_000);
    await pruneAt(30);
    expect(await eventIds(account_)).toEqual([underFree, underPro]);
    await pruneAt(90);
    expect(await eventIds(account_)).toEqual([]);
  });

  it('enterprise → free keeps the events received under enterprise for its retention', async () => {
    const account_ = await account('enterprise', 200);
    const underEnterprise = await storeEvent(account_, t0 - 2 * HOUR_MS);
    await changePlan(account_, 'enterprise', 'free', t0 - HOUR_MS);
    await storeEvent(account_, t0 - 30 * 60_000);
    await pruneAt(150);
    expect(await eventIds(account_)).toEqual([underEnterprise]);
    await pruneAt(200);
    expect(await eventIds(account_)).toEqual([]);
  });
});

describe('batches', () => {
  it('removes 35 expired events 10 at a time, in several statements', async () => {
    const free = await account('free');
    for (let i = 0; i < 35; i++) await storeEvent(free, t0 - 3 * HOUR_MS + i * 1000, { attempts: i % 3 });
    const young = await storeEvent(free, t0);
    const result = await pruneAt(7, { batchSize: 10 });
    expect(result.statements).toBeGreaterThanOrEqual(4);
    expect(result.events).toBe(35);
    expect(await eventIds(free)).toEqual([young]);
  });

  it('two passes at once (two relay processes) share the work and remove each event once', async () => {
    const free = await account('free');
    for (let i = 0; i < 60; i++) await storeEvent(free, t0 - 3 * HOUR_MS + i * 1000, { attempts: 1 });
    const [a, b] = await Promise.all([pruneAt(7, { batchSize: 5 }), pruneAt(7, { batchSize: 5 })]);
    expect(await eventIds(free)).toEqual([]);
    expect(a.events + b.events).toBe(60);
  });
});

describe('the retention job', () => {
  it('prunes at start against its clock, and stops', async () => {
    const free = await account('free');
    const old = await storeEvent(free, t0 - HOUR_MS);
    const passes: number[] = [];
    const stop = startRetention({ orm: relay.orm, intervalMs: 60_000, now: () => new Date(t0 + 8 * DAY_MS), pauseMs: 0, onPass: (result) => passes.push(result.events) });
    await expect.poll(() => passes.length).toBe(1);
    await stop();
    expect(passes[0]).toBeGreaterThanOrEqual(1);
    expect(await eventIds(free)).not.toContain(old);
  });
});
