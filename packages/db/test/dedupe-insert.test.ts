/**
 * insertEvents with dedupe keys (docs/sources.md, Duplicates), straight against
 * PostgreSQL: a key stored once per endpoint, whichever batch or connection stores it;
 * duplicates name the original and are neither stored nor counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstIdAt, newId } from '@hook/core';
import { createOrm, dropExpiredPartitions, insertEvents, type NewEvent, type Orm } from '../src/index.ts';
import type { TestDatabase } from '../src/testing.ts';
import { freshDatabase } from '@hook/test/database';
import { insertEndpoint } from './rows.ts';

let database: TestDatabase;
let orm: Orm;
const accountId = newId('account');
let endpointId: string;
let otherEndpointId: string;

async function sql(text: string, params: unknown[] = []): Promise<any[]> {
  return orm.em.fork().getConnection().execute(text, params);
}

beforeAll(async () => {
  database = await freshDatabase();
  orm = await createOrm({ databaseUrl: database.url, poolMax: 20 });
  await sql('insert into account (id, plan, created_at) values (?, ?, now())', [accountId, 'pro']);
  endpointId = (await insertEndpoint(sql, accountId)).endpointId;
  otherEndpointId = (await insertEndpoint(sql, accountId)).endpointId;
});
afterAll(async () => {
  await orm.close();
  await database.drop();
});

/** Events made so far: the random part of the next id, so ids sort in the order they were made. */
let made = 0;

function keyed(key: string | null, endpoint = endpointId, receivedAtMs = Date.now()): NewEvent {
  return {
    // an id of exactly this time that sorts after every one made before at that time (the
    // random part of a newId made a millisecond later can be smaller, which reordered two
    // events of one millisecond here)
    id: firstIdAt('event', receivedAtMs).slice(0, -16) + String(++made).padStart(16, '0'), accountId, endpointId: endpoint, type: null, method: 'POST', path: '', query: '', headers: { 'x-delivery': key ?? '' }, body: Buffer.from(key ?? 'none'),
    contentType: null, size: 1, receivedAt: new Date(receivedAtMs), status: 'pending', dedupeKey: key,
  };
}

