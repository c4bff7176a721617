import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newId, usageMonth } from '@hook/core';
import { addTransformationCpu, createOrm, EventWriter, readAccountUsage, recordTransformationThrottled, type InsertOutcome, type NewEvent, type Orm } from '../src/index.ts';
import type { TestDatabase } from '../src/testing.ts';
import { freshDatabase } from '@hook/test/database';
import { insertEndpoint } from './rows.ts';

let database: TestDatabase;
const orms: Orm[] = [];
let accountId: string;
let endpointId: string;

const sql = (text: string, params: unknown[] = []) => orms[0]!.em.fork().getConnection().execute(text, params);

beforeAll(async () => {
  database = await freshDatabase();
  // Separate ORMs have separate pools: their batches really are concurrent transactions.
  for (let i = 0; i < 4; i++) orms.push(await createOrm({ databaseUrl: database.url }));
});
afterAll(async () => {
  for (const orm of orms) await orm.close();
  await database.drop();
});
beforeEach(async () => {
  accountId = newId('account');
  endpointId = newId('endpoint');
  await sql('insert into account (id, plan, created_at) values (?, ?, now())', [accountId, 'free']);
  await insertEndpoint(sql, accountId, [{ type: 'cli' }], { id: endpointId });
});

function event(receivedAt = new Date()): NewEvent {
  return {
    id: newId('event'), accountId, endpointId, type: null, method: 'POST', path: '', query: '', headers: {},
    body: Buffer.from('{}'), contentType: 'application/json', size: 2, receivedAt, status: 'pending',
  };
}

async function setUsage(eventsAccepted: number, at = new Date()): Promise<void> {
  await sql(
    `insert into account_usage (account_id, month, events_accepted) values (?, ?, ?)
     on conflict (account_id, month) do update set events_accepted = excluded.events_accepted`,
    [accountId, usageMonth(at), eventsAccepted],
  );
}

const storedEvents = async () => Number((await sql('select count(*) as n from event where account_id = ?', [accountId]))[0]!.n);
const usage = () => readAccountUsage(orms[0]!.em.fork(), accountId, new Date());
const outbox = () => sql("select type, data from notification_outbox where account_id = ? order by id", [accountId]);

describe('metered ingest', () => {
  it('counts every stored event in the same statement', async () => {
    const writer = new EventWriter(orms[0]!);
    const outcomes = await Promise.all(Array.from({ length: 25 }, () => writer.write(event())));
    expect(outcomes.every((outcome) => outcome.stored)).toBe(true);
    expect((await usage()).eventsAccepted).toBe(25);
    expect(await storedEvents()).toBe(25);
  });

  it('accepts exactly the allowance when concurrent batches from separate connections race at the limit', async () => {
    await setUsage(9_990);
    const writers = orms.map((orm) => new EventWriter(orm));
    // 4 writers × 3 rounds × 5 events = 60 attempts for 10 places left.
    const outcomes: InsertOutcome[] = [];
    for (let round = 0; round < 3; round++) {
      outcomes.push(...await Promise.all(writers.flatMap((writer) => Array.from({ length: 5 }, () => writer.write(event())))));
    }
    expect(outcomes.filter((outcome) => outcome.stored)).toHaveLength(10);
    const refused = outcomes.filter((outcome) => !outcome.stored);
    expect(refused).toHaveLength(50);
    expect(refused[0]).toEqual({ stored: false, reason: 'quota_exceeded', plan: 'free', month: usageMonth(new Date()).slice(0, 7), eventsPerMonth: 10_000 });
    expect((await usage()).eventsAccepted).toBe(10_000);
    expect(await storedEvents()).toBe(10);
    // 100% crossed once; 80% was behind it before the race started.
    expect(await outbox()).toEqual([{ type: 'usage.threshold', data: { month: usageMonth(new Date()).slice(0, 7), threshold: 1, events_accepted: 10_000, events_per_month: 10_000 } }]);
  });

  it('keeps arrival order within a batch: the first events up to the allowance are the ones stored', async () => {
    await setUsage(9_998);
    const writer = new EventWriter(orms[0]!, { maxConcurrentBatches: 1 });
    const events = Array.from({ length: 5 }, () => event());
    const outcomes = await Promise.all(events.map((e) => writer.write(e)));
    expect(outcomes.map((outcome) => outcome.stored)).toEqual([true, true, false, false, false]);
  });

  it('writes the 80% threshold once, when the count crosses it', async () => {
    await setUsage(7_998);
    const writer = new EventWriter(orms[0]!);
    await Promise.all([writer.write(event()), writer.write(event())]); // 8,000: crosses
    await writer.write(event()); // 8,001: already past
    const rows = await outbox();
    expect(rows).toEqual([{ type: 'usage.threshold', data: { month: usageMonth(new Date()).slice(0, 7), threshold: 0.8, events_accepted: 8_000, events_per_month: 10_000 } }]);
  });

  it('lifts the limit the moment the plan changes, and counts without limit on enterprise', async () => {
    await setUsage(10_000);
    const writer = new EventWriter(orms[0]!);
    expect((await writer.write(event())).stored).toBe(false);
    await sql("update account set plan = 'pro' where id = ?", [accountId]);
    expect((await writer.write(event())).stored).toBe(true);
    await sql("update account set plan = 'enterprise' where id = ?", [accountId]);
    await setUsage(5_000_000);
    expect((await writer.write(event())).stored).toBe(true);
    expect((await usage()).eventsAccepted).toBe(5_000_001);
    expect(await outbox()).toEqual([]);
  });

  it('counts each event under the month it was received in (UTC)', async () => {
    const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 0, 23, 59, 59));
    await setUsage(10_000, lastMonth);
    const writer = new EventWriter(orms[0]!);
    const [old, current] = await Promise.all([writer.write(event(lastMonth)), writer.write(event())]);
    expect(old!.stored).toBe(false);
    expect(current!.stored).toBe(true);
    expect((await usage()).eventsAccepted).toBe(1);
  });

  it('makes a usage row that disappeared again rather than refusing or losing the event', async () => {
    const writer = new EventWriter(orms[0]!);
    await writer.write(event());
    await sql('delete from account_usage where account_id = ?', [accountId]);
    expect((await writer.write(event())).stored).toBe(true);
    expect((await usage()).eventsAccepted).toBe(1);
  });
});

describe('transformation CPU', () => {
  it('adds each flush to the month, and queues transformation.throttled once a month whatever the number of calls', async () => {
    const now = new Date();
    await addTransformationCpu(orms[0]!, new Map([[accountId, 120], ['acct_gone', 5]]), now);
    await addTransformationCpu(orms[1]!, new Map([[accountId, 30]]), now);
    expect((await readAccountUsage(orms[0]!.em.fork(), accountId, now)).transformationCpuMs).toBe(150);

    const calls = await Promise.all(orms.map((orm) => recordTransformationThrottled(orm, accountId, now)));
    expect(calls.filter(Boolean)).toHaveLength(1);
    expect(await recordTransformationThrottled(orms[0]!, accountId, now)).toBe(false);
    const queued = await sql(`select type, data from notification_outbox where account_id = ? and type = 'transformation.throttled'`, [accountId]);
    expect(queued).toEqual([{ type: 'transformation.throttled', data: { month: usageMonth(now).slice(0, 7), plan: 'free', cpu_ms_per_minute: 10_000, throttled_at: now.toISOString() } }]);
    // Next month it can be sent again.
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 2));
    expect(await recordTransformationThrottled(orms[0]!, accountId, nextMonth)).toBe(true);
  });
});
