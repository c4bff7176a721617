/**
 * The online upgrades of history, one after the other on one database, each while the
 * release before it keeps storing events on three connections and a slow read holds the
 * table being swapped (as a list, search or export may when the new relay starts).
 *
 * Migration 019-partitioned-history, on a database the previous release filled
 * (migrations up to 018, a history written straight into its unpartitioned tables:
 * test/support/legacy-history.ts), under that release's ingest (legacyIngest), a read
 * holding `event`:
 * - nothing is copied: `event` and `attempt` are partitioned and the old tables are their
 *   class 0 partitions as they were (same oid, same file), their indexes attached to the
 *   parents' (same oid, same file); `delivery` (the queue, not partitioned) is the same
 *   table with the class column;
 * - nothing is lost: every row written before is there unchanged (ids, bodies,
 *   deliveries, attempts), and every event committed during the migration too;
 * - ingest never waited long: no ingest statement failed, and none waited 2 s, although
 *   the read held `event` for 4 s (a lock the migration queued for without a timeout held
 *   ingest up behind it as long: 3.9 s; with 019's short lock timeouts the waits are
 *   about 0.2 s at most);
 * - the retention pass still removes class 0's expired rows one by one, and the current
 *   ingest (insertEvents) stores into each account's class partitions.
 *
 * Then 020-list-indexes and 021-partitioned-deliveries (orm.migrator.up()) on that
 * database, under the ingest of the release before 021: insertEvents, which 021 left as it
 * was since 019 (it names no `layout`), on an ORM of its own whose connections prepared its
 * statements before the migrations began; a read holds `delivery` from the moment 021
 * starts (020's concurrent index builds would wait out a read started earlier):
 * - nothing is copied: `delivery` is partitioned, delivery_r0 is the old table (same oid,
 *   same file) with its indexes (same oids and files, renamed delivery_r0_…);
 * - nothing is lost: every delivery row from before is there unchanged but for `layout`,
 *   the old table's open ones (pending, retrying, a replay asked) in delivery_open and none
 *   left in delivery_r0; every event stored during the migration has its delivery, in
 *   delivery_open, of its class; a delivery leaf stands beside every event leaf;
 * - ingest never failed and no statement waited LONGEST_INGEST_MS, although the migration
 *   waited for the read;
 * - afterwards the queue works on the tree: new deliveries go to delivery_open; claimed and
 *   recorded, each moves to its history leaf (delivery_r<class>_YYYYMMDD, class 0's to
 *   delivery_done_r0); a replay of a done delivery in delivery_r0 moves it to the queue
 *   (layout 1), claimed; the class 0 pass removes an expired free event's deliveries
 *   wherever they are (delivery_r0, delivery_open, delivery_done_r0).
 * `npm run bench:upgrade` measures the same at 1 M events.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { firstIdAt, newId } from '@hook/core';
import {
  claimDue, createOrm, insertEvents, pruneExpiredEvents, recordResults, replayEvent, type ClaimedDelivery, type NewEvent, type Orm, type RecordInput,
} from '../src/index.ts';
import { adminQuery, withDatabase } from '../src/testing.ts';
import { DELIVERY_OPTIONS_COLUMNS } from '../src/migrations/023-delivery-options.ts';
import { ATTEMPT_COLUMNS, ISSUES_TABLES } from '../src/migrations/025-issues.ts';
import { createLegacyAccounts, fillLegacyHistory, legacyIngest, PREVIOUS_RELEASE_MIGRATION, type LegacyAccount } from '@hook/test/legacy-history';

const EVENTS = 20_000;
const DAY_MS = 86_400_000;
const INGEST_CONNECTIONS = 3;
/** How long the slow read holds `event` (019), then `delivery` (021), while the migration starts. */
const SLOW_READ_S = 4;
/** The longest an ingest statement may take during the migration: well below the read, with room for a loaded machine. */
const LONGEST_INGEST_MS = 2000;
const TABLES = ['event', 'delivery', 'attempt'] as const;
/** Where each table's rows from before the migration are after it: `delivery` stays one table. */
const LEGACY = ['event_r0', 'delivery', 'attempt_r0'] as const;
/** A delivery waiting for an attempt: the rows 021 moves from the old table to delivery_open. */
const OPEN = `(status in ('pending', 'retrying') or next_trigger = 'replay')`;
/** How many of the old table's done deliveries the previous release was asked to replay (none in the legacy history). */
const REPLAYS_ASKED = 5;

