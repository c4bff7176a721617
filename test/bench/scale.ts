/**
 * `npm run bench:scale`: the relay on a large history (issue 29, Performance). An
 * embedded PostgreSQL is started in a temporary directory, migrated by a relay, given ten
 * accounts over the API, and filled straight in SQL (scale-fill.ts: INSERT … SELECT
 * generate_series through the partitioned parents, on two connections) with
 * HOOK_BENCH_SCALE_EVENTS events (default 10,000,000; one pro account holds 60%) over 80
 * days, each with a 1 KiB JSON body, one or two deliveries and their attempts (2% failed,
 * 0.5% retrying). Then, against a relay (a child process, as every bench runs it) on that
 * database, with each account's API key:
 *
 *   1. GET /v1/events for the big account with each filter (none, status=failed,
 *      status=retrying, a type of 14%, a type matching nothing, an endpoint of 2% with a
 *      status none of its events has, a one-day window, q matching nothing, q matching 1%):
 *      the first page, and a later one (following next_cursor), BENCH_LIST_RUNS times each
 *      after two warm-up requests: p50/p95/max, goal p95 < 50 ms; then the first page
 *      unfiltered and status=failed of every account.
 *   2. Ingest throughput (autocannon, 50 connections, 1 KiB bodies) on the full database
 *      against a relay on an empty one on the same server, ABBA (empty, full, full,
 *      empty) three times: goal full/empty ≥ 0.9 (mean req/s; the ratio of medians too);
 *      CPU per request of both is reported too (PostgreSQL's: every postgres process on the
 *      machine, background work included, so the autovacuum workers seen during each run
 *      are reported beside it).
 *   3. Retention: one expired day dropped (dropExpiredPartitions with a `now` just past one
 *      class-7 leaf's expiry), goal < 1 s and no dead tuple left in the history tables;
 *      another day with the rows of an account that upgraded since (moved to class 90);
 *      then a whole retention pass (another day, and the row-by-row pass over class 0
 *      history written for it) run as the auto_explain role.
 *   4. Bytes on disk per stored event (event + delivery + attempt, every partition), and
 *      what the delivery worker's statistics refresh (ANALYZE delivery_open) costs.
 *
 * Dead tuples are counted in the history's partitions, and apart in the queue
 * (delivery_open): the fill leaves 0.5% of deliveries retrying on every day of the 80, so a
 * dropped day deletes its retrying ones from the queue by key (a real history has open
 * deliveries only as old as the retry schedule, or a paused destination's).
 *
 * The plans of every list request and of the retention statements (auto_explain with
 * ANALYZE and BUFFERS in a relay and an ORM connected as a role that loads it: what the
 * code runs, with its values; each read run again with EXPLAIN (ANALYZE, BUFFERS), which
 * adds its planning time; scale-plans.ts) are written to
 * HOOK_BENCH_SCALE_PLANS (default test/artifacts/bench-scale/plans-<time>.txt); the path
 * is printed.
 *
 * The fill turns autovacuum off and allows 8 GB of WAL between checkpoints while it runs
 * (synchronous_commit off in its sessions; no table is unlogged), then runs VACUUM
 * (ANALYZE) on every leaf (what autovacuum would have done: the partitioned parents are
 * not analysed, as autovacuum never does) and puts the settings back.
 *
 * Exit codes: 0 measured (a goal not met is reported, not failed); 1 a request answered
 * other than 2xx or not at all, or the drop did not drop what it should; 2 bad settings.
 *
 * Environment (all optional):
 *   HOOK_BENCH_SCALE_EVENTS   events to fill (default 10000000)
 *   HOOK_BENCH_SCALE_PLANS    file the plans are written to
 *   BENCH_LIST_RUNS           measured requests per list case (default 20)
 *   BENCH_DURATION_S          measured seconds per ingest run (default 10)
 *   BENCH_WARMUP_S            warm-up seconds before each ingest run (default 2)
 *   BENCH_FILL_CONNECTIONS    connections writing the history (default 2)
 *   BENCH_INGEST_ROUNDS       ABBA rounds of the ingest comparison (default 3)
 *   BENCH_JSON=1              also print a one-line JSON summary as the last stdout line
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { createOrm, dropExpiredPartitions, pruneExpiredEvents, startEmbeddedPostgres, type Orm, type PruneResult } from '@hook/db';
import {
  BODY_BYTES, DAY_MS, EVENT_TYPES, fillHistory, HISTORY_LEAVES, SCALE_ACCOUNTS, SEARCH_HIT, vacuumLeaves, windowStart, writeLegacyHistory, type FilledAccount,
} from './scale-fill.ts';
import { createExplainRole, formatStatements, logOffset, replayable, statementsBetween } from './scale-plans.ts';
import {
  codeVersion, createEndpoint, figures, jsonBody, log, machineLine, onCleanup, percentile, positiveNumber, postJson, REPO_ROOT, resultLines,
  round, runBench, runLoad, sampleCpu, seconds, startRelay, writeReport, type ServerProcess, type TargetFigures,
} from './support.ts';

const DEFAULT_EVENTS = 10_000_000;
const LIST_P95_GOAL_MS = 50;
const INGEST_RATIO_GOAL = 0.9;
const DROP_GOAL_S = 1;
const WARMUP_REQUESTS = 2;
/** The later page measured: reached by following next_cursor from the first. */
const LATER_PAGE = 5;
const INGEST_CONNECTIONS = 50;
/** Load on each relay before the measured runs, not counted. */
const INGEST_RELAY_WARMUP_S = 5;
/** Legacy (class 0) events written before the retention pass, per million filled (at least 1,000): 1%. */
const LEGACY_PER_MILLION = 10_000;
const RELAY_ENV = { HOOK_SIGNUP_RATE_LIMIT: '0', HOOK_RETENTION_INTERVAL: '24d' };