describe('insertEvents with dedupe keys', () => {
  it('stores the first of each key in a batch and names it for the rest; other endpoints and keyless events are apart', async () => {
    const batch = [keyed('a'), keyed('b'), keyed('a'), keyed(null), keyed('a', otherEndpointId), keyed('b'), keyed(null)];
    const outcomes = await insertEvents(orm, batch);
    expect(outcomes.map((outcome) => (outcome.stored ? 'stored' : outcome.reason))).toEqual(['stored', 'stored', 'duplicate', 'stored', 'stored', 'duplicate', 'stored']);
    expect(outcomes[2]).toEqual({ stored: false, reason: 'duplicate', originalId: batch[0]!.id });
    expect(outcomes[5]).toEqual({ stored: false, reason: 'duplicate', originalId: batch[1]!.id });
    const again = await insertEvents(orm, [keyed('b'), keyed('c')]);
    expect(again[0]).toEqual({ stored: false, reason: 'duplicate', originalId: batch[1]!.id });
    expect(again[1]!.stored).toBe(true);
    const stored = await sql('select dedupe_key from event where account_id = ? order by id', [accountId]);
    expect(stored.map((row) => row.dedupe_key)).toEqual(['a', 'b', null, 'a', null, 'c']);
    const [usage] = await sql('select sum(events_accepted)::int as n from account_usage where account_id = ?', [accountId]);
    expect(usage.n).toBe(6);
  });

  it('many batches on many connections at once store each key once', async () => {
    const keys = Array.from({ length: 5 }, (_, i) => `race-${i}`);
    const batches = Array.from({ length: 16 }, (_, b) => keys.map((key, k) => keyed(keys[(k + b) % keys.length]!)));
    const outcomes = (await Promise.all(batches.map((batch) => insertEvents(orm, batch)))).flat();
    const stored = outcomes.filter((outcome) => outcome.stored);
    expect(stored).toHaveLength(keys.length);
    const rows = await sql('select id, dedupe_key from event where dedupe_key like ?', ['race-%']);
    expect(rows.map((row) => row.dedupe_key).sort()).toEqual(keys);
    const ids = new Set(rows.map((row) => row.id));
    for (const outcome of outcomes) if (!outcome.stored && outcome.reason === 'duplicate') expect(ids.has(outcome.originalId)).toBe(true);
  });

  it('distributed (one statement per account, its lookup pinned to it): many batches at once store each key once, and a later copy finds it', async () => {
    const keys = Array.from({ length: 5 }, (_, i) => `pinned-${i}`);
    const batches = Array.from({ length: 16 }, (_, b) => keys.map((key, k) => keyed(keys[(k + b) % keys.length]!)));
    const outcomes = (await Promise.all(batches.map((batch) => insertEvents(orm, batch, new Set(), { distributed: true })))).flat();
    expect(outcomes.filter((outcome) => outcome.stored)).toHaveLength(keys.length);
    const rows = await sql('select id, dedupe_key from event where dedupe_key like ?', ['pinned-%']);
    expect(rows.map((row) => row.dedupe_key).sort()).toEqual(keys);
    const again = await insertEvents(orm, [keyed('pinned-0')], new Set(), { distributed: true });
    expect(again).toEqual([{ stored: false, reason: 'duplicate', originalId: rows.find((row) => row.dedupe_key === 'pinned-0')!.id }]);
  });

  it('copies either side of a partition boundary (two partitions, no shared index) at once: each key stored once', async () => {
    // the next period of the account's class (pro: 90 days, 3-day periods; partitions.ts) begins at `boundary`
    const day = Math.floor(Date.now() / 86_400_000);
    const boundary = (day - (day % 3) + 3) * 86_400_000;
    const keys = Array.from({ length: 12 }, (_, i) => `edge-${i}`);
    const batches = keys.flatMap((key) => [[keyed(key, endpointId, boundary - 1)], [keyed(key, endpointId, boundary + 1)]]);
    const outcomes = (await Promise.all(batches.map((batch) => insertEvents(orm, batch)))).flat();
    expect(outcomes.filter((outcome) => outcome.stored)).toHaveLength(keys.length);
    const rows = await sql(`select dedupe_key, tableoid::regclass::text as leaf from event where dedupe_key like 'edge-%'`);
    expect(rows.map((row) => row.dedupe_key).sort()).toEqual([...keys].sort());
    // the two receive times are stored in two partitions
    const [before, after] = [keyed(null, endpointId, boundary - 1), keyed(null, endpointId, boundary + 1)];
    await insertEvents(orm, [before, after]);
    const leaves = await sql('select tableoid::regclass::text as leaf from event where id in (?, ?)', [before.id, after.id]);
    expect(new Set(leaves.map((row) => row.leaf)).size).toBe(2);
  });

  it('a key whose event is gone (a removal that left the key behind) is taken over by the next copy, and held again', async () => {
    const [first] = [keyed('orphan')];
    await insertEvents(orm, [first!]);
    await sql('delete from event where id = ?', [first!.id]);
    expect(await sql('select event_id from event_dedupe_key where endpoint_id = ? and dedupe_key = ?', [endpointId, 'orphan'])).toEqual([{ event_id: first!.id }]);
    const second = keyed('orphan');
    expect(await insertEvents(orm, [second])).toEqual([{ stored: true, delivery: null }]);
    expect(await sql('select event_id from event_dedupe_key where endpoint_id = ? and dedupe_key = ?', [endpointId, 'orphan'])).toEqual([{ event_id: second.id }]);
    expect(await insertEvents(orm, [keyed('orphan')])).toEqual([{ stored: false, reason: 'duplicate', originalId: second.id }]);
  });

  it("a previous-version relay's statement (022 redefines the function it calls) and this version's see each other's keys", async () => {
    // the previous release's insert, reduced to its dedupe: stored only when hook_dedupe_original names no holder
    const previousRelease = async (event: NewEvent): Promise<boolean> => (await sql(`
      insert into event (id, account_id, endpoint_id, method, path, query, headers, body, size, received_at, delivery_count, dedupe_key, retention_class)
      select ?, ?, ?, 'POST', '', '', '{}'::jsonb, ?, 1, ?, 0, ?::text, 90
      where hook_dedupe_original(?, ?, ?) is null
      on conflict do nothing returning id`,
    [event.id, accountId, event.endpointId, event.body, event.receivedAt, event.dedupeKey, event.endpointId, event.dedupeKey, firstIdAt('event', 0)])).length === 1;
    const old = keyed('old-first');
    expect(await previousRelease(old)).toBe(true);
    expect(await insertEvents(orm, [keyed('old-first')])).toEqual([{ stored: false, reason: 'duplicate', originalId: old.id }]);
    const current = keyed('current-first');
    await insertEvents(orm, [current]);
    expect(await previousRelease(keyed('current-first'))).toBe(false);
    const rows = await sql(`select dedupe_key, count(*)::int as n from event where dedupe_key in ('old-first', 'current-first') group by dedupe_key order by 1`);
    expect(rows).toEqual([{ dedupe_key: 'current-first', n: 1 }, { dedupe_key: 'old-first', n: 1 }]);
  });

  it('a partition dropped by retention takes its events\' keys along', async () => {
    const keysBefore = await sql('select count(*)::int as n from event_dedupe_key where endpoint_id in (?, ?)', [endpointId, otherEndpointId]);
    expect(keysBefore[0].n).toBeGreaterThan(0);
    // every partition of the account's class is past its retention a year from now
    const dropped = await dropExpiredPartitions(orm, { now: new Date(Date.now() + 365 * 86_400_000) });
    expect(dropped.leaves).toBeGreaterThan(0);
    expect(await sql('select count(*)::int as n from event where account_id = ?', [accountId])).toEqual([{ n: 0 }]);
    // (a previous-version relay's claim, the test above's, names no event: it stays, free)
    expect(await sql('select count(*)::int as n from event_dedupe_key where endpoint_id in (?, ?) and event_id is not null', [endpointId, otherEndpointId])).toEqual([{ n: 0 }]);
  });
});
