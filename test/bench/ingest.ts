/**
 * `npm run bench:ingest`: durable ingest throughput, latency and CPU per request of the
 * relay, against two no-op servers as baselines (node:http alone, and Fastify), and a
 * check that no acknowledged event is lost. CPU per request (the server process's user +
 * system time over the measured run, from /proc, divided by the requests answered) is
 * reported for every target, and PostgreSQL's for the relay's.
 *
 * Every server runs as a child process so autocannon (here) never shares their event
 * loop. Each gets a warm-up (not counted) and then a measured run at
 * 50 connections with 1 KiB JSON bodies; then the same relay on an endpoint that verifies a
 * GitHub signature on each request (docs/sources.md), and on one that drops duplicates by a header key (each request a
 * new delivery id), each reported as a ratio to the plain relay. The relay gets a fresh
 * database: a new `hook_bench_<random>` on the server named by HOOK_BENCH_DATABASE_URL
 * or HOOK_TEST_DATABASE_URL, else an embedded PostgreSQL in a temporary directory.
 * After the runs the relay is stopped (it commits what it accepted) and every event
 * id it acknowledged with a 2xx is looked up in the `event` table. The machinery shared
 * with the other benchmarks (child processes, databases, clean-up, autocannon) is in
 * support.ts.
 *
 * Exit codes: 0 measured (a throughput ratio under target is reported, not failed);
 * 1 an acknowledged event is missing, or a request was answered non-2xx or not at all;
 * 2 bad settings.
 *
 * Environment (all optional):
 *   BENCH_DURATION_S   measured seconds per target (default 10)
 *   BENCH_WARMUP_S     warm-up seconds per target, not counted (default 2)
 *   BENCH_JSON=1       also print a one-line JSON summary as the last stdout line
 *   BENCH_CPU_PROF=dir the relay writes a V8 CPU profile into dir (node --cpu-prof); see profile-summary.ts
 *   BENCH_RELAY_ROOT=dir  run the relay of another checkout (its npm ci done) instead of this one: compare two versions
 *   BENCH_PLAIN_ONLY=1 measure the plain relay target only (no verification or dedupe endpoint)
 *   BENCH_ACCOUNTS=n   the plain relay target's requests go round n accounts, one endpoint each (default 1), so a
 *                      flush holds several accounts' events
 *   BENCH_DISTRIBUTED=1 the relay runs with HOOK_DATABASE_DISTRIBUTED=citus (one statement per account of a flush):
 *                      what that costs on one PostgreSQL
 *   BENCH_COST=0       leave out the cost model (below)
 *   BENCH_COST_DETAIL=1 the cost model also names each stage's costliest functions
 *   HOOK_BENCH_DATABASE_URL / HOOK_TEST_DATABASE_URL   PostgreSQL server URL to create the bench database on
 *
 * Cost model (cost-model.ts, docs/performance.md): for the plain relay target and the one
 * dropping duplicates, and their difference, per event and per stage ("HTTP in", "store",
 * …): the relay's CPU (/proc over the measured run, split by the CPU profile of a stand-in
 * relay that repeats both loads briefly after the runs), PostgreSQL's time per statement
 * (pg_stat_statements), row versions per table, transactions and WAL.
 */
import { createHmac } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { CostProbe, costDifference, costJson, costLines, costProfiles, costTable, monotonicUs, type CostPhase, type Window } from './cost-model.ts';
import {
  acknowledgedIds as idsOf,
  createAccount,
  createBenchDatabase,
  createEndpoint,
  databaseServerUrl,
  figures,
  figuresHeader,
  figuresJson,
  figuresRow,
  jsonBody,
  log,
  onCleanup,
  positiveNumber,
  machineLine,
  resultLines,
  round,
  runBench,
  runLoad,
  sampleCpu,
  seconds,
  startRelay,
  startServer,
  writeReport,
  type LoadRun,
} from './support.ts';

const NOOP_SERVER_ENTRY = join(import.meta.dirname, 'noop-server.ts');