// ---------------------------------------------------------------------------------
// Database

interface Cluster {
  url: string;
  urlFor(database: string): string;
  logFile: string;
}

async function startCluster(): Promise<Cluster> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hook-bench-scale-'));
  onCleanup(`temporary directory ${dataDir}`, async () => rmSync(dataDir, { recursive: true, force: true }));
  log(`starting embedded PostgreSQL in ${dataDir}`);
  const embedded = await startEmbeddedPostgres({ dataDir, database: 'hook_bench', log });
  onCleanup('embedded PostgreSQL', () => embedded.stop());
  return { url: embedded.url, urlFor: (database) => embedded.urlFor(database), logFile: join(dataDir, 'postgres.log') };
}

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Server settings for the fill (ALTER SYSTEM, reloaded), or back to the defaults. */
async function fillSettings(url: string, on: boolean): Promise<void> {
  await withClient(url, async (client) => {
    const settings: [string, string][] = [['max_wal_size', `'8GB'`], ['checkpoint_timeout', `'1h'`], ['autovacuum', 'off']];
    for (const [name, value] of settings) await client.query(on ? `alter system set ${name} = ${value}` : `alter system reset ${name}`);
    await client.query('select pg_reload_conf()');
  });
}

interface DeadTuples {
  /** In the history's partitions: every leaf but the queue. */
  all: number;
  /** In the queue (delivery_open): open deliveries, whose rows churn as they are worked; a drop deletes those of its period by key. */
  queue: number;
  /** Per history table (every leaf of it, or the table itself where it is not partitioned). */
  byTable: Record<string, number>;
  /** In class 0's leaves (`*_r0`): the row-by-row pass's. */
  classZero: number;
}

/** Dead tuples in every leaf of the history tables (pg_stat_user_tables.n_dead_tup). */
async function deadTuples(client: pg.Client): Promise<DeadTuples> {
  const { rows } = await client.query<{ name: string; dead: string; queue: string; class_zero: string }>(`
    select p.name, coalesce(sum(s.n_dead_tup) filter (where s.relname <> 'delivery_open'), 0) as dead,
           coalesce(sum(s.n_dead_tup) filter (where s.relname = 'delivery_open'), 0) as queue,
           coalesce(sum(s.n_dead_tup) filter (where s.relname ~ '_r0$'), 0) as class_zero
    from ${HISTORY_LEAVES}
    join pg_stat_user_tables s on s.relid = t.relid
    group by p.name`);
  const byTable: Record<string, number> = {};
  let all = 0;
  let queue = 0;
  let classZero = 0;
  for (const row of rows) {
    byTable[row.name] = Number(row.dead);
    all += Number(row.dead);
    queue += Number(row.queue);
    classZero += Number(row.class_zero);
  }
  return { all, queue, byTable, classZero };
}

/** `before → after` per table, for the report. */
function deadChange(before: DeadTuples, after: DeadTuples): string {
  return ['event', 'delivery', 'attempt'].map((table) => `${table} ${n(before.byTable[table] ?? 0)} → ${n(after.byTable[table] ?? 0)}`).join(', ') +
    `; the queue (delivery_open) ${n(before.queue)} → ${n(after.queue)}`;
}

/** deadTuples a second after the sessions that changed the tables ended (a session sends its statistics as it ends). */
async function deadTuplesSoon(client: pg.Client): Promise<DeadTuples> {
  await new Promise((done) => setTimeout(done, 1_000));
  return deadTuples(client);
}

interface Sizes {
  bytes: Record<'event' | 'delivery' | 'attempt', number>;
  rows: Record<'event' | 'delivery' | 'attempt', number>;
  /** Tables holding each one's rows: its leaves, or 1 where it is not partitioned. */
  leaves: Record<'event' | 'delivery' | 'attempt', number>;
}

/** pg_total_relation_size of every leaf (heap, TOAST, indexes) of each history table, and the rows (exact counts). */
async function historySizes(client: pg.Client): Promise<Sizes> {
  const sizes: Sizes = { bytes: { event: 0, delivery: 0, attempt: 0 }, rows: { event: 0, delivery: 0, attempt: 0 }, leaves: { event: 0, delivery: 0, attempt: 0 } };
  for (const table of ['event', 'delivery', 'attempt'] as const) {
    const { rows } = await client.query<{ bytes: string; leaves: string }>(
      `select coalesce(sum(pg_total_relation_size(t.relid)), 0) as bytes, count(*) as leaves from ${HISTORY_LEAVES} where p.name = $1`, [table]);
    sizes.bytes[table] = Number(rows[0]!.bytes);
    sizes.leaves[table] = Number(rows[0]!.leaves);
    const counted = await client.query<{ n: string }>(`select count(*) as n from ${table}`);
    sizes.rows[table] = Number(counted.rows[0]!.n);
  }
  return sizes;
}

// ---------------------------------------------------------------------------------
// Accounts

/** Signs up an account (its API key and id). */
async function signUp(baseUrl: string): Promise<{ apiKey: string; accountId: string }> {
  const answer = await postJson(`${baseUrl}/v1/accounts`);
  if (typeof answer.api_key !== 'string' || typeof answer.account?.id !== 'string') throw new Error(`unexpected sign-up answer: ${JSON.stringify(answer)}`);
  return { apiKey: answer.api_key, accountId: answer.account.id };
}

interface BenchAccount extends FilledAccount {
  apiKey: string;
}

/**
 * The ten accounts over the API (each endpoint made with its default destination), then in
 * SQL: each account's plan and retention, each endpoint's first destination made a URL one,
 * and a second URL destination where the shape has one.
 */
