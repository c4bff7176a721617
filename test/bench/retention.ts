/**
 * `npm run bench:retention`: how fast the retention job removes a large expired
 * history, and what it costs ingest while it runs.
 *
 * The relay runs as a child process on a fresh database (a new `hook_bench_<random>` on
 * the server named by HOOK_BENCH_DATABASE_URL or HOOK_TEST_DATABASE_URL, else an
 * embedded PostgreSQL), with HOOK_RETENTION_INTERVAL=24d so its own pass (at start, on
 * an empty database) never runs during the measurement. Then:
 *
 *   1. History: BENCH_EVENTS expired events (default 1,000,000) are written straight
 *      into PostgreSQL with INSERT … SELECT generate_series: ids with their receive
 *      time (30 to 60 days ago), ~1 KiB JSON bodies, headers, an attempt for every
 *      fourth event; spread over four accounts: the ingest account (enterprise with its
 *      own retention of 7 days) and three free accounts. VACUUM ANALYZE follows, as
 *      autovacuum would have done on a real history.
 *   2. Baseline: a paced sender posts 1 KiB events at a steady BENCH_RATE per second
 *      (default 200) to the ingest account's endpoint over HTTP for BENCH_BASELINE_S
 *      (default 20) while nothing prunes → p50/p99 of ingest latency.
 *   3. Pruning: pruneExpiredEvents (the job's pass, defaults: 1000 events per
 *      statement, 20 ms pause) runs here against the same database, as a worker
 *      process would, while the same paced load continues in 5-second runs until it
 *      finishes → prune time, events removed per second, and ingest p50/p99 of the
 *      requests sent while it ran, with their ratio to the baseline.
 *   4. Check: no expired event or its attempts is left, and every acknowledged
 *      ingest event is still stored.
 *
 * Exit codes: 0 measured; 1 expired events left, an acknowledged event missing, or an
 * ingest request answered non-2xx or not at all; 2 bad settings.
 *
 * Environment (all optional):
 *   BENCH_EVENTS        expired events to write (default 1000000)
 *   BENCH_RATE          ingest events per second during both phases (default 200)
 *   BENCH_BASELINE_S    seconds of baseline load (default 20)
 *   BENCH_JSON=1        also print a one-line JSON summary as the last stdout line
 *   HOOK_BENCH_DATABASE_URL / HOOK_TEST_DATABASE_URL   PostgreSQL server URL to create the bench database on
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { createOrm, pruneExpiredEvents, RETENTION_BATCH_PAUSE_MS, RETENTION_BATCH_SIZE, type PruneResult } from '@hook/db';
import {
  createAccount,
  createBenchDatabase,
  createEndpoint,
  databaseServerUrl,
  jsonBody,
  log,
  machineLine,
  ms,
  onCleanup,
  onInterrupt,
  percentile,
  positiveNumber,
  resultLines,
  round,
  runBench,
  runPaced,
  seconds,
  startRelay,
  writeReport,
  type PacedAnswer,
  type PacedRun,
} from './support.ts';

const DEFAULT_EVENTS = 1_000_000;
const DEFAULT_RATE = 200;
const DEFAULT_BASELINE_S = 20;
const WARMUP_S = 3;
/** Length of each paced run while the prune goes on (runs repeat until it finishes). */
const PRUNE_LOAD_CHUNK_S = 5;
const CONNECTIONS = 16;
const BODY_SIZE_BYTES = 1024;
const INSERT_CHUNK_EVENTS = 100_000;
const DAY_MS = 86_400_000;
/** Expired events are received over the 30 days that end 30 days ago. */
const HISTORY_START_DAYS_AGO = 60;
const HISTORY_SPAN_DAYS = 30;

/** Crockford base32 of `n` in `len` characters (as ids are made), for the history's ids in SQL. */
const BASE32_FUNCTION = `
  create function pg_temp.base32(n bigint, len int) returns text language sql immutable as $$
    select string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((n >> (5 * (len - 1 - i))) & 31)::int + 1, 1), '' order by i)
    from generate_series(0, len - 1) as i
  $$`;

/** The id of history event `g`: its receive time, then `g` in the random part. */
const HISTORY_ID = (prefix: string): string => `'${prefix}_' || pg_temp.base32(t, 10) || '000000' || pg_temp.base32(g, 10)`;