const CONNECTIONS = 50;
const BODY_SIZE_BYTES = 1024;
/** The relay must reach this share of the no-op server's throughput. */
const TARGET_RATIO = 0.5;
/** The relay must reach this share of the raw node:http no-op server's throughput (issue 20). */
const RAW_TARGET_RATIO = 0.4;
/** Relay CPU per durable ingest request, µs, at the most (issue 20). */
const RELAY_CPU_TARGET_US = 70;
/** The relay's p99 latency at CONNECTIONS connections, ms, at the most. */
const P99_TARGET_MS = 50;
/** The relay verifying a GitHub signature on each request (one HMAC) must reach this share of the same run's plain relay target. */
const VERIFIED_TARGET_RATIO = 0.9;
/** The relay dropping duplicates by a header key (each request a new key, so each one claims it) must reach this share of the plain relay target. */
const DEDUPE_TARGET_RATIO = 0.9;
/** The secret of the verifying endpoint; every request carries the signature of the fixed body under it. */
const GITHUB_SECRET = "It's a Secret to Everybody";
const DEFAULT_DURATION_S = 10;
const DEFAULT_WARMUP_S = 2;
const NOOP_START_TIMEOUT_MS = 15_000;

/** Every stored event id of the endpoints, and the whole table's row count. */
async function storedEvents(databaseUrl: string, endpointIds: string | readonly string[]): Promise<{ ids: Set<string>; rows: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const count = await client.query<{ count: string }>('select count(*) as count from event');
    const ids = await client.query<{ id: string }>('select id from event where endpoint_id = any($1::text[])', [typeof endpointIds === 'string' ? [endpointIds] : endpointIds]);
    return { ids: new Set(ids.rows.map((row) => row.id)), rows: Number(count.rows[0]!.count) };
  } finally {
    await client.end();
  }
}