async function createAccounts(relayUrl: string, databaseUrl: string, totalEvents: number, nowMs: number): Promise<BenchAccount[]> {
  const accounts: BenchAccount[] = [];
  for (const shape of SCALE_ACCOUNTS) {
    const { apiKey, accountId } = await signUp(relayUrl);
    // enterprise while its endpoints are made (a free account may have 3); its own plan below
    await withClient(databaseUrl, (client) => client.query(`update account set plan = 'enterprise' where id = $1`, [accountId]));
    const endpointIds: string[] = [];
    for (let i = 0; i < shape.endpoints.length; i++) endpointIds.push((await createEndpoint(relayUrl, apiKey, { name: `scale-${i}` })).id);
    accounts.push({
      shape, apiKey, accountId, endpointIds, firstDestinations: [], secondDestinations: [],
      events: Math.round((totalEvents * shape.share) / 10_000), startMs: windowStart(shape.window, nowMs), endMs: nowMs,
    });
  }
  await withClient(databaseUrl, async (client) => {
    for (const account of accounts) {
      await client.query('update account set plan = $2, retention_days = $3 where id = $1', [account.accountId, account.shape.plan, account.shape.retentionDays]);
      for (const [i, endpointId] of account.endpointIds.entries()) {
        const first = await client.query<{ id: string }>(
          `update destination set type = 'url', url = $2 where endpoint_id = $1 and position = 0 returning id`, [endpointId, `https://hooks.example.com/${endpointId}/a`]);
        account.firstDestinations.push(first.rows[0]!.id);
        if (!account.shape.endpoints[i]!.twoDestinations) {
          account.secondDestinations.push(null);
          continue;
        }
        const second = `dst_${endpointId.slice(3, 13)}${randomBytes(8).toString('hex').toUpperCase()}`;
        await client.query(`
          insert into destination (id, account_id, endpoint_id, position, type, url, secret, status, created_at, updated_at)
          select $2, account_id, endpoint_id, 1, 'url', $3, secret, 'active', now(), now() from destination where id = $1`,
        [first.rows[0]!.id, second, `https://hooks.example.com/${endpointId}/b`]);
        account.secondDestinations.push(second);
      }
    }
  });
  return accounts;
}

// ---------------------------------------------------------------------------------
// List requests

interface Answer {
  ms: number;
  status: number;
  rows: number;
  nextCursor: string | null;
  scanned?: number;
  body: string;
}

async function getEvents(baseUrl: string, apiKey: string, query: Record<string, string>): Promise<Answer> {
  const url = `${baseUrl}/v1/events?${new URLSearchParams(query).toString()}`;
  const started = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
  const body = await response.text();
  const ms = performance.now() - started;
  let rows = 0;
  let nextCursor: string | null = null;
  let scanned: number | undefined;
  if (response.status === 200) {
    const page = JSON.parse(body) as { data: unknown[]; next_cursor: string | null; search_scanned?: number };
    rows = page.data.length;
    nextCursor = page.next_cursor;
    scanned = page.search_scanned;
  }
  return { ms, status: response.status, rows, nextCursor, scanned, body };
}

interface ListCase {
  name: string;
  query: Record<string, string>;
}

interface ListFigures {
  caseName: string;
  page: number;
  query: Record<string, string>;
  rows: number;
  hasNext: boolean;
  coldMs: number;
  p50: number;
  p95: number;
  max: number;
  failures: number;
}

/** `runs` timed requests of one page after WARMUP_REQUESTS untimed ones; the first answer is the cold one. */
async function measurePage(baseUrl: string, apiKey: string, caseName: string, page: number, query: Record<string, string>, runs: number, problems: string[]): Promise<ListFigures> {
  const times: number[] = [];
  let first: Answer | undefined;
  let failures = 0;
  for (let i = 0; i < WARMUP_REQUESTS + runs; i++) {
    const answer = await getEvents(baseUrl, apiKey, query);
    first ??= answer;
    if (answer.status !== 200) failures++;
    if (i >= WARMUP_REQUESTS) times.push(answer.ms);
  }
  if (failures > 0) problems.push(`GET /v1/events ${caseName} page ${page}: ${failures} answer(s) not 200, e.g. ${first!.status} ${first!.body.slice(0, 200)}`);
  times.sort((a, b) => a - b);
  return {
    caseName, page, query, rows: first!.rows, hasNext: first!.nextCursor !== null, coldMs: first!.ms,
    p50: percentile(times, 50), p95: percentile(times, 95), max: times.at(-1)!, failures,
  };
}

/** The cursor of page LATER_PAGE (following next_cursor from the first page), or where the chain ended. */
async function laterPageQuery(baseUrl: string, apiKey: string, query: Record<string, string>): Promise<{ page: number; query: Record<string, string>; chainMs: number[] } | null> {
  let cursor: string | null = null;
  const chainMs: number[] = [];
  for (let page = 1; page < LATER_PAGE; page++) {
    const answer = await getEvents(baseUrl, apiKey, cursor === null ? query : { ...query, cursor });
    chainMs.push(answer.ms);
    if (answer.status !== 200 || answer.nextCursor === null) return page === 1 ? null : { page, query: cursor === null ? query : { ...query, cursor }, chainMs };
    cursor = answer.nextCursor;
  }
  return { page: LATER_PAGE, query: { ...query, cursor: cursor! }, chainMs };
}