const serverUrl = inject('databaseServerUrl');
const name = `hook_upgrade_${randomBytes(6).toString('hex')}`;
const url = withDatabase(serverUrl, name);
let orm: Orm | undefined;
let ingestOrm: Orm | undefined;
const clients: pg.Client[] = [];
/** What the first test leaves for the second: the database at 019, its accounts and the time its history was written up to. */
let at019: { accounts: LegacyAccount[]; nowMs: number } | undefined;

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return client;
}

beforeAll(async () => {
  await adminQuery(serverUrl, `create database ${name}`);
});
afterAll(async () => {
  for (const client of clients) await client.end().catch(() => undefined);
  await ingestOrm?.close();
  await orm?.close();
  await adminQuery(serverUrl, `drop database if exists ${name} with (force)`);
});

interface Relation {
  oid: string;
  name: string;
  file: string;
}

/** The history tables' indexes by oid, with their current name and file. */
async function historyIndexes(client: pg.Client, tables: readonly string[]): Promise<Relation[]> {
  const { rows } = await client.query<Relation>(
    `select c.oid::text as oid, c.relname as name, c.relfilenode::text as file from pg_index i join pg_class c on c.oid = i.indexrelid
     where i.indrelid = any($1::regclass[]) order by c.oid`, [tables]);
  return rows;
}

async function tableFiles(client: pg.Client, tables: readonly string[]): Promise<Relation[]> {
  const { rows } = await client.query<Relation>(
    `select oid::text, relname as name, relfilenode::text as file from pg_class where oid = any($1::regclass[]) order by array_position($1::regclass[], oid::regclass)`, [tables]);
  return rows;
}

/** Every row written before the migration (ids below `belowId`), digested: events with their bodies, deliveries, attempts. */
async function digest(client: pg.Client, tables: readonly [string, string, string], belowId: string): Promise<string[]> {
  const [event, delivery, attempt] = tables;
  const { rows: [row] } = await client.query<{ e: string; d: string; a: string }>(`
    select (select md5(string_agg(id || ':' || md5(body) || ':' || account_id || ':' || received_at::text || ':' || coalesce(dedupe_key, ''), ',' order by id)) from ${event} where id < $1) as e,
           (select md5(string_agg(event_id || ':' || destination_id || ':' || status || ':' || attempt_count, ',' order by event_id, destination_id)) from ${delivery} where event_id < $1) as d,
           (select md5(string_agg(id || ':' || event_id || ':' || n || ':' || coalesce(response_status::text, ''), ',' order by id)) from ${attempt} where event_id < $1) as a`, [belowId]);
  return [row!.e, row!.d, row!.a];
}

async function count(client: pg.Client, sql: string, params: unknown[] = []): Promise<number> {
  return Number((await client.query<{ n: string }>(sql, params)).rows[0]!.n);
}

interface IngestLoop {
  ids: string[];
  errors: string[];
  /** Each statement's start and latency (ms, performance.now()). */
  timings: { startMs: number; ms: number }[];
  stop(): Promise<void>;
}