/** Events of the endpoint not marked verified (each request of the verified target carries a good signature). */
async function unverifiedEvents(databaseUrl: string, endpointId: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result = await client.query<{ count: string }>(`select count(*) as count from event where endpoint_id = $1 and (verification->>'verified') is distinct from 'true'`, [endpointId]);
    return Number(result.rows[0]!.count);
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------
// Load

interface Measured {
  warmup: LoadRun | undefined;
  measured: LoadRun;
  /** CPU time (user + system) the server process spent per request answered in the measured run, µs; NaN without /proc. */
  cpuUsPerRequest: number;
  /** The same for PostgreSQL (every `postgres` process), µs. */
  postgresUsPerRequest: number;
  /** The measured run's cost phase (cost-model.ts), when a probe measured it. */
  cost?: CostPhase;
}

/**
 * Warm-up then measured run against the server process `pid`; returns both (the relay's
 * check needs the warm-up too) and the CPU each request cost the server and PostgreSQL in
 * the measured run: unlike a rate, CPU time per request hardly moves when other work
 * slows the machine down.
 */
async function measure(name: string, url: string | readonly string[], pid: number, durationS: number, warmupS: number, body: Buffer, headers?: Record<string, string>, perRequestHeaders?: () => Record<string, string>, costProbe?: CostProbe): Promise<Measured> {
  const urls = typeof url === 'string' ? undefined : url;
  const first = typeof url === 'string' ? url : url[0]!;
  let warmup: LoadRun | undefined;
  if (warmupS > 0) {
    log(`${name}: warm-up ${warmupS} s`);
    warmup = await runLoad({ url: first, urls, connections: CONNECTIONS, durationS: warmupS, body, headers, perRequestHeaders });
  }
  log(`${name}: measuring ${durationS} s`);
  const phase = costProbe ? await costProbe.start(name) : undefined;
  const before = sampleCpu([pid]);
  const measured = await runLoad({ url: first, urls, connections: CONNECTIONS, durationS, body, headers, perRequestHeaders });
  const after = sampleCpu([pid]);
  const cost = phase ? await phase.stop(measured.result['2xx']) : undefined;
  const answered = measured.result.requests.total;
  const per = (ms: number) => (before && after && answered > 0 ? (ms * 1000) / answered : Number.NaN);
  return {
    warmup,
    measured,
    cpuUsPerRequest: per(after && before ? after.byPid.get(pid)! - before.byPid.get(pid)! : Number.NaN),
    postgresUsPerRequest: per(after && before ? after.postgresMs - before.postgresMs : Number.NaN),
    ...(cost ? { cost } : {}),
  };
}

// ---------------------------------------------------------------------------------
// The cost model's stand-in: both loads again, briefly, on a profiled relay

/** Seconds of each load the profiled stand-in repeats. */
const COST_REPEAT_S = 4;

/**
 * Runs the plain target's load and the dedupe target's again on a relay started with the
 * CPU profiler (on the same database, new endpoints) and returns the profile with each
 * load's window: what splits the measured runs' CPU by stage (cost-model.ts costTable).
 */
async function profiledRepeat(databaseUrl: string, relayEnv: Record<string, string>, profiles: ReturnType<typeof costProfiles>, body: Buffer, withDedupe: boolean): Promise<{ plain: { file: string; window: Window }; dedupe: { file: string; window: Window } | null }> {
  log(`cost model: the loads again for ${COST_REPEAT_S} s each on a profiled relay`);
  const standIn = await startRelay(databaseUrl, relayEnv, profiles.args);
  const plain = await createIngestEndpoint(standIn.url);
  const dedupe = withDedupe ? await createIngestEndpoint(standIn.url, { dedupe: { header: 'x-github-delivery' } }) : null;
  await runLoad({ url: plain.url, connections: CONNECTIONS, durationS: 1, body }); // warm-up
  let fromUs = monotonicUs();
  await runLoad({ url: plain.url, connections: CONNECTIONS, durationS: COST_REPEAT_S, body });
  const plainWindow = { fromUs, toUs: monotonicUs() };
  let dedupeWindow: Window | null = null;
  if (dedupe) {
    let delivery = 0;
    fromUs = monotonicUs();
    await runLoad({ url: dedupe.url, connections: CONNECTIONS, durationS: COST_REPEAT_S, body, perRequestHeaders: () => ({ 'x-github-delivery': `cost-${++delivery}` }) });
    dedupeWindow = { fromUs, toUs: monotonicUs() };
  }
  await standIn.stop();
  const file = profiles.find(standIn.pid);
  if (!file) throw new Error(`the profiled relay (pid ${standIn.pid}) wrote no CPU profile`);
  return { plain: { file, window: plainWindow }, dedupe: dedupeWindow && { file, window: dedupeWindow } };
}

// ---------------------------------------------------------------------------------
// Relay set-up over its API

/** An account and an endpoint on the relay; returns the endpoint's id and ingest URL. */
async function createIngestEndpoint(baseUrl: string, settings: Record<string, unknown> = {}): Promise<{ id: string; url: string }> {
  return createEndpoint(baseUrl, await createAccount(baseUrl), { name: 'bench', ...settings });
}

/** A CPU figure for the table: µs, `-` without /proc. */
function cpuCell(us: number): string {
  return (Number.isFinite(us) ? us.toFixed(1) : '-').padStart(10);
}

async function main(): Promise<number> {
  const durationS = seconds('BENCH_DURATION_S', DEFAULT_DURATION_S, false);
  const warmupS = seconds('BENCH_WARMUP_S', DEFAULT_WARMUP_S, true);
  const accounts = Math.floor(positiveNumber('BENCH_ACCOUNTS', 1));
  const serverUrl = databaseServerUrl();
  const body = jsonBody(BODY_SIZE_BYTES);
  const loadBefore = loadavg();

  // A database server is checked (and the bench database created) before half a minute
  // of measuring; an embedded PostgreSQL starts only after the baseline, whose figures
  // its start-up work (initdb, CREATE DATABASE, checkpoints) would disturb.
  const databaseOnServer = serverUrl ? await createBenchDatabase(serverUrl) : undefined;

  log('starting the no-op node:http server');
  const rawNoop = await startServer('noop-http', NOOP_SERVER_ENTRY, { ...process.env, NOOP_KIND: 'http' }, /^(http:\/\/\S+)$/, NOOP_START_TIMEOUT_MS);
  const rawRuns = await measure('node:http baseline', `${rawNoop.url}/ingest`, rawNoop.pid, durationS, warmupS, body);
  await rawNoop.stop();
  log('starting the no-op Fastify server');
  const noop = await startServer('noop', NOOP_SERVER_ENTRY, { ...process.env }, /^(http:\/\/\S+)$/, NOOP_START_TIMEOUT_MS);
  const baselineRuns = await measure('baseline', `${noop.url}/ingest`, noop.pid, durationS, warmupS, body);
  await noop.stop();

  const database = databaseOnServer ?? (await createBenchDatabase(undefined));
  // BENCH_CPU_PROF=<dir>: the relay writes a V8 CPU profile there when it stops (summarise it with test/bench/profile-summary.ts).
  const profileDir = process.env.BENCH_CPU_PROF?.trim();
  const relayEnv: Record<string, string> = process.env.BENCH_DISTRIBUTED === '1' ? { HOOK_DATABASE_DISTRIBUTED: 'citus' } : {};
  const relay = await startRelay(database.url, relayEnv, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []);
  const profiles = costProfiles(undefined);
  const costProbe = profiles.args.length > 0 ? await CostProbe.open(database.url, [{ role: 'relay', pid: relay.pid }]) : undefined;
  if (costProbe) onCleanup('cost probe', () => costProbe.close());
  // one after another: sign-ups at once would queue on the relay's few connections
  const endpoints: { id: string; url: string }[] = [];
  for (let i = 0; i < accounts; i++) endpoints.push(await createIngestEndpoint(relay.url));
  const endpoint = endpoints[0]!;
  const relayRuns = await measure(accounts > 1 ? `relay (${accounts} accounts)` : 'relay', accounts > 1 ? endpoints.map((e) => e.url) : endpoint.url, relay.pid, durationS, warmupS, body, undefined, undefined, costProbe);
  // BENCH_PLAIN_ONLY=1 measures the plain relay only (a relay of another checkout may lack verification or dedupe).
  const extras = process.env.BENCH_PLAIN_ONLY !== '1';
  // The same relay and body, on an endpoint that checks a GitHub signature (reject mode) on
  // each request: the cost of verification is the gap between the two targets.
  const verifiedEndpoint = extras ? await createIngestEndpoint(relay.url, { verification: { provider: 'github', secret: GITHUB_SECRET, mode: 'reject' } }) : endpoint;
  const signature = `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`;
  const verifiedRuns = extras ? await measure('relay with verification', verifiedEndpoint.url, relay.pid, durationS, warmupS, body, { 'x-hub-signature-256': signature }) : relayRuns;
  // The same again on an endpoint that drops duplicates by X-GitHub-Delivery, each request a new
  // delivery id: every event is inserted against the dedupe index (docs/sources.md, Duplicates).
  const dedupeEndpoint = extras ? await createIngestEndpoint(relay.url, { dedupe: { header: 'x-github-delivery' } }) : endpoint;
  let delivery = 0;
  const dedupeRuns = extras ? await measure('relay with dedupe', dedupeEndpoint.url, relay.pid, durationS, warmupS, body, undefined, () => ({ 'x-github-delivery': `delivery-${++delivery}` }), costProbe) : relayRuns;

  // A graceful stop commits every accepted event, including those whose answer
  // autocannon stopped waiting for when its run ended.
  log('stopping the relay');
  const relayExit = await relay.stop();
  const relayWarnings = relay.stderrLinesWhileServing();
  const stored = await storedEvents(database.url, endpoints.map((e) => e.id));
  const verifiedStored = extras ? await storedEvents(database.url, verifiedEndpoint.id) : stored;
  const verifiedUnverified = extras ? await unverifiedEvents(database.url, verifiedEndpoint.id) : 0;
  const dedupeStored = extras ? await storedEvents(database.url, dedupeEndpoint.id) : stored;
  // The cost model: each measured run's CPU split by the shares of a profiled stand-in relay's repeat (after the counts above, on the same database).
  const standIn = costProbe ? await profiledRepeat(database.url, relayEnv, profiles, body, extras) : null;
  const plainTable = relayRuns.cost && costTable(relayRuns.cost, costProbe!.processes, new Map(standIn ? [[relay.pid, standIn.plain]] : []));
  const dedupeTable = extras && dedupeRuns.cost ? costTable(dedupeRuns.cost, costProbe!.processes, new Map(standIn?.dedupe ? [[relay.pid, standIn.dedupe]] : [])) : undefined;
  const dedupeAdds = plainTable && dedupeTable ? costDifference('what dropping duplicates adds (dedupe − relay)', dedupeTable, plainTable) : undefined;

  const runs = [relayRuns.warmup, relayRuns.measured].filter((run): run is LoadRun => run !== undefined);
  const verifiedAll = [verifiedRuns.warmup, verifiedRuns.measured].filter((run): run is LoadRun => run !== undefined);
  const { ids: verifiedAcknowledgedIds } = idsOf(verifiedAll);
  const verifiedLost = [...verifiedAcknowledgedIds].filter((id) => !verifiedStored.ids.has(id)).length;
  const verifiedFailures = verifiedAll.reduce((sum, run) => sum + run.result.non2xx + run.result.errors, 0);
  const dedupeAll = [dedupeRuns.warmup, dedupeRuns.measured].filter((run): run is LoadRun => run !== undefined);
  const { ids: dedupeAcknowledgedIds } = idsOf(dedupeAll);
  const dedupeLost = [...dedupeAcknowledgedIds].filter((id) => !dedupeStored.ids.has(id)).length;
  const dedupeFailures = dedupeAll.reduce((sum, run) => sum + run.result.non2xx + run.result.errors, 0);
  // every delivery id is new: an answer saying duplicate would be a key mistaken for another
  const dedupeMisjudged = dedupeAll.reduce((sum, run) => sum + run.acknowledged.filter((answer) => answer.includes('"duplicate"')).length, 0);
  const { ids: acknowledgedIds, unreadable: unreadableAcknowledgements } = idsOf(runs);
  const acknowledged = runs.reduce((sum, run) => sum + run.result['2xx'], 0);
  const sent = runs.reduce((sum, run) => sum + run.result.requests.sent, 0);
  const relayNon2xx = runs.reduce((sum, run) => sum + run.result.non2xx, 0);
  const relayErrors = runs.reduce((sum, run) => sum + run.result.errors, 0);
  const lostIds = [...acknowledgedIds].filter((id) => !stored.ids.has(id));
  const duplicateAcknowledgements = acknowledged - acknowledgedIds.size - unreadableAcknowledgements;
  const storedUnacknowledged = stored.ids.size - (acknowledgedIds.size - lostIds.length);

  const raw = figures(rawRuns.measured.result);
  const baseline = figures(baselineRuns.measured.result);
  const relayFigures = figures(relayRuns.measured.result);
  const ratio = baseline.requestsPerSecond > 0 ? relayFigures.requestsPerSecond / baseline.requestsPerSecond : 0;
  const rawRatio = raw.requestsPerSecond > 0 ? relayFigures.requestsPerSecond / raw.requestsPerSecond : 0;
  const rawPass = rawRatio >= RAW_TARGET_RATIO;
  const cpuPass = relayRuns.cpuUsPerRequest <= RELAY_CPU_TARGET_US;
  const p99Pass = relayFigures.latencyP99Ms <= P99_TARGET_MS;
  const verifiedFigures = figures(verifiedRuns.measured.result);
  const verifiedRatio = relayFigures.requestsPerSecond > 0 ? verifiedFigures.requestsPerSecond / relayFigures.requestsPerSecond : 0;
  const verifiedPass = verifiedRatio >= VERIFIED_TARGET_RATIO;
  const dedupeFigures = figures(dedupeRuns.measured.result);
  const dedupeRatio = relayFigures.requestsPerSecond > 0 ? dedupeFigures.requestsPerSecond / relayFigures.requestsPerSecond : 0;
  const dedupePass = dedupeRatio >= DEDUPE_TARGET_RATIO;
  const baselineFailures = [baselineRuns.warmup, baselineRuns.measured, rawRuns.warmup, rawRuns.measured].reduce((sum, run) => sum + (run ? run.result.non2xx + run.result.errors : 0), 0);

  const problems: string[] = [];
  if (lostIds.length > 0) problems.push(`${lostIds.length} acknowledged event(s) missing from PostgreSQL, e.g. ${lostIds.slice(0, 3).join(', ')}`);
  if (unreadableAcknowledgements > 0) problems.push(`${unreadableAcknowledgements} 2xx response(s) without an event id`);
  if (duplicateAcknowledgements > 0) problems.push(`${duplicateAcknowledgements} event id(s) acknowledged more than once`);
  if (stored.ids.size > sent) problems.push(`${stored.ids.size} rows stored for ${sent} requests sent (duplicates)`);
  if (relayNon2xx > 0) problems.push(`relay answered ${relayNon2xx} request(s) with a non-2xx status`);
  if (relayErrors > 0) problems.push(`relay left ${relayErrors} request(s) without an answer (connection errors or timeouts)`);
  if (verifiedLost > 0) problems.push(`${verifiedLost} acknowledged event(s) of the verifying endpoint missing from PostgreSQL`);
  if (verifiedFailures > 0) problems.push(`relay with verification failed ${verifiedFailures} request(s) (non-2xx or no answer)`);
  if (dedupeLost > 0) problems.push(`${dedupeLost} acknowledged event(s) of the dedupe endpoint missing from PostgreSQL`);
  if (dedupeFailures > 0) problems.push(`relay with dedupe failed ${dedupeFailures} request(s) (non-2xx or no answer)`);
  if (extras && dedupeMisjudged > 0) problems.push(`${dedupeMisjudged} request(s) with a new delivery id were answered as duplicates`);
  if (verifiedUnverified > 0) problems.push(`${verifiedUnverified} event(s) of the verifying endpoint stored without verified: true`);
  if (baselineFailures > 0) problems.push(`the no-op baseline failed ${baselineFailures} request(s): the measurement is not valid`);
  if (relayExit.code !== 0) problems.push(`relay did not shut down cleanly (exit code ${relayExit.code}, signal ${relayExit.signal}${relayExit.killed ? ', killed after timeout' : ''})`);

  const widths = [9, 13, 8, 8, 10, 8, 7, 9];
  const pass = ratio >= TARGET_RATIO;
  const out = [
    '',
    `Durable ingest benchmark: ${CONNECTIONS} connections, ${BODY_SIZE_BYTES}-byte JSON bodies, ${warmupS} s warm-up (not counted) + ${durationS} s measured per target${accounts > 1 ? `; the relay target's requests go round ${accounts} accounts` : ''}${process.env.BENCH_DISTRIBUTED === '1' ? '; HOOK_DATABASE_DISTRIBUTED=citus' : ''}`,
    machineLine(loadBefore),
    `Relay database: ${database.description}`,
    '',
    `${figuresHeader('target', widths)}   CPU µs/req   PostgreSQL µs/req`,
    `${figuresRow('node:http', raw, widths)}   ${cpuCell(rawRuns.cpuUsPerRequest)}`,
    `${figuresRow('fastify', baseline, widths)}   ${cpuCell(baselineRuns.cpuUsPerRequest)}`,
    `${figuresRow('relay', relayFigures, widths)}   ${cpuCell(relayRuns.cpuUsPerRequest)}   ${cpuCell(relayRuns.postgresUsPerRequest)}`,
    ...(extras ? [
      `${figuresRow('verified', verifiedFigures, widths)}   ${cpuCell(verifiedRuns.cpuUsPerRequest)}   ${cpuCell(verifiedRuns.postgresUsPerRequest)}`,
      `${figuresRow('dedupe', dedupeFigures, widths)}   ${cpuCell(dedupeRuns.cpuUsPerRequest)}   ${cpuCell(dedupeRuns.postgresUsPerRequest)}`,
    ] : []),
    '',
    `ratio (relay / node:http no-op throughput): ${rawRatio.toFixed(2)} (target >= ${RAW_TARGET_RATIO.toFixed(2)} → ${rawPass ? 'PASS' : 'FAIL'})`,
    `relay CPU per request: ${relayRuns.cpuUsPerRequest.toFixed(1)} µs (target <= ${RELAY_CPU_TARGET_US} → ${cpuPass ? 'PASS' : 'FAIL'}); relay p99: ${relayFigures.latencyP99Ms.toFixed(1)} ms (target <= ${P99_TARGET_MS} → ${p99Pass ? 'PASS' : 'FAIL'})`,
    `ratio (relay / Fastify no-op throughput): ${ratio.toFixed(2)}`,
    ...(extras ? [
      `ratio (relay with verification, one HMAC-SHA256 per request / relay): ${verifiedRatio.toFixed(2)} (target >= ${VERIFIED_TARGET_RATIO.toFixed(2)} → ${verifiedPass ? 'PASS' : 'FAIL'})`,
      `ratio (relay dropping duplicates, one key per request / relay): ${dedupeRatio.toFixed(2)} (target >= ${DEDUPE_TARGET_RATIO.toFixed(2)} → ${dedupePass ? 'PASS' : 'FAIL'})`,
    ] : []),
    `events acknowledged: ${acknowledged}, rows in PostgreSQL: ${stored.rows} (both targets), lost: ${lostIds.length}`,
    ...(extras ? [
      `verifying endpoint: ${verifiedAcknowledgedIds.size} acknowledged, ${verifiedStored.ids.size} stored, all verified: ${verifiedUnverified === 0 ? 'yes' : 'no'}, lost: ${verifiedLost}`,
      `dedupe endpoint: ${dedupeAcknowledgedIds.size} acknowledged, ${dedupeStored.ids.size} stored, answered as duplicates: ${dedupeMisjudged}, lost: ${dedupeLost}`,
    ] : []),
    `  (warm-up included; ${storedUnacknowledged} stored event(s) were still in flight when autocannon stopped, so their 2xx was never read: not losses)`,
    ...(relayWarnings > 0 ? [`  relay wrote ${relayWarnings} line(s) to stderr at log level warn during the runs (shown above)`] : []),
    `target: ratio >= ${TARGET_RATIO.toFixed(2)} → ${pass ? 'PASS' : 'FAIL'}`,
    ...[plainTable, dedupeTable, dedupeAdds].flatMap((table) => (table ? ['', ...costLines(table)] : [])),
    ...resultLines(problems, 'no lost events, no failed requests'),
  ];
  writeReport(out, () => ({
    connections: CONNECTIONS,
    body_bytes: BODY_SIZE_BYTES,
    duration_s: durationS,
    warmup_s: warmupS,
    database: serverUrl ? 'server' : 'embedded',
    node_http: figuresJson(raw),
    raw_ratio: round(rawRatio, 3),
    raw_target_ratio: RAW_TARGET_RATIO,
    raw_pass: rawPass,
    node_http_cpu_us_per_request: round(rawRuns.cpuUsPerRequest, 1),
    fastify_cpu_us_per_request: round(baselineRuns.cpuUsPerRequest, 1),
    relay_cpu_us_per_request: round(relayRuns.cpuUsPerRequest, 1),
    relay_cpu_target_us: RELAY_CPU_TARGET_US,
    relay_cpu_pass: cpuPass,
    postgres_cpu_us_per_request: round(relayRuns.postgresUsPerRequest, 1),
    p99_pass: p99Pass,
    baseline: figuresJson(baseline),
    relay: figuresJson(relayFigures),
    ratio: round(ratio, 3),
    target_ratio: TARGET_RATIO,
    verified: figuresJson(verifiedFigures),
    verified_ratio: round(verifiedRatio, 3),
    verified_target_ratio: VERIFIED_TARGET_RATIO,
    verified_pass: verifiedPass,
    dedupe: figuresJson(dedupeFigures),
    dedupe_ratio: round(dedupeRatio, 3),
    dedupe_target_ratio: DEDUPE_TARGET_RATIO,
    dedupe_pass: dedupePass,
    pass,
    events_acknowledged: acknowledged,
    rows_in_postgresql: stored.rows,
    lost: lostIds.length,
    ...(plainTable ? { cost: { relay: costJson(plainTable), ...(dedupeTable ? { dedupe: costJson(dedupeTable) } : {}), ...(dedupeAdds ? { dedupe_adds: costJson(dedupeAdds) } : {}) } } : {}),
    problems,
  }));
  return problems.length === 0 ? 0 : 1;
}

await runBench(main);