function listCases(big: BenchAccount, nowMs: number): ListCase[] {
  const rareEndpoint = big.endpointIds.at(-1)!; // 2% of the account's events, none of them retrying (scale-fill.ts)
  const since = new Date(nowMs - 40 * DAY_MS).toISOString();
  const until = new Date(nowMs - 39 * DAY_MS).toISOString();
  return [
    { name: 'no filter', query: {} },
    { name: 'status=failed (2%)', query: { status: 'failed' } },
    { name: 'status=retrying (0.5%)', query: { status: 'retrying' } },
    { name: `type=${EVENT_TYPES[0]} (14%)`, query: { type: EVENT_TYPES[0]! } },
    { name: 'type matching nothing', query: { type: 'no.such.type' } },
    { name: 'endpoint (2%) + status=retrying (none)', query: { endpoint_id: rareEndpoint, status: 'retrying' } },
    { name: '1-day window (since/until)', query: { since, until } },
    { name: 'q matching nothing', query: { q: 'no-such-text-5d1f' } },
    { name: `q matching 1% (${SEARCH_HIT})`, query: { q: SEARCH_HIT } },
  ];
}

// ---------------------------------------------------------------------------------
// Ingest

interface IngestRun {
  label: string;
  figures: TargetFigures;
  relayCpuUs: number;
  postgresCpuUs: number;
  /** Most autovacuum workers seen at once during the run (polled each second): PostgreSQL's CPU above counts theirs too. */
  autovacuumWorkers: number;
}

async function ingestRun(label: string, relay: ServerProcess, url: string, durationS: number, warmupS: number, body: Buffer, serverUrl: string): Promise<IngestRun> {
  if (warmupS > 0) await runLoad({ url, connections: INGEST_CONNECTIONS, durationS: warmupS, body });
  log(`ingest ${label}: ${durationS} s`);
  const watcher = new pg.Client({ connectionString: serverUrl });
  await watcher.connect();
  let autovacuumWorkers = 0;
  const poll = setInterval(() => {
    watcher.query(`select count(*)::int as n from pg_stat_activity where backend_type = 'autovacuum worker'`)
      .then(({ rows }) => { autovacuumWorkers = Math.max(autovacuumWorkers, rows[0].n); }, () => undefined);
  }, 1000);
  const before = sampleCpu([relay.pid]);
  const run = await runLoad({ url, connections: INGEST_CONNECTIONS, durationS, body });
  const after = sampleCpu([relay.pid]);
  clearInterval(poll);
  await watcher.end();
  const answered = Math.max(1, run.result.requests.total);
  return {
    label,
    figures: figures(run.result),
    relayCpuUs: before && after ? ((after.byPid.get(relay.pid)! - before.byPid.get(relay.pid)!) * 1000) / answered : Number.NaN,
    postgresCpuUs: before && after ? ((after.postgresMs - before.postgresMs) * 1000) / answered : Number.NaN,
    autovacuumWorkers,
  };
}

/**
 * The statements logged from `from` on, once the server has written the request's plan
 * (auto_explain logs it as the statement ends, a moment after the answer): polled, at most 2 s.
 */
async function loggedPlans(logFile: string, from: number): Promise<ReturnType<typeof statementsBetween>> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const logged = statementsBetween(logFile, from, logOffset(logFile));
    if (logged.some((statement) => statement.kind === 'plan') || Date.now() > deadline) return logged;
    await new Promise((done) => setTimeout(done, 10));
  }
}

// ---------------------------------------------------------------------------------
// Report helpers

const met = (ok: boolean): string => (ok ? 'met' : 'NOT MET');
const n = (value: number): string => value.toLocaleString('en');
const gb = (bytes: number): string => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
const msCell = (value: number, width = 7): string => (Number.isFinite(value) ? value.toFixed(1) : '-').padStart(width);
const dayName = (ms: number): string => new Date(ms).toISOString().slice(0, 10).replace(/-/g, '');