/** Writes `total` expired events (and an attempt for every fourth) over `accounts`, in chunks. */
async function writeHistory(client: pg.Client, accounts: { accountId: string; endpointId: string }[], total: number): Promise<void> {
  await client.query(BASE32_FUNCTION);
  const startMs = Date.now() - HISTORY_START_DAYS_AGO * DAY_MS;
  const stepMs = (HISTORY_SPAN_DAYS * DAY_MS) / total;
  const accountIds = accounts.map((account) => account.accountId);
  const endpointIds = accounts.map((account) => account.endpointId);
  const rows = `select g, (${startMs}::bigint + floor(g * ${stepMs})::bigint) as t, $1::text[] as accounts, $2::text[] as endpoints
                from generate_series($3::bigint, $4::bigint) as g`;
  for (let from = 0; from < total; from += INSERT_CHUNK_EVENTS) {
    const to = Math.min(total, from + INSERT_CHUNK_EVENTS) - 1;
    const started = performance.now();
    await client.query(
      `insert into event (id, account_id, endpoint_id, type, method, path, query, headers, body, content_type, size, received_at)
       select ${HISTORY_ID('evt')}, accounts[g % 4 + 1], endpoints[g % 4 + 1], 'invoice.paid', 'POST', '', '',
              '{"content-type": "application/json", "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)", "stripe-signature": "t=1,v1=abc"}'::jsonb,
              body, 'application/json', length(body), to_timestamp(t / 1000.0)
       from (select *, convert_to('{"type":"invoice.paid","id":"in_' || g || '","data":{"object":"invoice","padding":"' || repeat(md5(g::text), 30) || '"}}', 'UTF8') as body
             from (${rows}) r) b`,
      [accountIds, endpointIds, from, to],
    );
    await client.query(
      `insert into delivery (event_id, destination_id, account_id, endpoint_id, status, attempt_count)
       select ${HISTORY_ID('evt')}, 'dst_' || substr(endpoints[g % 4 + 1], 4), accounts[g % 4 + 1], endpoints[g % 4 + 1], 'delivered', case when g % 4 = 0 then 1 else 0 end
       from (${rows}) r`,
      [accountIds, endpointIds, from, to],
    );
    await client.query(
      `insert into attempt (id, event_id, account_id, n, trigger, started_at, duration_ms, response_status, response_body)
       select ${HISTORY_ID('att')}, ${HISTORY_ID('evt')}, accounts[g % 4 + 1], 1, 'auto', to_timestamp(t / 1000.0), 120, 200, '{"received":true}'
       from (${rows}) r where g % 4 = 0`,
      [accountIds, endpointIds, from, to],
    );
    log(`history: ${to + 1} of ${total} events written (${((performance.now() - started) / 1000).toFixed(1)} s for this chunk)`);
  }
}

interface Latencies {
  p50: number;
  p99: number;
  count: number;
}

function latencies(answers: Iterable<PacedAnswer>, from = Number.NEGATIVE_INFINITY, to = Number.POSITIVE_INFINITY): Latencies {
  const values = [...answers].filter((answer) => answer.sentAtMs >= from && answer.sentAtMs < to).map((answer) => answer.answeredAtMs - answer.sentAtMs).sort((a, b) => a - b);
  return { p50: percentile(values, 50), p99: percentile(values, 99), count: values.length };
}

async function count(client: pg.Client, sql: string, params: unknown[] = []): Promise<number> {
  return Number((await client.query<{ n: string }>(sql, params)).rows[0]!.n);
}