/** Stores an event with `store` every few milliseconds until stopped, timing each statement. */
function ingestLoop(store: (seq: number) => Promise<string>): IngestLoop {
  const loop: Omit<IngestLoop, 'stop'> = { ids: [], errors: [], timings: [] };
  let stopped = false;
  const running = (async () => {
    for (let seq = 0; !stopped; seq++) {
      const startMs = performance.now();
      try {
        loop.ids.push(await store(seq));
      } catch (error) {
        loop.errors.push(`${(error as { code?: string }).code} ${(error as Error).message}`);
      }
      loop.timings.push({ startMs, ms: performance.now() - startMs });
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
  })();
  return { ...loop, stop: async () => { stopped = true; await running; } };
}

const loopBody = (worker: number, seq: number): Buffer => Buffer.from(JSON.stringify({ worker, seq, padding: 'x'.repeat(900) }));

/** The previous release's ingest on its own connection, an event (and its delivery) per statement. */
async function legacyIngestLoop(accounts: readonly LegacyAccount[], worker: number): Promise<IngestLoop> {
  const client = await connect();
  return ingestLoop((seq) => legacyIngest(client, accounts[(seq + worker) % accounts.length]!, loopBody(worker, seq)));
}

function newEvent(account: LegacyAccount, type: string, body: Buffer): NewEvent {
  return {
    id: newId('event'), accountId: account.accountId, endpointId: account.endpointId, type, method: 'POST', path: '', query: '',
    headers: {}, body, contentType: 'application/json', size: body.length, receivedAt: new Date(), status: 'pending', dedupeKey: null,
  };
}

/** The current ingest (insertEvents) of one account's events, one event a statement, on `ormOfIngest`'s connections. */
function currentIngestLoop(ormOfIngest: Orm, account: LegacyAccount, worker: number): IngestLoop {
  return ingestLoop(async (seq) => {
    const event = newEvent(account, 'during.upgrade', loopBody(worker, seq));
    const [outcome] = await insertEvents(ormOfIngest, [event]);
    if (!outcome?.stored) throw new Error(`not stored: ${JSON.stringify(outcome)}`);
    return event.id;
  });
}

/** Every delivery row but the given events', digested with every column but `layout` (which 021 changes for the open ones). */
async function deliveryDigest(client: pg.Client, table: string, exceptEvents: readonly string[], where = 'true'): Promise<{ rows: number; md5: string | null }> {
  const { rows: [row] } = await client.query<{ rows: number; md5: string | null }>(`
    select count(*)::int as rows,
           md5(string_agg(row(event_id, destination_id, account_id, endpoint_id, status, attempt_count, auto_attempts, next_attempt_at, next_trigger,
                              lease_id, locked_until, retention_class)::text, ',' order by event_id, destination_id)) as md5
    from ${table} where event_id not in (select unnest($1::text[])) and ${where}`, [exceptEvents]);
  return row!;
}

/** A delivered result for a claimed delivery, with its attempt. */
function delivered(delivery: ClaimedDelivery): RecordInput {
  return {
    delivery,
    attempt: { id: newId('attempt'), startedAt: new Date(), durationMs: 5, responseStatus: 200, responseBody: null, error: null, failureKind: null },
    next: { status: 'delivered', autoAttempts: delivery.autoAttempts + 1, nextAttemptAt: null },
    health: 'ok',
  };
}

describe('migration 019-partitioned-history online, on a history the previous release wrote', () => {
  it(`attaches the old tables and indexes as class 0 without copying or losing a row, while ingest goes on`, async () => {
    orm = await createOrm({ databaseUrl: url, poolMax: 4 });
    expect((await orm.migrator.up({ to: PREVIOUS_RELEASE_MIGRATION })).at(-1)?.name).toBe(PREVIOUS_RELEASE_MIGRATION);
    const client = await connect();
    // The current ingest (used below as the release before 021's, whose unkeyed statement it
    // was until 023) reads 023's destination options: the older schema gets those columns
    // ahead. Nullable columns and an empty table: nothing these migrations copy or check.
    await client.query(DELIVERY_OPTIONS_COLUMNS);
    // and records results with 025's attempt columns and issue tables
    await client.query(`${ISSUES_TABLES}; ${ATTEMPT_COLUMNS}`);
    const accounts = await createLegacyAccounts(client, ['free', 'pro', 'enterprise']);
    const nowMs = Date.now();
    const fillEndMs = nowMs - 60_000;
    await fillLegacyHistory(client, accounts, { events: EVENTS, fromMs: nowMs - 20 * DAY_MS, toMs: fillEndMs, chunk: 10_000 });
    await client.query('vacuum (analyze) event, delivery, attempt');
    const belowId = firstIdAt('event', fillEndMs + 1);
    const free = accounts[0]!;
    // the retention pass below runs as of nowMs, so an event crossing its 7 days meanwhile does not change the count
    const freeCutoff = new Date(nowMs - 7 * DAY_MS);
    const expiredFree = await count(client, `select count(*) as n from event where account_id = $1 and received_at < $2`, [free.accountId, freeCutoff]);
    expect(expiredFree).toBeGreaterThan(1000);

    const tablesBefore = await tableFiles(client, TABLES);
    const indexesBefore = await historyIndexes(client, TABLES);
    expect(indexesBefore.map((index) => index.name).sort()).toEqual([
      'attempt_event_idx', 'attempt_pkey', 'delivery_due_idx', 'delivery_leased_idx', 'delivery_pkey', 'event_account_idx', 'event_dedupe_key_idx', 'event_endpoint_idx', 'event_pkey',
    ]);
    const digestBefore = await digest(client, ['event', 'delivery', 'attempt'], belowId);
    const [deliveriesBefore, attemptsBefore] = [await count(client, 'select count(*) as n from delivery'), await count(client, 'select count(*) as n from attempt')];

    // The previous release's ingest goes on throughout; a slow read holds `event` as the migration begins.
    const loops = await Promise.all(Array.from({ length: INGEST_CONNECTIONS }, (_, worker) => legacyIngestLoop(accounts, worker)));
    await expect.poll(() => loops.every((loop) => loop.ids.length >= 5)).toBe(true);
    const reader = await connect();
    const readerPid: number = (await reader.query('select pg_backend_pid() as pid')).rows[0].pid;
    const slowRead = reader.query(`select count(*) from (select pg_sleep(${SLOW_READ_S}) from (select 1 from event limit 1) e) s`);
    // the read holds its lock on `event` before the migration asks for one
    await expect.poll(async () => (await client.query(
      `select count(*)::int as n from pg_locks where pid = $1 and relation = 'event'::regclass and granted`, [readerPid])).rows[0].n).toBeGreaterThan(0);
    const migrationStart = performance.now();
    const applied = await orm.migrator.up({ to: '019-partitioned-history' });
    const migrationEnd = performance.now();
    await slowRead;
    // ingest goes on after the migration too
    const storedBy = loops.map((loop) => loop.ids.length);
    await expect.poll(() => loops.every((loop, i) => loop.ids.length >= storedBy[i]! + 5)).toBe(true);
    for (const loop of loops) await loop.stop();

    expect(applied.map((migration) => migration.name)).toEqual(['019-partitioned-history']);
    // Ingest: nothing failed, statements ran all through the migration, none waited long.
    expect(loops.flatMap((loop) => loop.errors)).toEqual([]);
    const during = loops.flatMap((loop) => loop.timings).filter((t) => t.startMs + t.ms >= migrationStart && t.startMs <= migrationEnd);
    expect(during.length).toBeGreaterThan(20);
    expect(Math.max(...during.map((t) => t.ms))).toBeLessThan(LONGEST_INGEST_MS);
    const ingested = loops.flatMap((loop) => loop.ids);

    // Partitioned, with the old tables as class 0: the same relations, their files untouched (nothing copied).
    const { rows: kinds } = await client.query<{ name: string; relkind: string; parent: string | null; bound: string | null }>(`
      select c.relname as name, c.relkind::text, (select i.inhparent::regclass::text from pg_inherits i where i.inhrelid = c.oid) as parent,
             pg_get_expr(c.relpartbound, c.oid) as bound
      from pg_class c where c.oid = any($1::regclass[]) order by array_position($1::regclass[], c.oid::regclass)`,
      [[...TABLES, 'event_r0', 'attempt_r0']]);
    expect(kinds.map((row) => [row.name, row.relkind, row.parent, row.bound?.replace(/'/g, '') ?? null])).toEqual([
      ['event', 'p', null, null], ['delivery', 'r', null, null], ['attempt', 'p', null, null],
      ['event_r0', 'r', 'event', 'FOR VALUES IN (0)'], ['attempt_r0', 'r', 'attempt', 'FOR VALUES IN (0)'],
    ]);
    expect(await tableFiles(client, LEGACY)).toEqual(tablesBefore.map((table, i) => ({ ...table, name: LEGACY[i] })));
    expect(await count(client, `select count(*) as n from pg_attribute where attrelid = 'delivery'::regclass and attname = 'retention_class' and not attisdropped`)).toBe(1);
    // Every old index is still the same index on the same file (not rebuilt); those the parents have are attached to theirs.
    const { rows: indexesAfter } = await client.query<Relation & { parent: string | null }>(`
      select c.oid::text as oid, c.relname as name, c.relfilenode::text as file,
             (select i.inhparent::regclass::text from pg_inherits i where i.inhrelid = c.oid) as parent
      from pg_class c where c.oid = any($1::oid[]) order by c.oid`, [indexesBefore.map((index) => index.oid)]);
    expect(indexesAfter.map(({ oid, file }) => ({ oid, file }))).toEqual(indexesBefore.map(({ oid, file }) => ({ oid, file })));
    const parentOf = new Map(indexesBefore.map((index, i) => [index.name, indexesAfter[i]!.parent]));
    expect(Object.fromEntries(parentOf)).toEqual({
      event_pkey: null, event_dedupe_key_idx: null, delivery_pkey: null, attempt_pkey: null, delivery_due_idx: null, delivery_leased_idx: null,
      event_account_idx: 'event_account_idx', event_endpoint_idx: 'event_endpoint_idx', attempt_event_idx: 'attempt_event_idx',
    });

    // Every row: the history unchanged, and every event committed meanwhile (with its delivery) in class 0.
    expect(await digest(client, LEGACY, belowId)).toEqual(digestBefore);
    expect(await count(client, 'select count(*) as n from event')).toBe(EVENTS + ingested.length);
    expect(await count(client, 'select count(*) as n from event_r0')).toBe(EVENTS + ingested.length);
    expect(await count(client, 'select count(*) as n from event_r0 where id = any($1::text[])', [ingested])).toBe(ingested.length);
    expect(await count(client, 'select count(*) as n from delivery where event_id = any($1::text[]) and retention_class = 0', [ingested])).toBe(ingested.length);
    expect(await count(client, 'select count(*) as n from delivery')).toBe(deliveriesBefore + ingested.length);
    expect(await count(client, 'select count(*) as n from attempt')).toBe(attemptsBefore);

    // Retention: class 0 is pruned row by row; only the free account's events past 7 days go, with their deliveries and attempts.
    const pruned = await pruneExpiredEvents(orm, { pauseMs: 0, now: new Date(nowMs) });
    expect(pruned).toMatchObject({ events: expiredFree, partitionsDropped: 0 });
    expect(await count(client, `select count(*) as n from event where received_at < $2 and account_id = $1`, [free.accountId, freeCutoff])).toBe(0);
    expect(await count(client, 'select count(*) as n from event')).toBe(EVENTS + ingested.length - expiredFree);
    expect(await count(client, 'select count(*) as n from delivery d where not exists (select 1 from event e where e.id = d.event_id)')).toBe(0);
    expect(await count(client, 'select count(*) as n from attempt a where not exists (select 1 from event e where e.id = a.event_id)')).toBe(0);

    // The current ingest stores each account's events in its class's partitions.
    const batch = accounts.map((account) => newEvent(account, 'after.upgrade', Buffer.from('{"after":true}')));
    expect((await insertEvents(orm, batch)).map((outcome) => outcome.stored)).toEqual([true, true, true]);
    const { rows: placed } = await client.query<{ event: string; delivery_class: number }>(`
      select e.tableoid::regclass::text as event, d.retention_class as delivery_class
      from unnest($1::text[]) with ordinality as b(id, n) join event e on e.id = b.id join delivery d on d.event_id = b.id order by b.n`, [batch.map((event) => event.id)]);
    expect(placed.map((row) => row.delivery_class)).toEqual([7, 90, 365]);
    placed.forEach((row, i) => expect(row.event).toMatch(new RegExp(`^event_r${[7, 90, 365][i]}_\\d{8}$`)));
    // their attempts' partitions, the same periods of the same classes, are there too
    expect(await count(client, 'select count(*) as n from unnest($1::text[]) as leaf where to_regclass(leaf) is not null', [placed.map((row) => row.event.replace(/^event_/, 'attempt_'))])).toBe(3);
    at019 = { accounts, nowMs };
  });
});

describe('migrations 020-list-indexes and 021-partitioned-deliveries online, on the database the test above left at 019', () => {
  it('attaches the old delivery table as delivery_r0 without copying or losing a row, moves its open deliveries to the queue, while ingest goes on', async () => {
    if (!orm || !at019) throw new Error('the test above did not leave its database at 019');
    const { accounts, nowMs } = at019;
    const [free, pro] = accounts as [LegacyAccount, LegacyAccount, LegacyAccount];
    const client = await connect();
    // The previous release asked to replay some done deliveries, as its replay did (no `layout` then): open rows that are neither pending nor retrying.
    const { rowCount: replaysAsked } = await client.query(`
      update delivery set next_trigger = 'replay', next_attempt_at = now()
      where (event_id, destination_id) in (select event_id, destination_id from delivery where account_id = $1 and status = 'delivered' order by event_id desc limit $2)`,
      [pro.accountId, REPLAYS_ASKED]);
    expect(replaysAsked).toBe(REPLAYS_ASKED);
    const openByKind = (await client.query<{ status: string; next_trigger: string; n: number }>(
      `select status, next_trigger, count(*)::int as n from delivery where ${OPEN} group by 1, 2 order by 1, 2`)).rows;
    // pending (the test above's ingest), retrying (the legacy history) and replays asked
    expect(openByKind.map((row) => `${row.status}/${row.next_trigger}`)).toEqual(['delivered/replay', 'pending/auto', 'retrying/auto']);
    expect(openByKind.every((row) => row.n >= REPLAYS_ASKED)).toBe(true);
    const [deliveryBefore] = await tableFiles(client, ['delivery']);
    const indexesBefore = await historyIndexes(client, ['delivery']);
    expect(indexesBefore.map((index) => index.name).sort()).toEqual(['delivery_due_idx', 'delivery_leased_idx', 'delivery_pkey']);
    const allBefore = await deliveryDigest(client, 'delivery', []);
    const openBefore = await deliveryDigest(client, 'delivery', [], OPEN);
    const eventsBefore = await count(client, 'select count(*) as n from event');

    // The release before 021 ingests throughout, one account (so one class) per connection, on connections that prepared its statements before.
    ingestOrm = await createOrm({ databaseUrl: url, poolMax: 2 * INGEST_CONNECTIONS });
    const loops = accounts.map((account, worker) => currentIngestLoop(ingestOrm!, account, worker));
    await expect.poll(() => loops.every((loop) => loop.ids.length >= 5)).toBe(true);
    // A slow read holds `delivery` from the moment 021 starts (not before: 020's concurrent index builds would wait it out).
    const reader = await connect();
    const readerPid: number = (await reader.query('select pg_backend_pid() as pid')).rows[0].pid;
    let slowRead: Promise<number> | undefined;
    const holdDelivery = async ({ name: migration }: { name: string }): Promise<void> => {
      if (migration !== '021-partitioned-deliveries') return;
      slowRead = reader.query(`select count(*) from (select pg_sleep(${SLOW_READ_S}) from (select 1 from delivery limit 1) d) s`).then(() => performance.now());
      await expect.poll(async () => (await client.query(
        `select count(*)::int as n from pg_locks where pid = $1 and relation = 'delivery'::regclass and granted`, [readerPid])).rows[0].n).toBeGreaterThan(0);
    };
    orm.migrator.on('migrating', holdDelivery);
    const migrationStart = performance.now();
    const applied = await orm.migrator.up({ to: '021-partitioned-deliveries' }).finally(() => orm!.migrator.off('migrating', holdDelivery));
    const migrationEnd = performance.now();
    const readEnd = await slowRead;
    const storedBy = loops.map((loop) => loop.ids.length);
    await expect.poll(() => loops.every((loop, i) => loop.ids.length >= storedBy[i]! + 5)).toBe(true);
    for (const loop of loops) await loop.stop();

    expect(applied.map((migration) => migration.name)).toEqual(['020-list-indexes', '021-partitioned-deliveries']);
    // the read held `delivery` while 021 ran: the migration could not finish before it
    expect(readEnd).toBeLessThan(migrationEnd);
    // Ingest: nothing failed, statements ran all through the migrations, none waited long.
    expect(loops.flatMap((loop) => loop.errors)).toEqual([]);
    const during = loops.flatMap((loop) => loop.timings).filter((t) => t.startMs + t.ms >= migrationStart && t.startMs <= migrationEnd);
    expect(during.length).toBeGreaterThan(20);
    expect(Math.max(...during.map((t) => t.ms))).toBeLessThan(LONGEST_INGEST_MS);
    const ingested = loops.flatMap((loop) => loop.ids);

    // Partitioned, with the old table as layout 0: the same relation and file, its indexes the same ones renamed (nothing copied or rebuilt).
    const { rows: tree } = await client.query<{ name: string; relkind: string; parent: string | null; bound: string | null }>(`
      select c.relname as name, c.relkind::text, (select i.inhparent::regclass::text from pg_inherits i where i.inhrelid = c.oid) as parent,
             pg_get_expr(c.relpartbound, c.oid) as bound
      from pg_class c where c.oid = any($1::regclass[]) order by array_position($1::regclass[], c.oid::regclass)`,
      [['delivery', 'delivery_r0', 'delivery_current', 'delivery_open', 'delivery_done', 'delivery_done_r0']]);
    expect(tree.map((row) => [row.name, row.relkind, row.parent, row.bound?.replace(/'/g, '') ?? null])).toEqual([
      ['delivery', 'p', null, null], ['delivery_r0', 'r', 'delivery', 'FOR VALUES IN (0)'], ['delivery_current', 'p', 'delivery', 'FOR VALUES IN (1)'],
      ['delivery_open', 'r', 'delivery_current', 'FOR VALUES IN (true)'], ['delivery_done', 'p', 'delivery_current', 'FOR VALUES IN (false)'],
      ['delivery_done_r0', 'r', 'delivery_done', 'FOR VALUES IN (0)'],
    ]);
    expect(await tableFiles(client, ['delivery_r0'])).toEqual([{ ...deliveryBefore!, name: 'delivery_r0' }]);
    const { rows: indexesAfter } = await client.query<Relation>(
      `select oid::text, relname as name, relfilenode::text as file from pg_class where oid = any($1::oid[]) order by oid`, [indexesBefore.map((index) => index.oid)]);
    expect(indexesAfter).toEqual(indexesBefore.map((index) => ({ ...index, name: index.name.replace(/^delivery_/, 'delivery_r0_') })));

    // Every row from before, unchanged; the open ones moved to the queue, none left behind; every event stored meanwhile with its delivery in the queue.
    expect(await deliveryDigest(client, 'delivery', ingested)).toEqual(allBefore);
    expect(await deliveryDigest(client, 'delivery_open', ingested)).toEqual(openBefore);
    expect(await count(client, `select count(*) as n from delivery_r0 where ${OPEN}`)).toBe(0);
    expect(await count(client, 'select count(*) as n from delivery_r0')).toBe(allBefore.rows - openBefore.rows);
    expect(await count(client, 'select count(*) as n from event')).toBe(eventsBefore + ingested.length);
    expect(await count(client, 'select count(*) as n from delivery where event_id = any($1::text[])', [ingested])).toBe(ingested.length);
    expect(await count(client, `
      select count(*) as n from delivery_open d join event e on e.id = d.event_id
      where d.event_id = any($1::text[]) and d.status = 'pending' and d.layout = 1 and d.retention_class = e.retention_class and e.retention_class > 0`, [ingested])).toBe(ingested.length);
    // a delivery leaf beside every event leaf, under its class under delivery_done
    const { rows: leaves } = await client.query<{ event_leaf: string; delivery_leaf: string | null; delivery_class: string | null }>(`
      select c.relname as event_leaf, d.relname as delivery_leaf,
             (select i.inhparent::regclass::text || ' < ' || (select j.inhparent::regclass::text from pg_inherits j where j.inhrelid = i.inhparent)
              from pg_inherits i where i.inhrelid = d.oid) as delivery_class
      from pg_class c left join pg_class d on d.relname = replace(c.relname, 'event_', 'delivery_') and d.relnamespace = c.relnamespace
      where c.relname ~ '^event_r[0-9]+_[0-9]{8}$' order by 1`);
    expect(leaves.length).toBeGreaterThanOrEqual(3);
    expect(leaves.filter((row) => row.delivery_class !== `${row.event_leaf.replace(/^event_(r[0-9]+)_.*$/, 'delivery_$1')} < delivery_done`)).toEqual([]);

    // After: the current ingest stores into the queue.
    const batch = accounts.map((account) => newEvent(account, 'after.021', Buffer.from('{"after":true}')));
    expect((await insertEvents(orm, batch)).map((outcome) => outcome.stored)).toEqual([true, true, true]);
    const whereIs = async (eventIds: readonly string[]): Promise<string[]> => (await client.query<{ relname: string }>(`
      select l.tableoid::regclass::text as relname from unnest($1::text[]) with ordinality as b(id, n) join delivery l on l.event_id = b.id order by b.n`, [eventIds])).rows.map((row) => row.relname);
    expect(await whereIs(batch.map((event) => event.id))).toEqual(['delivery_open', 'delivery_open', 'delivery_open']);

    // Claimed (every due delivery: the queue has no other order) and recorded: each goes to its history leaf, the same period as its event's.
    const dueNow = await count(client, `select count(*) as n from delivery_open where next_attempt_at <= now() and lease_id is null`);
    const claimed = await claimDue(orm, { limit: dueNow + 100, leaseMs: 60_000, perDestinationLimit: dueNow + 100 });
    expect(claimed.length).toBe(dueNow);
    expect(claimed.map((delivery) => delivery.id)).toEqual(expect.arrayContaining(batch.map((event) => event.id)));
    const recorded = await recordResults(orm, claimed.map(delivered));
    expect(recorded.results.filter((result) => !result.held)).toEqual([]);
    expect(await count(client, `
      select count(*) as n from delivery l join event e on e.id = l.event_id
      where l.event_id = any($1::text[]) and l.status = 'delivered'
        and l.tableoid::regclass::text = case when e.retention_class = 0 then 'delivery_done_r0' else replace(e.tableoid::regclass::text, 'event_', 'delivery_') end`,
      [claimed.map((delivery) => delivery.id)])).toBe(claimed.length);
    const batchLeaves = await whereIs(batch.map((event) => event.id));
    [7, 90, 365].forEach((retentionClass, i) => expect(batchLeaves[i]).toMatch(new RegExp(`^delivery_r${retentionClass}_\\d{8}$`)));

    // A replay of a delivery still in the old table moves it to the queue, claimed; its result to class 0's history.
    const retentionNow = new Date(nowMs + 3 * DAY_MS);
    const freeCutoff = new Date(retentionNow.getTime() - 7 * DAY_MS);
    const { rows: [old] } = await client.query<{ event_id: string }>(`
      select l.event_id from delivery_r0 l join event e on e.id = l.event_id
      where l.account_id = $1 and l.status = 'delivered' and e.received_at < $2 order by l.event_id desc limit 1`, [free.accountId, freeCutoff]);
    const replayed = await replayEvent(orm, { eventId: old!.event_id, accountId: free.accountId, leaseMs: 60_000 });
    expect(replayed.map((outcome) => outcome.kind)).toEqual(['claimed']);
    expect((await client.query(`select tableoid::regclass::text as relname, layout from delivery where event_id = $1`, [old!.event_id])).rows)
      .toEqual([{ relname: 'delivery_open', layout: 1 }]);
    const replayResult = await recordResults(orm, replayed.flatMap((outcome) => (outcome.kind === 'claimed' ? [delivered(outcome.delivery)] : [])));
    expect(replayResult.results.map((result) => result.held)).toEqual([true]);
    expect(await whereIs([old!.event_id])).toEqual(['delivery_done_r0']);

    // Retention (class 0's pass, as of 3 days later): the free account's expired events go with their deliveries, wherever those are.
    const { rows: expiring } = await client.query<{ id: string }>(
      `select id from event where account_id = $1 and received_at < $2 and retention_class = 0`, [free.accountId, freeCutoff]);
    const expiredIds = expiring.map((row) => row.id);
    const { rows: expiringWhere } = await client.query<{ relname: string; n: number }>(
      `select tableoid::regclass::text as relname, count(*)::int as n from delivery where event_id = any($1::text[]) group by 1 order by 1`, [expiredIds]);
    expect(expiringWhere.map((row) => row.relname)).toEqual(['delivery_done_r0', 'delivery_open', 'delivery_r0']);
    expect(expiringWhere.reduce((sum, row) => sum + row.n, 0)).toBe(expiredIds.length);
    const pruned = await pruneExpiredEvents(orm, { pauseMs: 0, now: retentionNow });
    expect(pruned).toMatchObject({ events: expiredIds.length, partitionsDropped: 0 });
    expect(await count(client, 'select count(*) as n from delivery where event_id = any($1::text[])', [expiredIds])).toBe(0);
    expect(await count(client, 'select count(*) as n from delivery d where not exists (select 1 from event e where e.id = d.event_id)')).toBe(0);
  }, 90_000);
});
