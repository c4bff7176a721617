/**
 * The online upgrade to partitioned history (migration 019-partitioned-history) on a
 * database the previous release filled (migrations up to 018, a history written straight
 * into its unpartitioned tables: test/support/legacy-history.ts), while that release's
 * ingest keeps storing events on three connections and a slow read holds `event` (as a
 * list, search or export may when the new relay starts):
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
 * `npm run bench:upgrade` measures the same at 1 M events.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { firstIdAt, newId } from '@hook/core';
import { createOrm, insertEvents, pruneExpiredEvents, type NewEvent, type Orm } from '../src/index.ts';
import { adminQuery, withDatabase } from '../src/testing.ts';
import { createLegacyAccounts, fillLegacyHistory, legacyIngest, PREVIOUS_RELEASE_MIGRATION, type LegacyAccount } from '../../../test/support/legacy-history.ts';

const EVENTS = 20_000;
const DAY_MS = 86_400_000;
const INGEST_CONNECTIONS = 3;
/** How long the slow read holds `event` while the migration starts. */
const SLOW_READ_S = 4;
/** The longest an ingest statement may take during the migration: well below the read, with room for a loaded machine. */
const LONGEST_INGEST_MS = 2000;
const TABLES = ['event', 'delivery', 'attempt'] as const;
/** Where each table's rows from before the migration are after it: `delivery` stays one table. */
const LEGACY = ['event_r0', 'delivery', 'attempt_r0'] as const;

const serverUrl = inject('databaseServerUrl');
const name = `hook_upgrade_${randomBytes(6).toString('hex')}`;
const url = withDatabase(serverUrl, name);
let orm: Orm | undefined;
const clients: pg.Client[] = [];

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

/** The previous release's ingest on its own connection, an event (and its delivery) every few milliseconds until stopped. */
async function ingestLoop(accounts: readonly LegacyAccount[], worker: number): Promise<IngestLoop> {
  const client = await connect();
  const loop: Omit<IngestLoop, 'stop'> = { ids: [], errors: [], timings: [] };
  let stopped = false;
  const running = (async () => {
    for (let seq = 0; !stopped; seq++) {
      const body = Buffer.from(JSON.stringify({ worker, seq, padding: 'x'.repeat(900) }));
      const startMs = performance.now();
      try {
        loop.ids.push(await legacyIngest(client, accounts[(seq + worker) % accounts.length]!, body));
      } catch (error) {
        loop.errors.push(`${(error as { code?: string }).code} ${(error as Error).message}`);
      }
      loop.timings.push({ startMs, ms: performance.now() - startMs });
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
  })();
  return { ...loop, stop: async () => { stopped = true; await running; } };
}

describe('migration 019-partitioned-history online, on a history the previous release wrote', () => {
  it(`attaches the old tables and indexes as class 0 without copying or losing a row, while ingest goes on`, async () => {
    orm = await createOrm({ databaseUrl: url, poolMax: 4 });
    expect((await orm.migrator.up({ to: PREVIOUS_RELEASE_MIGRATION })).at(-1)?.name).toBe(PREVIOUS_RELEASE_MIGRATION);
    const client = await connect();
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
    const loops = await Promise.all(Array.from({ length: INGEST_CONNECTIONS }, (_, worker) => ingestLoop(accounts, worker)));
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
    const batch: NewEvent[] = accounts.map((account) => ({
      id: newId('event'), accountId: account.accountId, endpointId: account.endpointId, type: 'after.upgrade', method: 'POST', path: '', query: '',
      headers: {}, body: Buffer.from('{"after":true}'), contentType: 'application/json', size: 14, receivedAt: new Date(), status: 'pending', dedupeKey: null,
    }));
    expect((await insertEvents(orm, batch)).map((outcome) => outcome.stored)).toEqual([true, true, true]);
    const { rows: placed } = await client.query<{ event: string; delivery_class: number }>(`
      select e.tableoid::regclass::text as event, d.retention_class as delivery_class
      from unnest($1::text[]) with ordinality as b(id, n) join event e on e.id = b.id join delivery d on d.event_id = b.id order by b.n`, [batch.map((event) => event.id)]);
    expect(placed.map((row) => row.delivery_class)).toEqual([7, 90, 365]);
    placed.forEach((row, i) => expect(row.event).toMatch(new RegExp(`^event_r${[7, 90, 365][i]}_\\d{8}$`)));
    // their attempts' partitions, the same periods of the same classes, are there too
    expect(await count(client, 'select count(*) as n from unnest($1::text[]) as leaf where to_regclass(leaf) is not null', [placed.map((row) => row.event.replace(/^event_/, 'attempt_'))])).toBe(3);
  });
});
