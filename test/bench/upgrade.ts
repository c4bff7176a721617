/**
 * `npm run bench:upgrade`: the online upgrade to partitioned history (migrations
 * 019-partitioned-history, 020-list-indexes and 021-partitioned-deliveries, all applied by
 * one migrateToLatest) on a database filled as the previous release left it, while that
 * release's ingest keeps writing: how long each migration and each of its steps take, how
 * long ingest waits during each, and that no row is lost.
 *
 * On a fresh database (a new `hook_bench_<random>` on the server named by
 * HOOK_BENCH_DATABASE_URL or HOOK_TEST_DATABASE_URL, else an embedded PostgreSQL):
 *
 *   1. Previous release: migrations up to 018; 10 accounts (4 free, 4 pro, 2 enterprise),
 *      each with an endpoint and its destination; BENCH_EVENTS events (default 1,000,000)
 *      received over the last 6.5 days, 1 KiB bodies, a delivery each and 1 to 3 attempts
 *      (test/support/legacy-history.ts; INSERT … SELECT generate_series), then VACUUM
 *      ANALYZE as autovacuum would have. The tables' and indexes' oids and files, the row
 *      counts and a digest of every event (id and body) are read.
 *   2. Ingest of the previous release: BENCH_CONNECTIONS connections (default 4), each
 *      storing one event and its delivery per statement (legacy-history.ts LEGACY_INGEST:
 *      no retention_class), paced to BENCH_RATE events per second in all (default 400),
 *      each statement timed; plus BENCH_KEYED_CONNECTIONS (default 1) storing events with a
 *      dedupe key the way that release did (ON CONFLICT (endpoint_id, dedupe_key)), at
 *      the same pace per connection, reported on their own. BENCH_BASELINE_S (default 5)
 *      seconds of it before the migration, then the migrations (migrateToLatest, as a relay
 *      of the new release runs it at start), then BENCH_AFTER_S (default 3) more seconds.
 *      Each migration is timed on its own (the migrator's migrating/migrated events), with
 *      the ingest statements that ran while it did.
 *   3. While it migrates: each statement of the migrations is timed (the ORM's query log),
 *      and pg_stat_activity with pg_locks is sampled every 20 ms, so a slow insert is
 *      matched with the lock it waited for and the statement that held it.
 *      BENCH_SLOW_READER_S=N (default 0: off) also keeps a reader holding `event` and
 *      `delivery` in a query of N seconds over and over while the migrations run, as a slow
 *      list, search or export would: what ingest then waits for.
 *   4. Checks: `event`, `attempt` (019) and `delivery` (021) are partitioned, the old tables
 *      their `_r0` partitions as they were (same oid and file: nothing copied), their indexes
 *      the same (same oid and file: nothing rebuilt), event's and attempt's attached to the
 *      parents', delivery's renamed delivery_r0_…; every row written before is there with
 *      the same digest (deliveries wherever they are now), the old table's open deliveries
 *      (pending, retrying) moved to delivery_open and none left in delivery_r0, and every
 *      event the ingest committed (before, during and after) is there with its delivery, in
 *      delivery_open.
 *   5. Current ingest: insertEvents (@hook/db, what the relay runs) for BENCH_AFTER_S
 *      seconds over the same accounts: each event must land in its account's class
 *      partition (event_r7_…, event_r90_…, event_r365_…), its delivery with that class in
 *      delivery_open (the queue).
 *
 * Exit codes: 0 measured and every check passed; 1 a row lost or moved, an ingest
 * statement of the plain kind failed, the longest ingest wait during any migration over
 * BENCH_PAUSE_GOAL_MS (default 2000), or a check failed; 2 bad settings.
 *
 * Environment (all optional):
 *   BENCH_EVENTS             events in the history (default 1000000)
 *   BENCH_RATE               previous-release ingest, events per second over all plain connections (default 400)
 *   BENCH_CONNECTIONS        plain ingest connections (default 4)
 *   BENCH_KEYED_CONNECTIONS  keyed ingest connections, the previous release's ON CONFLICT (default 1; 0 = none)
 *   BENCH_BASELINE_S         seconds of ingest before the migration (default 5)
 *   BENCH_AFTER_S            seconds of ingest after it, and of the current ingest path (default 3)
 *   BENCH_SLOW_READER_S      a reader holding `event` and `delivery` this many seconds per query during the migrations (default 0: none)
 *   BENCH_PAUSE_GOAL_MS      the longest ingest wait allowed (default 2000)
 *   BENCH_JSON=1             also print a one-line JSON summary as the last stdout line
 *   HOOK_BENCH_DATABASE_URL / HOOK_TEST_DATABASE_URL   PostgreSQL server URL to create the bench database on
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { firstIdAt, newId } from '@hook/core';
import { createOrm, insertEvents, migrateToLatest, type NewEvent, type Orm } from '@hook/db';
import {
  createLegacyAccounts,
  fillLegacyHistory,
  legacyIngest,
  legacyKeyedIngest,
  PREVIOUS_RELEASE_MIGRATION,
  type LegacyAccount,
} from '../support/legacy-history.ts';
import {
  codeVersion,
  createBenchDatabase,
  databaseServerUrl,
  isInterrupted,
  jsonBody,
  log,
  machineLine,
  ms,
  onCleanup,
  percentile,
  positiveNumber,
  resultLines,
  round,
  runBench,
  seconds,
  UsageError,
  writeReport,
} from './support.ts';

const DAY_MS = 86_400_000;
const BODY_BYTES = 1024;
const SAMPLE_INTERVAL_MS = 20;
const PLANS: LegacyAccount['plan'][] = ['free', 'free', 'free', 'free', 'pro', 'pro', 'pro', 'pro', 'enterprise', 'enterprise'];
/** Latency histogram bucket upper bounds, ms. */
const BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];
const HISTORY_TABLES = ['event', 'delivery', 'attempt'] as const;
/** The migrations measured, in order: each one's figures are reported on their own. */
const MEASURED = ['019-partitioned-history', '020-list-indexes', '021-partitioned-deliveries'] as const;
/**
 * Where each table's rows from before the migrations are after them: the old table,
 * attached as it is (019: `event` and `attempt`, class 0; 021: `delivery`, layout 0).
 */