async function main(): Promise<number> {
  const totalEvents = Math.round(positiveNumber('HOOK_BENCH_SCALE_EVENTS', DEFAULT_EVENTS));
  const runs = Math.round(positiveNumber('BENCH_LIST_RUNS', 20));
  const durationS = seconds('BENCH_DURATION_S', 10, false);
  const warmupS = seconds('BENCH_WARMUP_S', 2, true);
  const fillConnections = Math.round(positiveNumber('BENCH_FILL_CONNECTIONS', 2));
  const ingestRounds = Math.round(positiveNumber('BENCH_INGEST_ROUNDS', 3));
  const plansFile = process.env.HOOK_BENCH_SCALE_PLANS?.trim() || join(REPO_ROOT, 'test/artifacts/bench-scale', `plans-${new Date().toISOString().replace(/[:.]/g, '-')}.txt`);
  const loadBefore = loadavg();
  const problems: string[] = [];
  const plans: string[] = [`npm run bench:scale: plans (auto_explain: ANALYZE, BUFFERS, nested statements) of ${n(totalEvents)} events, code ${codeVersion() ?? 'unknown'}`, ''];

  // -- set-up: cluster, schema (the relay migrates), accounts over the API
  const cluster = await startCluster();
  const nowMs = Date.now();
  const setupRelay = await startRelay(cluster.url, RELAY_ENV);
  const accounts = await createAccounts(setupRelay.url, cluster.url, totalEvents, nowMs);
  await setupRelay.stop();
  const big = accounts[0]!;

  // -- fill
  log(`filling ${n(totalEvents)} events on ${fillConnections} connections`);
  await fillSettings(cluster.url, true);
  const fillStarted = performance.now();
  const filled = await fillHistory(cluster.url, accounts, nowMs, fillConnections, log);
  const fillS = (performance.now() - fillStarted) / 1000;
  log(`fill: ${n(filled.events)} events in ${fillS.toFixed(0)} s; vacuum (analyze) of every leaf`);
  const vacuumStarted = performance.now();
  const leaves = await vacuumLeaves(cluster.url, fillConnections);
  const vacuumS = (performance.now() - vacuumStarted) / 1000;
  await fillSettings(cluster.url, false);
  const checkpointStarted = performance.now();
  await withClient(cluster.url, (client) => client.query('checkpoint'));
  const checkpointS = (performance.now() - checkpointStarted) / 1000;
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  onCleanup('bench database connection', () => admin.end());
  const sizes = await historySizes(admin);

  // -- lists
  const relay = await startRelay(cluster.url, RELAY_ENV);
  const cases = listCases(big, nowMs);
  const listFigures: ListFigures[] = [];
  const laterQueries = new Map<string, { page: number; query: Record<string, string> } | null>();
  for (const listCase of cases) {
    log(`GET /v1/events ${listCase.name}`);
    listFigures.push(await measurePage(relay.url, big.apiKey, listCase.name, 1, listCase.query, runs, problems));
    const later = await laterPageQuery(relay.url, big.apiKey, listCase.query);
    laterQueries.set(listCase.name, later);
    if (later) listFigures.push(await measurePage(relay.url, big.apiKey, listCase.name, later.page, later.query, runs, problems));
  }
  const perAccount: { account: BenchAccount; none: ListFigures; failed: ListFigures }[] = [];
  for (const account of accounts) {
    log(`GET /v1/events first page, ${account.shape.label}`);
    perAccount.push({
      account,
      none: await measurePage(relay.url, account.apiKey, 'no filter', 1, {}, runs, problems),
      failed: await measurePage(relay.url, account.apiKey, 'status=failed', 1, { status: 'failed' }, runs, problems),
    });
  }

  // -- the delivery worker's statistics refresh (refreshQueueStatistics: ANALYZE delivery_open every
  // 30 s in each worker process), as it costs on this history: the median of three
  const analyzeTimes: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await admin.query('analyze delivery_open');
    analyzeTimes.push(performance.now() - started);
  }
  const analyzeMs = analyzeTimes.sort((a, b) => a - b)[1]!;

  // -- plans of the list requests: a relay (api role) whose sessions explain everything
  const explainUrl = await createExplainRole(cluster.url, randomBytes(12).toString('hex'));
  const explainRelay = await startRelay(explainUrl, { ...RELAY_ENV, HOOK_ROLE: 'api' });
  const planTimes: { title: string; statements: number; relayMs: number; planningMs: number; executionMs: number }[] = [];
  const explainOne = async (title: string, apiKey: string, query: Record<string, string>): Promise<void> => {
    await getEvents(explainRelay.url, apiKey, query); // the second request's plans are kept: caches warm
    const from = logOffset(cluster.logFile);
    const answer = await getEvents(explainRelay.url, apiKey, query);
    const logged = await loggedPlans(cluster.logFile, from);
    plans.push(`==== GET /v1/events ${title} ${JSON.stringify(query)}: ${answer.status}, ${answer.rows} rows, next_cursor ${answer.nextCursor === null ? 'none' : 'yes'}, ${answer.ms.toFixed(1)} ms under auto_explain`, '');
    const times = { title, statements: 0, relayMs: 0, planningMs: 0, executionMs: 0 };
    for (const statement of logged) {
      const relayMs = Number(/duration: ([\d.]+) ms/.exec(statement.text)?.[1] ?? Number.NaN);
      times.statements++;
      times.relayMs += relayMs;
      if (statement.kind !== 'plan' || !replayable(statement.statement)) {
        plans.push(statement.text, '');
        continue;
      }
      // EXPLAIN (ANALYZE, BUFFERS) of the same text again (warm: the second of two), which also gives the planning time auto_explain leaves out
      let explained: string[] = [];
      for (let i = 0; i < 2; i++) explained = (await admin.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${statement.statement}`)).rows.map((row) => row['QUERY PLAN']);
      times.planningMs += Number(/Planning Time: ([\d.]+)/.exec(explained.join('\n'))?.[1] ?? Number.NaN);
      times.executionMs += Number(/Execution Time: ([\d.]+)/.exec(explained.join('\n'))?.[1] ?? Number.NaN);
      plans.push(`-- in the relay: ${relayMs} ms (auto_explain); EXPLAIN (ANALYZE, BUFFERS) of the same statement run again by the bench:`, statement.statement, ...explained.map((line) => `  ${line}`), '');
    }
    planTimes.push(times);
  };
  for (const listCase of cases) {
    await explainOne(`${listCase.name}, page 1`, big.apiKey, listCase.query);
    const later = laterQueries.get(listCase.name);
    if (later) await explainOne(`${listCase.name}, page ${later.page}`, big.apiKey, later.query);
  }
  const smallest = accounts.reduce((a, b) => (b.events < a.events ? b : a));
  await explainOne(`no filter, page 1, smallest account (${smallest.shape.label}, ${n(smallest.events)} events)`, smallest.apiKey, {});
  await explainRelay.stop();

  // -- ingest, ABBA against an empty database on the same server
  await withClient(cluster.url, (client) => client.query('create database hook_empty'));
  const emptyRelay = await startRelay(cluster.urlFor('hook_empty'), RELAY_ENV);
  const emptyAccount = await signUp(emptyRelay.url);
  const emptyEndpoint = await createEndpoint(emptyRelay.url, emptyAccount.apiKey, { name: 'ingest' });
  await withClient(cluster.urlFor('hook_empty'), (client) => client.query(`update account set plan = 'pro' where id = $1`, [emptyAccount.accountId]));
  const fullEndpoint = await createEndpoint(relay.url, big.apiKey, { name: 'ingest' });
  const body = jsonBody(BODY_BYTES);
  const ingestRuns: IngestRun[] = [];
  // each relay's first requests (JIT, caches, connections) are not counted
  for (const url of [emptyEndpoint.url, fullEndpoint.url]) await runLoad({ url, connections: INGEST_CONNECTIONS, durationS: INGEST_RELAY_WARMUP_S, body });
  let emptyRuns = 0;
  let fullRuns = 0;
  for (let round_ = 0; round_ < ingestRounds; round_++) {
    for (const full of [false, true, true, false]) {
      ingestRuns.push(full
        ? await ingestRun(`full #${++fullRuns}`, relay, fullEndpoint.url, durationS, warmupS, body, cluster.url)
        : await ingestRun(`empty #${++emptyRuns}`, emptyRelay, emptyEndpoint.url, durationS, warmupS, body, cluster.url));
    }
  }
  await emptyRelay.stop();
  for (const run of ingestRuns) {
    if (run.figures.non2xx > 0 || run.figures.errors > 0 || run.figures.timeouts > 0) {
      problems.push(`ingest ${run.label}: ${run.figures.non2xx} non-2xx, ${run.figures.errors} errors, ${run.figures.timeouts} timeouts`);
    }
  }
  const meanOf = (label: string, pick: (run: IngestRun) => number): number => {
    const runs_ = ingestRuns.filter((run) => run.label.startsWith(label));
    return runs_.reduce((sum, run) => sum + pick(run), 0) / runs_.length;
  };
  const ingestRatio = meanOf('full', (run) => run.figures.requestsPerSecond) / meanOf('empty', (run) => run.figures.requestsPerSecond);
  const medianOf = (label: string): number => {
    const sorted = ingestRuns.filter((run) => run.label.startsWith(label)).map((run) => run.figures.requestsPerSecond).sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  const medianRatio = medianOf('full') / medianOf('empty');
  // CPU per request (relay + PostgreSQL) hardly moves when other work slows the machine: empty / full, 1 = the same cost
  const cpuRatio = meanOf('empty', (run) => run.relayCpuUs + run.postgresCpuUs) / meanOf('full', (run) => run.relayCpuUs + run.postgresCpuUs);

  // -- retention: expired days of class 7 (accounts A3, A7..A9 from 6 days before today's midnight)
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  const dropDay = async (dayStartMs: number): Promise<{ rows: number; s: number; leaves: number; moved: number; before: DeadTuples; after: DeadTuples }> => {
    const leaf = `event_r7_${dayName(dayStartMs)}`;
    const rows = Number((await admin.query<{ n: string }>(`select count(*) as n from ${leaf}`)).rows[0]!.n);
    const before = await deadTuples(admin);
    const orm: Orm = await createOrm({ databaseUrl: cluster.url });
    let s: number;
    let dropped: { leaves: number; moved: number };
    try {
      await orm.em.fork().execute('select 1'); // connected before the clock starts
      const started = performance.now();
      // the leaf of day D (class 7) expires when D + 1 day + 7 days has passed
      dropped = await dropExpiredPartitions(orm, { now: new Date(dayStartMs + 8 * DAY_MS + 1_000) });
      s = (performance.now() - started) / 1000;
    } finally {
      await orm.close(); // its sessions send their statistics as they end
    }
    const after = await deadTuplesSoon(admin);
    const left = await admin.query(`select to_regclass($1) as leaf`, [leaf]);
    if (left.rows[0]!.leaf !== null) problems.push(`${leaf} still there after dropExpiredPartitions`);
    if (dropped.leaves !== 1) problems.push(`dropExpiredPartitions dropped ${dropped.leaves} leaves where one (${leaf}) had expired`);
    return { rows, s, leaves: dropped.leaves, moved: dropped.moved, before, after };
  };
  log('retention: dropping the oldest class-7 day');
  const drop1 = await dropDay(today - 6 * DAY_MS);
  // A7 (free) upgrades to pro: its class-7 rows must be kept 90 days, so the next drop moves them first.
  const upgraded = accounts[7]!;
  await admin.query(`update account set plan = 'pro' where id = $1`, [upgraded.accountId]);
  log('retention: dropping the next day, with an upgraded account\'s rows moved');
  const drop2 = await dropDay(today - 5 * DAY_MS);

  // A whole pass as the auto_explain role: the third day (A7's rows moved again) and the
  // row-by-row pass over class 0 history (from before migration 019) of four accounts,
  // 10 to 20 days old: only the free account's (A8) has expired.
  const legacyEvents = Math.max(1_000, Math.round((totalEvents / 1_000_000) * LEGACY_PER_MILLION));
  const legacyAccounts = [1, 2, 5, 8];
  let legacyExpired = 0;
  let legacyWritten = 0;
  for (const index of legacyAccounts) {
    const written = await writeLegacyHistory(cluster.url, accounts[index]!, index, Math.round(legacyEvents / legacyAccounts.length), nowMs - 20 * DAY_MS, nowMs - 10 * DAY_MS);
    legacyWritten += written.events;
    if (accounts[index]!.shape.plan === 'free') legacyExpired += written.events;
  }
  // class 0 analysed, as autovacuum would after the upgrade (the table itself where it is not partitioned)
  for (const { relid } of (await admin.query<{ relid: string }>(`select t.relid::text from ${HISTORY_LEAVES} where t.relid::text ~ '_r0$' or t.relid::text = p.name`)).rows) {
    await admin.query(`analyze ${relid}`);
  }
  log('retention: a whole pass under auto_explain');
  const passDeadBefore = await deadTuples(admin);
  const passFrom = logOffset(cluster.logFile);
  const passNow = new Date(today + 4 * DAY_MS + 1_000);
  const explainOrm: Orm = await createOrm({ databaseUrl: explainUrl });
  let pass: PruneResult;
  let passS: number;
  try {
    const passStarted = performance.now();
    pass = await pruneExpiredEvents(explainOrm, { now: passNow, pauseMs: 0 });
    passS = (performance.now() - passStarted) / 1000;
  } finally {
    await explainOrm.close();
  }
  const passDeadAfter = await deadTuplesSoon(admin);
  plans.push(`==== retention pass (pruneExpiredEvents, now = ${passNow.toISOString()}): dropped ${pass.partitionsDropped} leaves, moved ${pass.eventsMoved} events, removed ${pass.events} class-0 events in ${pass.statements} statements, ${passS.toFixed(2)} s under auto_explain`, '');
  plans.push(...formatStatements(statementsBetween(cluster.logFile, passFrom, logOffset(cluster.logFile), /\b(event|delivery|attempt)(_r\d+(_\d+)?)?\b|partition|pg_inherits/)), '');
  if (pass.events !== legacyExpired) problems.push(`the class-0 pass removed ${pass.events} events, ${legacyExpired} legacy events had expired`);
  await relay.stop();

  mkdirSync(dirname(plansFile), { recursive: true });
  writeFileSync(plansFile, `${plans.join('\n')}\n`);

  // -- report
  const storedBytes = sizes.bytes.event + sizes.bytes.delivery + sizes.bytes.attempt;
  const bytesPerEvent = storedBytes / Math.max(1, sizes.rows.event);
  const listWidths = [40, 5, 5, 7, 8, 7, 7, 7];
  const header = ['filter', 'page', 'rows', 'cursor', 'cold ms', 'p50 ms', 'p95 ms', 'max ms'];
  const row = (cells: (string | number)[]): string => cells.map((cell, i) => (i === 0 ? String(cell).padEnd(listWidths[i]!) : String(cell).padStart(listWidths[i]!))).join(' ');
  const listLine = (f: ListFigures, name: string): string =>
    `${row([name, f.page, f.rows, f.hasNext ? 'yes' : 'no', msCell(f.coldMs), msCell(f.p50), msCell(f.p95), msCell(f.max)])}  ${met(f.p95 < LIST_P95_GOAL_MS)}`;
  const listsMet = listFigures.filter((f) => f.p95 < LIST_P95_GOAL_MS).length;
  const ingestWidths = [10, 13, 8, 8, 10, 8, 7, 9];
  const dropMet = drop1.s < DROP_GOAL_S;
  const deadMet = drop1.after.all <= drop1.before.all;
  const out = [
    '',
    `Scale benchmark (issue 29): ${n(sizes.rows.event)} events over ${accounts.length} accounts (${big.shape.label}: ${n(big.events)}), ${BODY_BYTES}-byte JSON bodies, ${n(sizes.rows.delivery)} deliveries, ${n(sizes.rows.attempt)} attempts`,
    machineLine(loadBefore),
    'Database: embedded PostgreSQL (temporary), server defaults but during the fill',
    `History layout: ${(['event', 'delivery', 'attempt'] as const).map((t) => `${t} ${sizes.leaves[t] === 1 ? 'one table' : `${sizes.leaves[t]} leaves`}`).join(', ')}`,
    `Code: ${codeVersion() ?? 'unknown'}`,
    '',
    `fill: ${n(filled.events)} events in ${fillS.toFixed(0)} s (${n(Math.round(filled.events / fillS))}/s; INSERT … SELECT generate_series through the parents, ${filled.statements} statements on ${fillConnections} connections)` +
      ` + VACUUM (ANALYZE) of ${leaves} leaves ${vacuumS.toFixed(0)} s + checkpoint ${checkpointS.toFixed(0)} s = ${(fillS + vacuumS + checkpointS).toFixed(0)} s`,
    `on disk: event ${gb(sizes.bytes.event)}, delivery ${gb(sizes.bytes.delivery)}, attempt ${gb(sizes.bytes.attempt)} (every leaf, heap + TOAST + indexes) = ${gb(storedBytes)}` +
      ` = ${n(Math.round(bytesPerEvent))} bytes per stored event (body ${BODY_BYTES} bytes) (reported, no goal)`,
    '',
    `GET /v1/events, ${big.shape.label}: ${runs} timed requests per row after ${WARMUP_REQUESTS} untimed (cold = the first of all), default page size; goal p95 < ${LIST_P95_GOAL_MS} ms`,
    `${row(header)}  goal`,
    ...listFigures.map((f) => listLine(f, f.page === 1 ? f.caseName : '  later page')),
    `  ${listsMet} of ${listFigures.length} rows meet the goal`,
    ...cases.filter((c) => laterQueries.get(c.name) === null).map((c) => `  ${c.name}: no later page (the first page had no next_cursor)`),
    '',
    'where the time goes: the statements of each request as the auto_explain relay ran them (exec ms: their execution there), run again with EXPLAIN ANALYZE by the bench (warm):',
    `${'request'.padEnd(64)} ${'statements'.padStart(10)} ${'exec ms'.padStart(9)} ${'planning ms'.padStart(12)} ${'execution ms'.padStart(13)}`,
    ...planTimes.map((t) => `${t.title.slice(0, 64).padEnd(64)} ${String(t.statements).padStart(10)} ${msCell(t.relayMs, 9)} ${msCell(t.planningMs, 12)} ${msCell(t.executionMs, 13)}`),
    '',
    `GET /v1/events first page of every account (${runs} timed requests each), goal p95 < ${LIST_P95_GOAL_MS} ms`,
    `${'account'.padEnd(26)} ${'events'.padStart(10)}   no filter p50/p95 ms    status=failed p50/p95 ms`,
    ...perAccount.map(({ account, none, failed }) =>
      `${account.shape.label.padEnd(26)} ${n(account.events).padStart(10)}   ${msCell(none.p50)} /${msCell(none.p95)} ${met(none.p95 < LIST_P95_GOAL_MS).padEnd(7)}  ${msCell(failed.p50)} /${msCell(failed.p95)} ${met(failed.p95 < LIST_P95_GOAL_MS)}`),
    '',
    `the delivery worker's statistics refresh (refreshQueueStatistics: ANALYZE delivery_open, every 30 s in each worker process): ${analyzeMs.toFixed(0)} ms (median of 3; reported, no goal)`,
    '',
    `ingest: ${INGEST_CONNECTIONS} connections, ${BODY_BYTES}-byte bodies, ${warmupS} s warm-up + ${durationS} s per run, ABBA ${ingestRounds} time(s) on an empty database and on this one (same server, one relay each, each warmed ${INGEST_RELAY_WARMUP_S} s first)`,
    `${['run', 'req/s (mean)', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors', 'timeouts'].map((c, i) => (i === 0 ? c.padEnd(ingestWidths[i]!) : c.padStart(ingestWidths[i]!))).join('  ')}   relay µs/req   PostgreSQL µs/req   autovacuum workers`,
    ...ingestRuns.map((run) => {
      const f = run.figures;
      const cells = [run.label, f.requestsPerSecond.toFixed(1), f.latencyP50Ms.toFixed(1), f.latencyP99Ms.toFixed(1), f.requests, f.non2xx, f.errors, f.timeouts];
      return `${cells.map((c, i) => (i === 0 ? String(c).padEnd(ingestWidths[i]!) : String(c).padStart(ingestWidths[i]!))).join('  ')}   ${msCell(run.relayCpuUs, 12)}   ${msCell(run.postgresCpuUs, 17)}   ${String(run.autovacuumWorkers).padStart(18)}`;
    }),
    `ingest ratio (full / empty, mean req/s): ${ingestRatio.toFixed(3)} (goal >= ${INGEST_RATIO_GOAL}: ${met(ingestRatio >= INGEST_RATIO_GOAL)}); ratio of the medians ${medianRatio.toFixed(3)}`,
    `  CPU per request (relay + PostgreSQL) empty / full: ${cpuRatio.toFixed(3)} (1 = the same cost; less sensitive to other work on the machine than req/s)`,
    '',
    `drop one expired day (class 7, ${dayName(today - 6 * DAY_MS)}, ${n(drop1.rows)} events): ${drop1.s.toFixed(3)} s (goal < ${DROP_GOAL_S} s: ${met(dropMet)})`,
    `  dead tuples left in the history tables: ${deadChange(drop1.before, drop1.after)} (goal: none left by it: ${met(drop1.after.all <= drop1.before.all)})`,
    `drop the next day (${dayName(today - 5 * DAY_MS)}, ${n(drop2.rows)} events) after ${upgraded.shape.label} upgraded to pro: ${drop2.s.toFixed(3)} s, ${n(drop2.moved)} events moved to class 90`,
    `  dead tuples: ${deadChange(drop2.before, drop2.after)} (${met(drop2.after.all <= drop2.before.all)})`,
    `a whole retention pass under auto_explain (instrumented, no goal): ${passS.toFixed(2)} s: ${pass.partitionsDropped} leaf dropped, ${n(pass.eventsMoved)} events moved, ` +
      `${n(pass.events)} of ${n(legacyExpired)} expired class-0 events (of ${n(legacyWritten)}) removed row by row in ${pass.statements} statements`,
    `  dead tuples: ${deadChange(passDeadBefore, passDeadAfter)} (class 0's leaves: ${n(passDeadAfter.classZero)}, the row-by-row pass's, for vacuum)`,
    '',
    `plans (EXPLAIN ANALYZE, BUFFERS of every list request above and the retention pass): ${plansFile}`,
    ...resultLines(problems, 'measured (goals above)'),
  ];
  writeReport(out, () => ({
    events: sizes.rows.event, deliveries: sizes.rows.delivery, attempts: sizes.rows.attempt,
    fill_s: round(fillS, 1), vacuum_s: round(vacuumS, 1), checkpoint_s: round(checkpointS, 1),
    bytes: sizes.bytes, bytes_per_event: Math.round(bytesPerEvent),
    lists: listFigures.map((f) => ({ filter: f.caseName, page: f.page, rows: f.rows, cold_ms: round(f.coldMs, 1), p50_ms: round(f.p50, 1), p95_ms: round(f.p95, 1), max_ms: round(f.max, 1), met: f.p95 < LIST_P95_GOAL_MS })),
    accounts: perAccount.map(({ account, none, failed }) => ({ account: account.shape.label, events: account.events, none_p95_ms: round(none.p95, 1), failed_p95_ms: round(failed.p95, 1) })),
    ingest: ingestRuns.map((run) => ({ run: run.label, rps: round(run.figures.requestsPerSecond, 1), p99_ms: run.figures.latencyP99Ms })),
    ingest_ratio: round(ingestRatio, 3), ingest_met: ingestRatio >= INGEST_RATIO_GOAL, ingest_median_ratio: round(medianRatio, 3), ingest_cpu_ratio: round(cpuRatio, 3),
    drop_s: round(drop1.s, 3), drop_met: dropMet, drop_rows: drop1.rows, dead_before: drop1.before.byTable, dead_after: drop1.after.byTable, dead_met: deadMet,
    drop_with_move_s: round(drop2.s, 3), moved: drop2.moved, analyze_delivery_ms: Math.round(analyzeMs),
    plans_file: plansFile, problems,
  }));
  return problems.length === 0 ? 0 : 1;
}

await runBench(main);