async function main(): Promise<number> {
  const events = Math.round(positiveNumber('BENCH_EVENTS', DEFAULT_EVENTS));
  const rate = positiveNumber('BENCH_RATE', DEFAULT_RATE);
  const baselineS = seconds('BENCH_BASELINE_S', DEFAULT_BASELINE_S, false);
  const loadBefore = loadavg();
  const database = await createBenchDatabase(databaseServerUrl());
  const relay = await startRelay(database.url, { HOOK_RETENTION_INTERVAL: '24d' });

  const accounts: { accountId: string; endpointId: string; url: string }[] = [];
  for (let i = 0; i < 4; i++) {
    const endpoint = await createEndpoint(relay.url, await createAccount(relay.url), { name: `retention-${i}` });
    accounts.push({ endpointId: endpoint.id, url: endpoint.url, accountId: '' });
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  onCleanup('bench database connection', () => client.end());
  for (const account of accounts) {
    account.accountId = (await client.query<{ account_id: string }>('select account_id from endpoint where id = $1', [account.endpointId])).rows[0]!.account_id;
  }
  // The ingest account takes the load: enterprise (no monthly quota), keeping its events 7 days.
  await client.query(`update account set plan = 'enterprise', retention_days = 7 where id = $1`, [accounts[0]!.accountId]);

  log(`writing ${events} expired events`);
  const historyStarted = performance.now();
  await writeHistory(client, accounts, events);
  const historyS = (performance.now() - historyStarted) / 1000;
  log('vacuum analyze');
  await client.query('vacuum (analyze) event, attempt');
  const historyAttempts = await count(client, 'select count(*) as n from attempt');
  const tableSize = (await client.query<{ size: string }>(`select pg_size_pretty(pg_total_relation_size('event')) as size`)).rows[0]!.size;

  const ingestUrl = accounts[0]!.url;
  const prepare = (seq: number) => ({ body: jsonBody(BODY_SIZE_BYTES, { seq }), sentAtMs: performance.now() });
  const paced = (durationS: number): Promise<PacedRun> => runPaced({ url: ingestUrl, ratePerS: rate, durationS, connections: CONNECTIONS, prepare });

  log(`warm-up ${WARMUP_S} s`);
  const warmup = await paced(WARMUP_S);
  log(`baseline: ${rate} events/s for ${baselineS} s, no pruning`);
  const baselineRun = await paced(baselineS);

  log('pruning under the same load');
  const orm = await createOrm({ databaseUrl: database.url });
  onCleanup('bench ORM', () => orm.close());
  const pruneStarted = performance.now();
  let pruneEnded: number | undefined;
  // A signal stops the pass between batches, before the clean-up drops the database under it.
  const stopPruning = new AbortController();
  const forgetInterrupt = onInterrupt(() => stopPruning.abort());
  const pruning = pruneExpiredEvents(orm, { signal: stopPruning.signal }).then((result: PruneResult) => {
    pruneEnded = performance.now();
    return result;
  });
  const pruneRuns: PacedRun[] = [];
  while (pruneEnded === undefined) pruneRuns.push(await paced(PRUNE_LOAD_CHUNK_S));
  const pruned = await pruning;
  forgetInterrupt();
  const pruneS = (pruneEnded - pruneStarted) / 1000;

  const baseline = latencies(baselineRun.acknowledged.values());
  const duringPrune = latencies(pruneRuns.flatMap((run) => [...run.acknowledged.values()]), pruneStarted, pruneEnded);
  const p50Ratio = duringPrune.p50 / baseline.p50;
  const p99Ratio = duringPrune.p99 / baseline.p99;

  log('checking the tables');
  const expiredLeft = await count(client, 'select count(*) as n from event where received_at < $1', [new Date(Date.now() - 7 * DAY_MS)]);
  const attemptsLeft = await count(client, 'select count(*) as n from attempt');
  const ingestRuns = [warmup, baselineRun, ...pruneRuns];
  const acknowledgedIds = ingestRuns.flatMap((run) => [...run.acknowledged.keys()]);
  const storedAcknowledged = await count(client, 'select count(*) as n from event where id = any($1::text[])', [acknowledgedIds]);
  const non2xx = ingestRuns.reduce((sum, run) => sum + run.non2xx, 0);
  const errors = ingestRuns.reduce((sum, run) => sum + run.errors + run.unreadable, 0);
  await relay.stop();

  const problems: string[] = [];
  if (pruned.events !== events) problems.push(`the pass removed ${pruned.events} events, expected ${events}`);
  if (expiredLeft > 0) problems.push(`${expiredLeft} expired event(s) left after the pass`);
  if (attemptsLeft > 0) problems.push(`${attemptsLeft} attempt(s) left after their events were removed`);
  if (storedAcknowledged !== acknowledgedIds.length) problems.push(`${acknowledgedIds.length - storedAcknowledged} acknowledged ingest event(s) missing`);
  if (non2xx > 0) problems.push(`ingest answered ${non2xx} request(s) with a non-2xx status`);
  if (errors > 0) problems.push(`${errors} ingest request(s) without a (readable) answer`);

  const eventsPerS = pruned.events / pruneS;
  const out = [
    '',
    `Retention benchmark: ${events} expired events (~1 KiB bodies, ${historyAttempts} attempts, event table ${tableSize}) over 4 accounts; ingest at a steady ${rate} events/s, 1 KiB bodies, ${CONNECTIONS} keep-alive connections`,
    machineLine(loadBefore),
    `Relay database: ${database.description}`,
    `History written in ${historyS.toFixed(1)} s (INSERT … SELECT generate_series, not measured)`,
    '',
    `prune: ${pruned.events} events removed in ${pruneS.toFixed(1)} s = ${Math.round(eventsPerS)} events/s (${pruned.statements} statements of at most ${RETENTION_BATCH_SIZE}, ${RETENTION_BATCH_PAUSE_MS} ms pause, ${pruned.accountsExamined} accounts)`,
    '',
    'ingest latency           p50 ms   p99 ms   requests',
    `  baseline (no pruning)  ${ms(baseline.p50).padStart(6)}   ${ms(baseline.p99).padStart(6)}   ${String(baseline.count).padStart(8)}`,
    `  while pruning          ${ms(duringPrune.p50).padStart(6)}   ${ms(duringPrune.p99).padStart(6)}   ${String(duringPrune.count).padStart(8)}`,
    `  ratio (pruning / baseline): p50 ${p50Ratio.toFixed(2)}, p99 ${p99Ratio.toFixed(2)}`,
    '',
    ...resultLines(problems, 'every expired event and attempt removed, every acknowledged ingest event kept, no failed request'),
  ];
  writeReport(out, () => ({
    events,
    attempts: historyAttempts,
    rate_per_s: rate,
    prune_s: round(pruneS, 2),
    prune_events_per_s: Math.round(eventsPerS),
    prune_statements: pruned.statements,
    baseline_p50_ms: round(baseline.p50, 2),
    baseline_p99_ms: round(baseline.p99, 2),
    pruning_p50_ms: round(duringPrune.p50, 2),
    pruning_p99_ms: round(duringPrune.p99, 2),
    p50_ratio: round(p50Ratio, 3),
    p99_ratio: round(p99Ratio, 3),
    problems,
  }));
  return problems.length === 0 ? 0 : 1;
}

await runBench(main);