const legacyTable = (table: string): string => `${table}_r0`;
/**
 * The previous release's indexes on the history tables: 3 become the parents' indexes'
 * class 0 partitions (event account and endpoint, attempt event); the primary keys and the
 * dedupe key stay the tables' own; delivery's 3 too, renamed delivery_r0_… (021).
 */
const LEGACY_INDEX_COUNT = 9;
const ATTACHED_LEGACY_INDEXES = 3;
/** A delivery waiting for an attempt (pending, retrying, a replay asked): the old table's rows 021 moves to delivery_open. */
const OPEN_DELIVERY = `(status in ('pending', 'retrying') or next_trigger = 'replay')`;

function wholeNumber(variable: string, fallback: number): number {
  const raw = process.env[variable]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new UsageError(`${variable}=${JSON.stringify(raw)} is not valid: expected a whole number >= 0.`);
  return value;
}

function withApplicationName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', name);
  return parsed.toString();
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------
// The previous release's ingest

interface Insert {
  startMs: number;
  endMs: number;
  id: string | null;
  error: string | null;
}

interface IngestLoop {
  inserts: Insert[];
  stop(): Promise<void>;
}

/** One connection storing an event per statement at `ratePerS`, until stopped. */
async function startIngestLoop(url: string, accounts: readonly LegacyAccount[], ratePerS: number, keyed: boolean, worker: number): Promise<IngestLoop> {
  const client = new pg.Client({ connectionString: withApplicationName(url, keyed ? 'bench_keyed_ingest' : 'bench_ingest') });
  await client.connect();
  client.on('error', () => undefined);
  const inserts: Insert[] = [];
  const intervalMs = 1000 / ratePerS;
  let stopped = false;
  const running = (async () => {
    let next = performance.now();
    for (let seq = 0; !stopped && !isInterrupted(); seq++) {
      const account = accounts[(seq * 7 + worker) % accounts.length]!;
      const body = jsonBody(BODY_BYTES, { seq, worker });
      const startMs = performance.now();
      try {
        const id = keyed ? await legacyKeyedIngest(client, account, body) : await legacyIngest(client, account, body);
        inserts.push({ startMs, endMs: performance.now(), id, error: null });
      } catch (error) {
        inserts.push({ startMs, endMs: performance.now(), id: null, error: `${(error as { code?: string }).code ?? ''} ${(error as Error).message}` });
      }
      next += intervalMs;
      const now = performance.now();
      if (next > now) await sleep(next - now);
      else next = now; // behind (a wait): carry on at the pace, no burst to catch up
    }
  })();
  onCleanup(`ingest connection ${worker}`, async () => {
    stopped = true;
    await running.catch(() => undefined);
    await client.end().catch(() => undefined);
  });
  return {
    inserts,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/** A reader that keeps `event` and `delivery` locked (ACCESS SHARE) in queries of `holdS` seconds, as a slow list or export does. */
function startSlowReader(url: string, holdS: number): { stop(): Promise<number> } {
  const client = new pg.Client({ connectionString: withApplicationName(url, 'bench_slow_reader') });
  let stopped = false;
  let queries = 0;
  const running = (async () => {
    await client.connect();
    client.on('error', () => undefined);
    while (!stopped && !isInterrupted()) {
      await client.query(`select count(*) from (select pg_sleep(${holdS}) from (select 1 from event limit 1) e, (select 1 from delivery limit 1) d) s`);
      queries++;
    }
  })();
  onCleanup('slow reader', async () => {
    stopped = true;
    await running.catch(() => undefined);
    await client.end().catch(() => undefined);
  });
  return {
    async stop() {
      stopped = true;
      await running;
      return queries;
    },
  };
}

// ---------------------------------------------------------------------------------
// What the database shows while it migrates

interface ActivityRow {
  pid: number;
  application_name: string;
  state: string;
  wait_event_type: string | null;
  wait_event: string | null;
  running_ms: number;
  query: string;
  blocked_by: number[];
  waiting_for: string | null;
}

interface Sample {
  atMs: number;
  rows: ActivityRow[];
}

function startSampler(url: string): { samples: Sample[]; stop(): Promise<void> } {
  const client = new pg.Client({ connectionString: withApplicationName(url, 'bench_sampler') });
  const samples: Sample[] = [];
  let stopped = false;
  const running = (async () => {
    await client.connect();
    client.on('error', () => undefined);
    while (!stopped && !isInterrupted()) {
      const atMs = performance.now();
      const { rows } = await client.query<ActivityRow>(`
        select a.pid, a.application_name, a.state, a.wait_event_type, a.wait_event,
               (extract(epoch from clock_timestamp() - a.query_start) * 1000)::float8 as running_ms,
               left(regexp_replace(a.query, '\\s+', ' ', 'g'), 160) as query, pg_blocking_pids(a.pid) as blocked_by,
               (select string_agg(l.locktype || coalesce(' ' || l.relation::regclass::text, '') || ' ' || l.mode, ', ')
                from pg_locks l where l.pid = a.pid and not l.granted) as waiting_for
        from pg_stat_activity a
        where a.datname = current_database() and a.pid <> pg_backend_pid() and a.state <> 'idle'`);
      samples.push({ atMs, rows });
      const left = SAMPLE_INTERVAL_MS - (performance.now() - atMs);
      if (left > 0) await sleep(left);
    }
  })();
  onCleanup('sampler', async () => {
    stopped = true;
    await running.catch(() => undefined);
    await client.end().catch(() => undefined);
  });
  return {
    samples,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/** The migration's connections: the ORM's (MikroORM does not pass application_name on), every other one here is named bench_…. */
function isMigration(row: ActivityRow): boolean {
  return !row.application_name.startsWith('bench_');
}

/** Ingest statements seen waiting for a lock, grouped by what they waited for and who held it; the longest wait of each. */
function lockWaits(samples: readonly Sample[], from: number, to: number): { what: string; heldBy: string; longestMs: number; samples: number }[] {
  const groups = new Map<string, { what: string; heldBy: string; longestMs: number; samples: number }>();
  for (const sample of samples) {
    if (sample.atMs < from || sample.atMs > to) continue;
    const byPid = new Map(sample.rows.map((row) => [row.pid, row]));
    for (const row of sample.rows) {
      if (!row.application_name.startsWith('bench_ingest') && row.application_name !== 'bench_keyed_ingest') continue;
      if (row.wait_event_type !== 'Lock') continue;
      const blockers = row.blocked_by.map((pid) => byPid.get(pid));
      const heldBy = blockers.map((blocker) => (blocker ? `${isMigration(blocker) ? 'the migration' : blocker.application_name}: ${blocker.query.slice(0, 110)}` : 'a connection gone idle')).join(' | ') || '(none)';
      const what = row.waiting_for ?? row.wait_event ?? '?';
      const key = `${what}\u0000${heldBy}`;
      const group = groups.get(key) ?? { what, heldBy, longestMs: 0, samples: 0 };
      group.longestMs = Math.max(group.longestMs, row.running_ms);
      group.samples++;
      groups.set(key, group);
    }
  }
  return [...groups.values()].sort((a, b) => b.longestMs - a.longestMs);
}

/** What the migration's connection was doing at `atMs` (the nearest sample at or before it). */
function migrationAt(samples: readonly Sample[], atMs: number): string {
  let found: Sample | undefined;
  for (const sample of samples) {
    if (sample.atMs > atMs) break;
    found = sample;
  }
  const row = found?.rows.find((r) => isMigration(r) && r.state !== 'idle');
  if (!row) return '(nothing running)';
  return `${row.query.slice(0, 90)}${row.wait_event_type === 'Lock' ? ` [waiting for ${row.waiting_for}]` : ''}`;
}

// ---------------------------------------------------------------------------------
// The catalog and the rows, before and after

interface Relation {
  name: string;
  oid: number;
  relfilenode: number;
  relkind: string;
}

async function relations(client: pg.Client, names: readonly string[]): Promise<Map<string, Relation>> {
  const { rows } = await client.query<{ name: string; oid: string; relfilenode: string; relkind: string }>(
    `select relname as name, oid::int8::text as oid, relfilenode::int8::text as relfilenode, relkind::text from pg_class
     where relnamespace = 'public'::regnamespace and relname = any($1::text[])`, [names]);
  return new Map(rows.map((row) => [row.name, { name: row.name, oid: Number(row.oid), relfilenode: Number(row.relfilenode), relkind: row.relkind }]));
}

/** The indexes of `tables` by oid, with their name and file. */
async function indexesOf(client: pg.Client, tables: readonly string[]): Promise<Map<number, Relation & { parent: string | null }>> {
  const { rows } = await client.query<{ name: string; oid: string; relfilenode: string; parent: string | null }>(
    `select c.relname as name, c.oid::int8::text as oid, c.relfilenode::int8::text as relfilenode,
            (select h.inhparent::regclass::text from pg_inherits h where h.inhrelid = c.oid) as parent
     from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = any($1::regclass[])`, [tables]);
  return new Map(rows.map((row) => [Number(row.oid), { name: row.name, oid: Number(row.oid), relfilenode: Number(row.relfilenode), relkind: 'i', parent: row.parent }]));
}

/** The same indexes (by oid) now. */
async function indexesByOid(client: pg.Client, oids: readonly number[]): Promise<Map<number, Relation & { parent: string | null }>> {
  const { rows } = await client.query<{ name: string; oid: string; relfilenode: string; parent: string | null }>(
    `select c.relname as name, c.oid::int8::text as oid, c.relfilenode::int8::text as relfilenode,
            (select h.inhparent::regclass::text from pg_inherits h where h.inhrelid = c.oid) as parent
     from pg_class c where c.oid = any($1::oid[])`, [oids]);
  return new Map(rows.map((row) => [Number(row.oid), { name: row.name, oid: Number(row.oid), relfilenode: Number(row.relfilenode), relkind: 'i', parent: row.parent }]));
}

async function scalar(client: pg.Client, sql: string, params: unknown[] = []): Promise<string> {
  const { rows } = await client.query<{ v: string }>(sql, params);
  return String(rows[0]!.v);
}

/** A digest of every history row written before the migration (ids below `belowId`): events with their bodies, deliveries, attempts. */
async function historyDigest(client: pg.Client, eventTable: string, deliveryTable: string, attemptTable: string, belowId: string): Promise<{ events: string; deliveries: string; attempts: string }> {
  return {
    events: await scalar(client, `select md5(string_agg(id || ':' || md5(body) || ':' || account_id || ':' || received_at::text || ':' || coalesce(dedupe_key, ''), ',' order by id)) as v from ${eventTable} where id < $1`, [belowId]),
    deliveries: await scalar(client, `select md5(string_agg(event_id || ':' || destination_id || ':' || status || ':' || attempt_count || ':' || coalesce(next_attempt_at::text, ''), ',' order by event_id, destination_id)) as v from ${deliveryTable} where event_id < $1`, [belowId]),
    attempts: await scalar(client, `select md5(string_agg(id || ':' || event_id || ':' || n || ':' || coalesce(response_status::text, ''), ',' order by id)) as v from ${attemptTable} where event_id < $1`, [belowId]),
  };
}

async function counts(client: pg.Client, tables: readonly string[]): Promise<number[]> {
  const out: number[] = [];
  for (const table of tables) out.push(Number(await scalar(client, `select count(*) as v from ${table}`)));
  return out;
}

// ---------------------------------------------------------------------------------
// Figures

interface Step {
  sql: string;
  tookMs: number;
  endMs: number;
}

/** The migration's statements from the ORM's query log (`[query] <sql> [took N ms, …]`). */
function queryLogger(steps: Step[], recording: () => boolean): (message: string) => void {
  return (message) => {
    if (!recording()) return;
    const plain = message.replace(/\u001b\[\d+m/g, '');
    const match = /^\[query\] ([\s\S]*?) \[took (\d+) ms/.exec(plain);
    if (match) steps.push({ sql: match[1]!.replace(/\s+/g, ' ').trim(), tookMs: Number(match[2]), endMs: performance.now() });
  };
}

function histogram(latencies: readonly number[]): string[] {
  const counts = new Array<number>(BUCKETS.length + 1).fill(0);
  for (const latency of latencies) {
    const bucket = BUCKETS.findIndex((bound) => latency < bound);
    counts[bucket === -1 ? BUCKETS.length : bucket]!++;
  }
  const labels = [...BUCKETS.map((bound, i) => `${i === 0 ? 0 : BUCKETS[i - 1]}-${bound} ms`), `>= ${BUCKETS.at(-1)} ms`];
  const lines: string[] = [];
  counts.forEach((count, i) => {
    if (count > 0) lines.push(`    ${labels[i]!.padEnd(14)} ${String(count).padStart(7)}  ${'#'.repeat(Math.ceil((count / latencies.length) * 50))}`);
  });
  return lines;
}

/** The longest time in [from, to] during which no insert of `inserts` completed although some were in flight. */
function longestGap(inserts: readonly Insert[], from: number, to: number): number {
  const ends = inserts.filter((i) => i.endMs >= from && i.startMs <= to).map((i) => i.endMs).sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < ends.length; i++) gap = Math.max(gap, ends[i]! - ends[i - 1]!);
  return gap;
}

function latencyLine(label: string, latencies: number[]): string {
  const sorted = [...latencies].sort((a, b) => a - b);
  return `  ${label.padEnd(30)} ${String(sorted.length).padStart(7)}  p50 ${ms(percentile(sorted, 50)).padStart(7)}  p99 ${ms(percentile(sorted, 99)).padStart(7)}  max ${ms(sorted.at(-1) ?? Number.NaN).padStart(8)}`;
}

// ---------------------------------------------------------------------------------
// The current ingest path, after the migration

async function currentIngest(orm: Orm, accounts: readonly LegacyAccount[], durationS: number): Promise<{ ids: string[]; latencies: number[] }> {
  const ids: string[] = [];
  const latencies: number[] = [];
  const deadline = performance.now() + durationS * 1000;
  const known = new Set<string>();
  await Promise.all([0, 1, 2, 3].map(async (worker) => {
    for (let seq = 0; performance.now() < deadline && !isInterrupted(); seq++) {
      const batch: NewEvent[] = accounts.map((account, i) => {
        const body = jsonBody(BODY_BYTES, { seq, worker, i });
        return {
          id: newId('event'), accountId: account.accountId, endpointId: account.endpointId, type: 'current.ingest', method: 'POST', path: '', query: '',
          headers: { 'content-type': 'application/json' }, body, contentType: 'application/json', size: body.length, receivedAt: new Date(), status: 'pending', dedupeKey: null,
        };
      });
      const started = performance.now();
      const outcomes = await insertEvents(orm, batch, known);
      latencies.push(performance.now() - started);
      outcomes.forEach((outcome, i) => {
        if (outcome.stored) ids.push(batch[i]!.id);
      });
    }
  }));
  return { ids, latencies };
}

// ---------------------------------------------------------------------------------

async function main(): Promise<number> {
  const events = Math.round(positiveNumber('BENCH_EVENTS', 1_000_000));
  const rate = positiveNumber('BENCH_RATE', 400);
  const connections = Math.max(1, wholeNumber('BENCH_CONNECTIONS', 4));
  const keyedConnections = wholeNumber('BENCH_KEYED_CONNECTIONS', 1);
  const baselineS = seconds('BENCH_BASELINE_S', 5, false);
  const afterS = seconds('BENCH_AFTER_S', 3, false);
  const slowReaderS = seconds('BENCH_SLOW_READER_S', 0, true);
  const pauseGoalMs = positiveNumber('BENCH_PAUSE_GOAL_MS', 2000);
  const loadBefore = loadavg();
  const database = await createBenchDatabase(databaseServerUrl());
  const url = database.url;

  const steps: Step[] = [];
  let recording = false;
  const orm = await createOrm({ databaseUrl: url, debug: true, logger: queryLogger(steps, () => recording) });
  onCleanup('bench ORM', () => orm.close());
  log(`migrating to ${PREVIOUS_RELEASE_MIGRATION} (the previous release)`);
  await orm.migrator.up({ to: PREVIOUS_RELEASE_MIGRATION });

  const client = new pg.Client({ connectionString: withApplicationName(url, 'bench_check') });
  await client.connect();
  onCleanup('bench database connection', () => client.end());
  const accounts = await createLegacyAccounts(client, PLANS);
  const fillEndMs = Date.now() - 60_000;
  const fillStartMs = fillEndMs - 6.5 * DAY_MS;
  log(`writing ${events.toLocaleString('en')} events as the previous release stored them`);
  const fillStarted = performance.now();
  await fillLegacyHistory(client, accounts, {
    events, fromMs: fillStartMs, toMs: fillEndMs, bodyBytes: BODY_BYTES,
    onChunk: (written) => log(`history: ${written.toLocaleString('en')} of ${events.toLocaleString('en')} events written (${((performance.now() - fillStarted) / 1000).toFixed(0)} s)`),
  });
  log('vacuum analyze');
  await client.query('vacuum (analyze) event, delivery, attempt');
  const fillS = (performance.now() - fillStarted) / 1000;
  const sizes = (await client.query<{ t: string; size: string }>(
    `select t, pg_size_pretty(pg_total_relation_size(t::regclass)) as size from unnest(array['event', 'delivery', 'attempt']) as t`)).rows;
  const [eventsBefore, deliveriesBefore, attemptsBefore] = await counts(client, HISTORY_TABLES);
  const tablesBefore = await relations(client, HISTORY_TABLES);
  const indexesBefore = await indexesOf(client, HISTORY_TABLES);
  if (indexesBefore.size !== LEGACY_INDEX_COUNT) throw new Error(`the previous release's tables have ${indexesBefore.size} indexes, expected ${LEGACY_INDEX_COUNT}`);
  const belowId = firstIdAt('event', fillEndMs + 1);
  log('digest of the history');
  const digestBefore = await historyDigest(client, 'event', 'delivery', 'attempt', belowId);
  const openBefore = Number(await scalar(client, `select count(*) as v from delivery where event_id < $1 and ${OPEN_DELIVERY}`, [belowId]));

  // Ingest of the previous release, before, during and after the migrations.
  const perConnection = rate / connections;
  const plain = await Promise.all(Array.from({ length: connections }, (_, i) => startIngestLoop(url, accounts, perConnection, false, i)));
  const keyed = await Promise.all(Array.from({ length: keyedConnections }, (_, i) => startIngestLoop(url, accounts, perConnection, true, connections + i)));
  const sampler = startSampler(url);
  log(`ingest of the previous release: ${rate} events/s over ${connections} connections${keyedConnections ? ` (+ ${keyedConnections} keyed)` : ''}; ${baselineS} s before the migration`);
  await sleep(baselineS * 1000);
  const baselineEnd = performance.now();

  const reader = slowReaderS > 0 ? startSlowReader(url, slowReaderS) : undefined;
  if (reader) await sleep(200);
  log(`migrating to the latest (${MEASURED.join(', ')})`);
  // Each migration's span, from the migrator's own events.
  const windows: { name: string; startMs: number; endMs: number }[] = [];
  orm.migrator.on('migrating', ({ name }) => {
    windows.push({ name, startMs: performance.now(), endMs: Number.NaN });
    log(`migration ${name}`);
  });
  orm.migrator.on('migrated', ({ name }) => {
    const window = windows.find((w) => w.name === name);
    if (window) window.endMs = performance.now();
  });
  recording = true;
  const migrationStart = performance.now();
  const applied = await migrateToLatest(orm);
  const migrationEnd = performance.now();
  recording = false;
  const readerQueries = await reader?.stop();
  log(`migrated in ${((migrationEnd - migrationStart) / 1000).toFixed(2)} s; ${afterS} s more of the previous release's ingest`);
  await sleep(afterS * 1000);
  for (const loop of [...plain, ...keyed]) await loop.stop();
  await sampler.stop();

  // Checks.
  const problems: string[] = [];
  const plainInserts = plain.flatMap((loop) => loop.inserts);
  const keyedInserts = keyed.flatMap((loop) => loop.inserts);
  const committed = plainInserts.filter((i) => i.id).map((i) => i.id!);
  const keyedCommitted = keyedInserts.filter((i) => i.id).map((i) => i.id!);
  const plainErrors = plainInserts.filter((i) => i.error);
  const keyedErrors = keyedInserts.filter((i) => i.error);
  if (plainErrors.length > 0) problems.push(`${plainErrors.length} plain ingest statement(s) of the previous release failed, first: ${plainErrors[0]!.error}`);
  const missing = MEASURED.filter((name) => !applied.includes(name));
  if (applied[0] !== MEASURED[0] || missing.length > 0) problems.push(`migrations applied: ${applied.join(', ') || 'none'}, expected ${MEASURED.join(', ')} from the first`);

  const after = await relations(client, [...HISTORY_TABLES, ...HISTORY_TABLES.map(legacyTable)]);
  for (const table of HISTORY_TABLES) {
    if (after.get(table)?.relkind !== 'p') problems.push(`${table} has relkind ${after.get(table)?.relkind}, expected p`);
    const legacy = after.get(legacyTable(table));
    const before = tablesBefore.get(table)!;
    if (!legacy || legacy.oid !== before.oid || legacy.relfilenode !== before.relfilenode) {
      problems.push(`${legacyTable(table)} is not the old ${table} table as it was (oid ${before.oid} file ${before.relfilenode} before, ${legacy?.oid} file ${legacy?.relfilenode} after): rows were copied`);
    }
  }
  const indexesAfter = await indexesByOid(client, [...indexesBefore.keys()]);
  const rebuilt = [...indexesBefore.values()].filter((before) => indexesAfter.get(before.oid)?.relfilenode !== before.relfilenode).map((before) => before.name);
  const attached = [...indexesAfter.values()].filter((index) => index.parent !== null);
  if (rebuilt.length > 0) problems.push(`index(es) rebuilt or gone: ${rebuilt.join(', ')}`);
  if (attached.length !== ATTACHED_LEGACY_INDEXES) problems.push(`${attached.length} of the old indexes are partitions of the parents' indexes, expected ${ATTACHED_LEGACY_INDEXES} (event account and endpoint, attempt event)`);
  const deliveryIndexes = [...indexesBefore.values()].filter((before) => before.name.startsWith('delivery_')).map((before) => `${before.name} → ${indexesAfter.get(before.oid)?.name}`);
  const misnamed = deliveryIndexes.filter((pair) => { const [was, is] = pair.split(' → '); return is !== was!.replace(/^delivery_/, 'delivery_r0_'); });
  if (misnamed.length > 0) problems.push(`the old delivery indexes are not renamed delivery_r0_…: ${misnamed.join(', ')}`);
  // A partitioned index is valid once every partition has its index attached: class 0's included.
  const invalid = (await client.query<{ name: string }>(`select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = any($1::regclass[]) and not i.indisvalid`, [HISTORY_TABLES])).rows.map((row) => row.name);
  if (invalid.length > 0) problems.push(`the parents' index(es) ${invalid.join(', ')} are not valid: a class 0 partition lacks them`);
  const parentIndexes = Number(await scalar(client, `select count(*) as v from pg_index where indrelid = any($1::regclass[])`, [HISTORY_TABLES]));

  const acknowledged = [...committed, ...keyedCommitted];
  const stored = Number(await scalar(client, `select count(*) as v from event_r0 where id = any($1::text[])`, [acknowledged]));
  const storedDeliveries = Number(await scalar(client, `select count(*) as v from delivery where event_id = any($1::text[]) and retention_class = 0`, [acknowledged]));
  // none delivered them: each is open, so in the queue whether it was stored before 021 (moved by its step 3) or after (layout 1)
  const queuedDeliveries = Number(await scalar(client, `select count(*) as v from delivery_open where event_id = any($1::text[])`, [acknowledged]));
  const lost = acknowledged.length - stored;
  if (lost !== 0) problems.push(`${lost} ingested event(s) committed by the previous release's ingest missing from event_r0`);
  if (storedDeliveries !== acknowledged.length) problems.push(`${acknowledged.length - storedDeliveries} ingested event(s) without their class 0 delivery`);
  if (queuedDeliveries !== acknowledged.length) problems.push(`${acknowledged.length - queuedDeliveries} ingested event(s)' deliveries are not in delivery_open (the queue)`);
  const openLeft = Number(await scalar(client, `select count(*) as v from delivery_r0 where ${OPEN_DELIVERY}`));
  const openMoved = Number(await scalar(client, `select count(*) as v from delivery_open where event_id < $1`, [belowId]));
  if (openLeft !== 0) problems.push(`${openLeft} open deliveries left in delivery_r0, where no claim reads them`);
  if (openMoved !== openBefore) problems.push(`delivery_open holds ${openMoved} of the history's deliveries, expected its ${openBefore} open ones`);
  const [eventsAfter, deliveriesAfter, attemptsAfter] = await counts(client, HISTORY_TABLES);
  const [r0Events] = await counts(client, ['event_r0']);
  if (eventsAfter !== eventsBefore! + acknowledged.length) problems.push(`event holds ${eventsAfter} rows, expected ${eventsBefore} + ${acknowledged.length}`);
  if (r0Events !== eventsAfter) problems.push(`event_r0 holds ${r0Events} of event's ${eventsAfter} rows before the current ingest ran`);
  if (deliveriesAfter !== deliveriesBefore! + acknowledged.length) problems.push(`delivery holds ${deliveriesAfter} rows, expected ${deliveriesBefore} + ${acknowledged.length}`);
  if (attemptsAfter !== attemptsBefore) problems.push(`attempt holds ${attemptsAfter} rows, expected ${attemptsBefore}`);
  log('digest of the history after');
  // deliveries over the whole tree: the open ones moved to delivery_open (only their layout changed, which the digest leaves out)
  const digestAfter = await historyDigest(client, legacyTable('event'), 'delivery', legacyTable('attempt'), belowId);
  for (const part of ['events', 'deliveries', 'attempts'] as const) {
    if (digestAfter[part] !== digestBefore[part]) problems.push(`the history's ${part} differ after the migration (digest ${digestBefore[part]} before, ${digestAfter[part]} after)`);
  }

  // The current ingest path: each account's class.
  log(`current ingest (insertEvents) for ${afterS} s`);
  recording = false;
  const current = await currentIngest(orm, accounts, afterS);
  const placement = (await client.query<{ leaf: string; plan: string; events: string; deliveries: string; queued: string; attempt_leaf: string }>(`
    select e.tableoid::regclass::text as leaf, a.plan, count(*) as events,
           count(*) filter (where d.retention_class = e.retention_class) as deliveries,
           count(*) filter (where d.tableoid = 'delivery_open'::regclass) as queued,
           -- where this class's attempts for these events would go: the attempt leaf with the same bounds
           replace(e.tableoid::regclass::text, 'event_', 'attempt_') as attempt_leaf
    from event e join account a on a.id = e.account_id join delivery d on d.event_id = e.id
    where e.id = any($1::text[]) group by 1, 2 order by 2, 1`, [current.ids])).rows;
  const expectedClass: Record<string, number> = { free: 7, pro: 90, enterprise: 365 };
  for (const row of placement) {
    if (!new RegExp(`^event_r${expectedClass[row.plan]}_\\d{8}$`).test(row.leaf)) problems.push(`${row.events} ${row.plan} event(s) stored in ${row.leaf}, not a class ${expectedClass[row.plan]} partition`);
    if (row.deliveries !== row.events) problems.push(`${row.leaf}: ${row.events} events but ${row.deliveries} deliveries of their class`);
    if (row.queued !== row.events) problems.push(`${row.leaf}: ${row.events} events but ${row.queued} deliveries in delivery_open`);
    if ((await scalar(client, 'select to_regclass($1) is not null as v', [row.attempt_leaf])) !== 'true') problems.push(`no attempt partition ${row.attempt_leaf} beside ${row.leaf}`);
  }
  const placed = placement.reduce((sum, row) => sum + Number(row.events), 0);
  if (placed !== current.ids.length || current.ids.length === 0) problems.push(`current ingest stored ${current.ids.length} events, ${placed} found`);

  // Figures.
  const total = migrationEnd - migrationStart;
  // The log's statements by migration: each one's ends with its row in hook_migrations.
  const byMigration: { name: string; steps: Step[] }[] = [];
  let open: Step[] = [];
  for (const step of steps) {
    const done = /insert into "hook_migrations" \("name"\) values \('([^']+)'\)/.exec(step.sql);
    if (done) {
      byMigration.push({ name: done[1]!, steps: open });
      open = [];
    } else if (!/^set names|information_schema|pg_database|from "hook_migrations"/.test(step.sql)) {
      open.push(step);
    }
  }
  const sum = (list: readonly Step[]): number => list.reduce((acc, s) => acc + s.tookMs, 0);
  const stepsOf = (name: string): Step[] => byMigration.find((m) => m.name === name)?.steps ?? [];
  /** A migration's statements cut into steps: each step after the first starts at the first statement matching its pattern after the previous step's start. */
  const cut = (list: readonly Step[], starts: readonly RegExp[]): (Step[] | undefined)[] => {
    const at = [0];
    for (const pattern of starts) {
      const found = list.findIndex((step, i) => i > at.at(-1)! && pattern.test(step.sql));
      if (found < 0) return [undefined, ...starts.map(() => undefined)];
      at.push(found);
    }
    return at.map((i, n) => list.slice(i, at[n + 1] ?? list.length));
  };
  const own = stepsOf('019-partitioned-history');
  const [step1, swap019, step3] = cut(own, [/^do \$\w+\$.*attach partition event_r0/, /^create or replace function/]);
  const own021 = stepsOf('021-partitioned-deliveries');
  const [steps021a, swap021, move021, leaves021] = cut(own021, [/lock table delivery in access exclusive mode/, /^do \$move\$/, /^create or replace function/]);
  const later = byMigration.filter((m) => !['019-partitioned-history', '021-partitioned-deliveries'].includes(m.name));
  const statementLines = (list: readonly Step[] | undefined): string[] => (list ?? []).map((s) => `      ${String(s.tookMs).padStart(7)} ms  ${s.sql.slice(0, 110)}`);

  const during = plainInserts.filter((i) => i.endMs >= migrationStart && i.startMs <= migrationEnd);
  const duringLatencies = during.map((i) => i.endMs - i.startMs);
  const baselineLatencies = plainInserts.filter((i) => i.endMs < baselineEnd).map((i) => i.endMs - i.startMs);
  const afterLatencies = plainInserts.filter((i) => i.startMs > migrationEnd).map((i) => i.endMs - i.startMs);
  const keyedDuring = keyedInserts.filter((i) => i.endMs >= migrationStart && i.startMs <= migrationEnd);
  const longestWait = Math.max(0, ...duringLatencies);
  const gap = longestGap(plainInserts, migrationStart, migrationEnd);
  if (longestWait > pauseGoalMs) problems.push(`an ingest statement waited ${ms(longestWait)} ms during the migrations (goal < ${pauseGoalMs} ms)`);
  const waits = lockWaits(sampler.samples, migrationStart, migrationEnd);
  const slowest = [...during].sort((a, b) => (b.endMs - b.startMs) - (a.endMs - a.startMs)).slice(0, 5);
  const firstKeyedError = keyedErrors[0];
  // Per migration: the plain ingest statements that overlapped it (one overlapping two counts in both).
  const perMigration = windows.map((w) => {
    const overlapping = plainInserts.filter((i) => i.endMs >= w.startMs && i.startMs <= w.endMs);
    const latencies = overlapping.map((i) => i.endMs - i.startMs);
    return {
      name: w.name, s: (w.endMs - w.startMs) / 1000, latencies, longestWaitMs: Math.max(0, ...latencies),
      gapMs: longestGap(plainInserts, w.startMs, w.endMs), keyedFailed: keyedErrors.filter((i) => i.endMs >= w.startMs && i.startMs <= w.endMs).length,
      waits: lockWaits(sampler.samples, w.startMs, w.endMs),
    };
  });

  const at = (t: number): string => `+${((t - migrationStart) / 1000).toFixed(2)} s`;
  const out = [
    '',
    `Online upgrade benchmark: 018 → ${applied.at(-1) ?? '?'} on ${eventsBefore!.toLocaleString('en')} events (1 KiB bodies), ${deliveriesBefore!.toLocaleString('en')} deliveries (${openBefore.toLocaleString('en')} open), ${attemptsBefore!.toLocaleString('en')} attempts over ${accounts.length} accounts`,
    `  sizes before: ${sizes.map((row) => `${row.t} ${row.size}`).join(', ')}; history written in ${fillS.toFixed(0)} s (not measured)`,
    `  ingest of the previous release meanwhile: ${rate} events/s over ${connections} connections${keyedConnections ? `, + ${keyedConnections} connection(s) with dedupe keys at ${round(perConnection, 1)}/s` : ''}${slowReaderS ? `; a reader holding event and delivery ${slowReaderS} s per query during the migrations (${readerQueries} queries)` : ''}`,
    machineLine(loadBefore),
    `Database: ${database.description}`,
    `Code: ${codeVersion() ?? 'unknown'}`,
    '',
    `migrations applied: ${applied.join(', ')} in ${(total / 1000).toFixed(2)} s`,
    'per migration: time, and the previous release\'s plain ingest statements that ran meanwhile (ms):',
    ...perMigration.map((m) => `  ${m.name.padEnd(28)} ${m.s.toFixed(2).padStart(7)} s  ${String(m.latencies.length).padStart(6)} statements  p50 ${ms(percentile([...m.latencies].sort((a, b) => a - b), 50)).padStart(7)}  longest wait ${ms(m.longestWaitMs).padStart(8)}  longest gap ${ms(m.gapMs).padStart(8)}${keyedConnections ? `  keyed failed ${m.keyedFailed}` : ''}`),
    '',
    `019-partitioned-history: ${(sum(own) / 1000).toFixed(2)} s`,
    `  step 1 (column, check validated, unique indexes built concurrently): ${step1 ? `${(sum(step1) / 1000).toFixed(2)} s` : 'not found in the log'}`,
    ...statementLines(step1?.filter((s) => !/^set names/.test(s.sql))),
    `  step 2 (one transaction: rename, partitioned parents, attach as class 0): ${swap019 ? `${sum(swap019)} ms` : 'not found in the log'}`,
    `  step 3 (functions, partitions of the classes in use): ${step3 ? `${(sum(step3) / 1000).toFixed(2)} s` : 'not found in the log'}`,
    ...statementLines(step3),
    ...later.flatMap((m) => [
      `${m.name}: ${(sum(m.steps) / 1000).toFixed(2)} s (${m.steps.length} statements; the slowest below)`,
      ...statementLines([...m.steps].sort((a, b) => b.tookMs - a.tookMs).slice(0, 5)),
    ]),
    `021-partitioned-deliveries: ${(sum(own021) / 1000).toFixed(2)} s`,
    `  step 1 (layout column, its check validated): ${steps021a ? `${(sum(steps021a) / 1000).toFixed(2)} s` : 'not found in the log'}`,
    ...statementLines(steps021a),
    `  step 2 (one transaction: rename, partitioned tree, attach delivery_r0): ${swap021 ? `${sum(swap021)} ms` : 'not found in the log'}`,
    `  step 3 (the old table's open deliveries moved to delivery_open: the history's ${openBefore.toLocaleString('en')}, the ingest's pending ones): ${move021 ? `${sum(move021)} ms` : 'not found in the log'}`,
    `  step 4 (functions, a delivery leaf beside every event leaf): ${leaves021 ? `${(sum(leaves021) / 1000).toFixed(2)} s` : 'not found in the log'}`,
    ...statementLines(leaves021),
    '',
    'ingest of the previous release (one event + its delivery per statement), statement latency in ms:',
    latencyLine('before the migrations', baselineLatencies),
    latencyLine('during the migrations', duringLatencies),
    latencyLine('after them', afterLatencies),
    `  longest ingest wait during the migrations: ${ms(longestWait)} ms (goal < ${pauseGoalMs} ms); longest time with no insert completing: ${ms(gap)} ms`,
    '  histogram during the migrations:',
    ...histogram(duringLatencies),
    '  slowest statements during the migrations (start, latency, what the migration ran then):',
    ...slowest.map((i) => `    ${at(i.startMs).padStart(9)}  ${ms(i.endMs - i.startMs).padStart(8)} ms  ${migrationAt(sampler.samples, i.startMs + (i.endMs - i.startMs) / 2)}`),
    `  lock waits of ingest seen by sampling every ${SAMPLE_INTERVAL_MS} ms (${sampler.samples.length} samples): ${waits.length === 0 ? 'none' : ''}`,
    ...perMigration.flatMap((m) => (m.waits.length === 0 ? [] : [
      `    during ${m.name}:`,
      ...m.waits.slice(0, 4).map((w) => `    ${ms(w.longestMs).padStart(8)} ms (${w.samples} samples) waiting for ${w.what}, held by ${w.heldBy}`),
    ])),
    keyedConnections
      ? `keyed ingest of the previous release (ON CONFLICT (endpoint_id, dedupe_key)): ${keyedCommitted.length} stored, ${keyedErrors.length} failed${firstKeyedError ? ` from ${at(firstKeyedError.startMs)}: ${firstKeyedError.error}` : ''}; during the migrations max ${ms(Math.max(0, ...keyedDuring.map((i) => i.endMs - i.startMs)))} ms`
      : 'keyed ingest of the previous release: not run (BENCH_KEYED_CONNECTIONS=0)',
    '',
    `rows: ${committed.length + keyedCommitted.length} events committed by the previous release's ingest (${during.length} plain statements during the migrations); ${stored} of them in event_r0 with ${storedDeliveries} class 0 deliveries (${queuedDeliveries} in delivery_open): ${lost} lost`,
    `  event ${eventsBefore} → ${eventsAfter} (all in event_r0), delivery ${deliveriesBefore} → ${deliveriesAfter}, attempt ${attemptsBefore} → ${attemptsAfter}; history digest (ids, bodies, deliveries, attempts) ${digestAfter.events === digestBefore.events && digestAfter.deliveries === digestBefore.deliveries && digestAfter.attempts === digestBefore.attempts ? 'identical' : 'DIFFERENT'}`,
    `  the history's open deliveries: ${openBefore} before, ${openMoved} in delivery_open after; open rows left in delivery_r0: ${openLeft}`,
    `  partitioned: ${HISTORY_TABLES.map((t) => `${t} ${after.get(t)?.relkind === 'p' ? 'yes' : 'no'}`).join(', ')}; the old tables kept as they were (same oid and file): ${HISTORY_TABLES.map((t) => `${t} as ${legacyTable(t)} ${after.get(legacyTable(t))?.oid === tablesBefore.get(t)!.oid && after.get(legacyTable(t))?.relfilenode === tablesBefore.get(t)!.relfilenode ? 'yes' : 'NO'}`).join(', ')}`,
    `  old indexes kept as they were (same oid and file): ${LEGACY_INDEX_COUNT - rebuilt.length} of ${LEGACY_INDEX_COUNT}; ${attached.length} of them attached to the parents' indexes (${attached.map((index) => `${index.name} → ${index.parent}`).join(', ')}); delivery's renamed (${deliveryIndexes.join(', ')}); the ${parentIndexes} indexes of event, delivery and attempt all valid: ${invalid.length === 0 ? 'yes' : 'NO'}`,
    '',
    `current ingest (insertEvents, 4 loops of ${accounts.length}-event batches, ${afterS} s): ${current.ids.length} events, batch p50 ${ms(percentile([...current.latencies].sort((a, b) => a - b), 50))} ms`,
    ...placement.map((row) => `  ${row.plan.padEnd(10)} ${row.leaf.padEnd(24)} ${String(row.events).padStart(6)} events, ${String(row.deliveries).padStart(6)} deliveries of the same class, ${String(row.queued).padStart(6)} in delivery_open (attempts would go to ${row.attempt_leaf})`),
    '',
    ...resultLines(problems, `migrated online: longest ingest wait ${ms(longestWait)} ms, 0 rows lost, nothing copied or rebuilt`),
  ];
  writeReport(out, () => ({
    events: eventsBefore,
    migrations: applied,
    migration_s: round(total / 1000, 3),
    migration_019_s: round(sum(own) / 1000, 3),
    step1_s: step1 ? round(sum(step1) / 1000, 3) : null,
    step2_ms: swap019 ? sum(swap019) : null,
    step3_s: step3 ? round(sum(step3) / 1000, 3) : null,
    migration_021_swap_ms: swap021 ? sum(swap021) : null,
    migration_021_move_ms: move021 ? sum(move021) : null,
    per_migration: perMigration.map((m) => ({ name: m.name, s: round(m.s, 3), inserts_during: m.latencies.length, longest_ingest_wait_ms: round(m.longestWaitMs, 1), longest_gap_ms: round(m.gapMs, 1), keyed_failed: m.keyedFailed })),
    longest_ingest_wait_ms: round(longestWait, 1),
    longest_gap_ms: round(gap, 1),
    inserts_during: during.length,
    committed: acknowledged.length,
    lost,
    open_moved: openMoved,
    open_left_in_r0: openLeft,
    keyed_failed: keyedErrors.length,
    problems,
  }));
  return problems.length === 0 ? 0 : 1;
}

await runBench(main);
