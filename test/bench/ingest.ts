/**
 * `npm run bench:ingest`: durable ingest throughput and latency of the relay, against a
 * no-op Fastify server as the baseline, and a check that no acknowledged event is lost.
 *
 * Both servers run as child processes so autocannon (here) never shares their event
 * loop. Each gets a warm-up (not counted) and then a measured run at
 * 50 connections with 1 KiB JSON bodies. The relay gets a fresh
 * database: a new `hook_bench_<random>` on the server named by HOOK_BENCH_DATABASE_URL
 * or HOOK_TEST_DATABASE_URL, else an embedded PostgreSQL in a temporary directory.
 * After the runs the relay is stopped (it commits what it accepted) and every event
 * id it acknowledged with a 2xx is looked up in the `event` table.
 *
 * Exit codes: 0 measured (a throughput ratio under target is reported, not failed);
 * 1 an acknowledged event is missing, or a request was answered non-2xx or not at all;
 * 2 bad settings.
 *
 * Environment (all optional):
 *   BENCH_DURATION_S   measured seconds per target (default 10)
 *   BENCH_WARMUP_S     warm-up seconds per target, not counted (default 2)
 *   BENCH_JSON=1       also print a one-line JSON summary as the last stdout line
 *   HOOK_BENCH_DATABASE_URL / HOOK_TEST_DATABASE_URL   PostgreSQL server URL to create the bench database on
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import type { Instance, Result } from 'autocannon';
import pg from 'pg';
import { startEmbeddedPostgres } from '@hook/db';
import { adminQuery, withDatabase } from '@hook/db/testing';

const REPO_ROOT = resolve(import.meta.dirname, '../..');
const RELAY_ENTRY = join(REPO_ROOT, 'apps/relay/src/server.ts');
const NOOP_SERVER_ENTRY = join(import.meta.dirname, 'noop-server.ts');

const CONNECTIONS = 50;
const BODY_SIZE_BYTES = 1024;
/** The relay must reach this share of the no-op server's throughput. */
const TARGET_RATIO = 0.5;
const DEFAULT_DURATION_S = 10;
const DEFAULT_WARMUP_S = 2;
/** autocannon counts a request unanswered this long as a timeout. */
const REQUEST_TIMEOUT_S = 10;
/** The relay migrates a fresh database before it listens. */
const RELAY_START_TIMEOUT_MS = 60_000;
const NOOP_START_TIMEOUT_MS = 15_000;
/** How long a child gets after SIGTERM before SIGKILL. */
const STOP_TIMEOUT_MS = 10_000;
const STDERR_TAIL_LINES = 20;

class UsageError extends Error {}

function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

function seconds(variable: string, fallback: number, allowZero: boolean): number {
  const raw = process.env[variable]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new UsageError(`${variable}=${JSON.stringify(raw)} is not valid: expected a ${allowZero ? 'non-negative' : 'positive'} number of seconds.`);
  }
  return value;
}

/** A JSON document of exactly `size` bytes, shaped like a typical webhook. */
function jsonBody(size: number): Buffer {
  const envelope = { type: 'bench.event', created_at: new Date().toISOString(), data: { object: 'invoice', padding: '' } };
  const padding = size - Buffer.byteLength(JSON.stringify(envelope));
  if (padding < 0) throw new Error(`body envelope is larger than ${size} bytes`);
  envelope.data.padding = 'x'.repeat(padding);
  const body = Buffer.from(JSON.stringify(envelope));
  if (body.length !== size) throw new Error(`body is ${body.length} bytes, expected ${size}`);
  return body;
}

// ---------------------------------------------------------------------------------
// Clean-up: every resource registers how to release it as soon as it exists; the
// stack runs in reverse on success, failure or a signal.

const cleanups: { label: string; run: () => Promise<void> }[] = [];

let cleaning: Promise<void> | undefined;

/** Releases everything once; a signal during the normal clean-up waits for the same run. */
async function runCleanups(): Promise<void> {
  cleaning ??= (async () => {
    for (let cleanup = cleanups.pop(); cleanup; cleanup = cleanups.pop()) {
      try {
        await cleanup.run();
      } catch (error) {
        log(`clean-up of ${cleanup.label} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  })();
  await cleaning;
}

let currentLoad: Instance | undefined;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal} received, stopping servers and removing the bench database`);
    currentLoad?.stop();
    void runCleanups().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------
// Child servers

interface ServerProcess {
  /** The URL the server printed as its first stdout line. */
  url: string;
  /** Lines the server wrote to stderr between being ready and being asked to stop (at warn level: problems). */
  stderrLinesWhileServing(): number;
  /** SIGTERM, then SIGKILL after STOP_TIMEOUT_MS. Resolves with how it ended. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }>;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (exited(child)) return true;
  return new Promise((done) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      done(false);
    }, timeoutMs);
    const onExit = (): void => {
      clearTimeout(timer);
      done(true);
    };
    child.once('exit', onExit);
  });
}

/**
 * Starts `node <entry>` and waits for a first stdout line matching `ready` (group 1:
 * the URL). Its stderr is passed through, prefixed with `name`.
 */
async function startServer(name: string, entry: string, env: NodeJS.ProcessEnv, ready: RegExp, timeoutMs: number): Promise<ServerProcess> {
  const child = spawn(process.execPath, [entry], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderrTail: string[] = [];
  let stderrLines = 0;
  let readyAtLine = Number.POSITIVE_INFINITY;
  let stopping: ReturnType<ServerProcess['stop']> | undefined;
  let stderrLinesAtStop: number | undefined;
  const stop: ServerProcess['stop'] = () => {
    stderrLinesAtStop ??= stderrLines;
    stopping ??= (async () => {
      let killed = false;
      if (child.pid !== undefined && !exited(child)) {
        child.kill('SIGTERM');
        if (!(await waitForExit(child, STOP_TIMEOUT_MS))) {
          log(`${name} did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM; sending SIGKILL`);
          killed = true;
          child.kill('SIGKILL');
          await waitForExit(child, STOP_TIMEOUT_MS);
        }
      }
      return { code: child.exitCode, signal: child.signalCode, killed };
    })();
    return stopping;
  };
  cleanups.push({ label: name, run: async () => void (await stop()) });

  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderrLines++;
    stderrTail.push(line);
    if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
    process.stderr.write(`[${name}] ${line}\n`);
  });

  const url = await new Promise<string>((done, fail) => {
    const stdout = createInterface({ input: child.stdout! });
    let first = true;
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${timeoutMs} ms:\n${stderrTail.join('\n')}`)), timeoutMs);
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      clearTimeout(timer);
      // Let the last stderr lines arrive before quoting them.
      setImmediate(() => fail(new Error(`${name} exited during start-up (code ${code}, signal ${signal}):\n${stderrTail.join('\n')}`)));
    };
    child.once('exit', onExit);
    child.once('error', (error) => {
      clearTimeout(timer);
      fail(error);
    });
    stdout.on('line', (line) => {
      if (!first) return; // keep draining the rest so the pipe never fills
      first = false;
      clearTimeout(timer);
      child.off('exit', onExit);
      const match = ready.exec(line);
      if (match?.[1]) done(match[1]);
      else fail(new Error(`${name} printed ${JSON.stringify(line)} where its URL was expected`));
    });
  });
  readyAtLine = stderrLines;
  return { url, stderrLinesWhileServing: () => Math.max(0, (stderrLinesAtStop ?? stderrLines) - readyAtLine), stop };
}

// ---------------------------------------------------------------------------------
// Database for the relay

interface BenchDatabase {
  url: string;
  description: string;
}

async function createBenchDatabase(serverUrl: string | undefined): Promise<BenchDatabase> {
  if (serverUrl) {
    const name = `hook_bench_${randomBytes(6).toString('hex')}`;
    await adminQuery(serverUrl, `create database ${name}`);
    cleanups.push({ label: `database ${name}`, run: () => adminQuery(serverUrl, `drop database if exists ${name} with (force)`) });
    const host = new URL(serverUrl).host;
    return { url: withDatabase(serverUrl, name), description: `PostgreSQL server at ${host}, fresh database ${name} (dropped afterwards)` };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'hook-bench-pg-'));
  cleanups.push({ label: `temporary directory ${dataDir}`, run: async () => rmSync(dataDir, { recursive: true, force: true }) });
  log(`starting embedded PostgreSQL in ${dataDir}`);
  const embedded = await startEmbeddedPostgres({ dataDir, database: 'hook_bench', log });
  cleanups.push({ label: 'embedded PostgreSQL', run: () => embedded.stop() });
  return { url: embedded.url, description: `embedded PostgreSQL on 127.0.0.1:${embedded.port} (temporary, removed afterwards)` };
}

/** Every stored event id of the endpoint, and the whole table's row count. */
async function storedEvents(databaseUrl: string, endpointId: string): Promise<{ ids: Set<string>; rows: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const count = await client.query<{ count: string }>('select count(*) as count from event');
    const ids = await client.query<{ id: string }>('select id from event where endpoint_id = $1', [endpointId]);
    return { ids: new Set(ids.rows.map((row) => row.id)), rows: Number(count.rows[0]!.count) };
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------
// Load

interface LoadRun {
  result: Result;
  /** Bodies of the 2xx responses, in arrival order. */
  acknowledged: string[];
}

/** One autocannon run; the same options (and the same per-response work) for every target. */
async function runLoad(url: string, durationS: number, body: Buffer): Promise<LoadRun> {
  const acknowledged: string[] = [];
  const request = {
    method: 'POST' as const,
    body,
    headers: { 'content-type': 'application/json' },
    onResponse: (status: number, responseBody: string): void => {
      if (status >= 200 && status < 300) acknowledged.push(responseBody);
    },
  };
  const result = await new Promise<Result>((done, fail) => {
    currentLoad = autocannon(
      {
        url,
        connections: CONNECTIONS,
        duration: durationS,
        timeout: REQUEST_TIMEOUT_S,
        method: request.method,
        body: request.body,
        headers: request.headers,
        requests: [request],
      },
      (error: unknown, result: Result) => (error ? fail(error) : done(result)),
    );
  });
  currentLoad = undefined;
  if (interrupted) throw new Error('interrupted');
  return { result, acknowledged };
}

interface TargetFigures {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

function figures(result: Result): TargetFigures {
  return {
    requestsPerSecond: result.requests.mean,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** Warm-up then measured run; returns both (the relay's check needs the warm-up too). */
async function measure(name: string, url: string, durationS: number, warmupS: number, body: Buffer): Promise<{ warmup: LoadRun | undefined; measured: LoadRun }> {
  let warmup: LoadRun | undefined;
  if (warmupS > 0) {
    log(`${name}: warm-up ${warmupS} s`);
    warmup = await runLoad(url, warmupS, body);
  }
  log(`${name}: measuring ${durationS} s`);
  const measured = await runLoad(url, durationS, body);
  return { warmup, measured };
}

// ---------------------------------------------------------------------------------
// Relay set-up over its API

async function postJson(url: string, apiKey?: string, json?: unknown): Promise<any> {
  const headers: Record<string, string> = {};
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  if (json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method: 'POST', headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`POST ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

/** An account and an endpoint on the relay; returns the endpoint's id and ingest URL. */
async function createIngestEndpoint(baseUrl: string): Promise<{ id: string; url: string }> {
  const signUp = await postJson(`${baseUrl}/v1/accounts`);
  const endpoint = await postJson(`${baseUrl}/v1/endpoints`, signUp.api_key, { name: 'bench' });
  if (typeof endpoint.id !== 'string' || typeof endpoint.url !== 'string') throw new Error(`unexpected endpoint: ${JSON.stringify(endpoint)}`);
  return { id: endpoint.id, url: endpoint.url };
}

/** The environment for the relay: ours without any HOOK_* setting, plus the bench's. */
function relayEnvironment(databaseUrl: string, dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('HOOK_')) env[name] = value;
  return { ...env, HOOK_DATABASE_URL: databaseUrl, HOOK_DATA_DIR: dataDir, HOOK_HOST: '127.0.0.1', HOOK_PORT: '0', HOOK_LOG_LEVEL: 'warn' };
}

// ---------------------------------------------------------------------------------
// Report

function formatRow(cells: (string | number)[], widths: number[]): string {
  return cells.map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]!) : String(cell).padStart(widths[i]!))).join('  ');
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

function figuresJson(f: TargetFigures): Record<string, number> {
  return {
    requests_per_second: round(f.requestsPerSecond, 1),
    latency_p50_ms: f.latencyP50Ms,
    latency_p99_ms: f.latencyP99Ms,
    requests: f.requests,
    non_2xx: f.non2xx,
    errors: f.errors,
    timeouts: f.timeouts,
  };
}

async function main(): Promise<number> {
  const durationS = seconds('BENCH_DURATION_S', DEFAULT_DURATION_S, false);
  const warmupS = seconds('BENCH_WARMUP_S', DEFAULT_WARMUP_S, true);
  const serverUrl = process.env.HOOK_BENCH_DATABASE_URL?.trim() || process.env.HOOK_TEST_DATABASE_URL?.trim() || undefined;
  const body = jsonBody(BODY_SIZE_BYTES);
  const loadBefore = loadavg();

  // A database server is checked (and the bench database created) before half a minute
  // of measuring; an embedded PostgreSQL starts only after the baseline, whose figures
  // its start-up work (initdb, CREATE DATABASE, checkpoints) would disturb.
  const databaseOnServer = serverUrl ? await createBenchDatabase(serverUrl) : undefined;

  log('starting the no-op Fastify server');
  const noop = await startServer('noop', NOOP_SERVER_ENTRY, { ...process.env }, /^(http:\/\/\S+)$/, NOOP_START_TIMEOUT_MS);
  const baselineRuns = await measure('baseline', `${noop.url}/ingest`, durationS, warmupS, body);
  await noop.stop();

  const database = databaseOnServer ?? (await createBenchDatabase(undefined));
  const relayDataDir = mkdtempSync(join(tmpdir(), 'hook-bench-relay-'));
  cleanups.push({ label: `temporary directory ${relayDataDir}`, run: async () => rmSync(relayDataDir, { recursive: true, force: true }) });
  log('starting the relay');
  const relay = await startServer('relay', RELAY_ENTRY, relayEnvironment(database.url, relayDataDir), /^Hook relay listening on (\S+)$/, RELAY_START_TIMEOUT_MS);
  const endpoint = await createIngestEndpoint(relay.url);
  const relayRuns = await measure('relay', endpoint.url, durationS, warmupS, body);

  // A graceful stop commits every accepted event, including those whose answer
  // autocannon stopped waiting for when its run ended.
  log('stopping the relay');
  const relayExit = await relay.stop();
  const relayWarnings = relay.stderrLinesWhileServing();
  const stored = await storedEvents(database.url, endpoint.id);

  const runs = [relayRuns.warmup, relayRuns.measured].filter((run): run is LoadRun => run !== undefined);
  const acknowledgedIds = new Set<string>();
  let unreadableAcknowledgements = 0;
  for (const run of runs) {
    for (const responseBody of run.acknowledged) {
      try {
        const id: unknown = JSON.parse(responseBody).id;
        if (typeof id === 'string') acknowledgedIds.add(id);
        else unreadableAcknowledgements++;
      } catch {
        unreadableAcknowledgements++;
      }
    }
  }
  const acknowledged = runs.reduce((sum, run) => sum + run.result['2xx'], 0);
  const sent = runs.reduce((sum, run) => sum + run.result.requests.sent, 0);
  const relayNon2xx = runs.reduce((sum, run) => sum + run.result.non2xx, 0);
  const relayErrors = runs.reduce((sum, run) => sum + run.result.errors, 0);
  const lostIds = [...acknowledgedIds].filter((id) => !stored.ids.has(id));
  const duplicateAcknowledgements = acknowledged - acknowledgedIds.size - unreadableAcknowledgements;
  const storedUnacknowledged = stored.ids.size - (acknowledgedIds.size - lostIds.length);

  const baseline = figures(baselineRuns.measured.result);
  const relayFigures = figures(relayRuns.measured.result);
  const ratio = baseline.requestsPerSecond > 0 ? relayFigures.requestsPerSecond / baseline.requestsPerSecond : 0;
  const baselineFailures = [baselineRuns.warmup, baselineRuns.measured].reduce((sum, run) => sum + (run ? run.result.non2xx + run.result.errors : 0), 0);

  const problems: string[] = [];
  if (lostIds.length > 0) problems.push(`${lostIds.length} acknowledged event(s) missing from PostgreSQL, e.g. ${lostIds.slice(0, 3).join(', ')}`);
  if (unreadableAcknowledgements > 0) problems.push(`${unreadableAcknowledgements} 2xx response(s) without an event id`);
  if (duplicateAcknowledgements > 0) problems.push(`${duplicateAcknowledgements} event id(s) acknowledged more than once`);
  if (stored.ids.size > sent) problems.push(`${stored.ids.size} rows stored for ${sent} requests sent (duplicates)`);
  if (relayNon2xx > 0) problems.push(`relay answered ${relayNon2xx} request(s) with a non-2xx status`);
  if (relayErrors > 0) problems.push(`relay left ${relayErrors} request(s) without an answer (connection errors or timeouts)`);
  if (baselineFailures > 0) problems.push(`the no-op baseline failed ${baselineFailures} request(s): the measurement is not valid`);
  if (relayExit.code !== 0) problems.push(`relay did not shut down cleanly (exit code ${relayExit.code}, signal ${relayExit.signal}${relayExit.killed ? ', killed after timeout' : ''})`);

  const widths = [9, 13, 8, 8, 10, 8, 7, 9];
  const row = (name: string, f: TargetFigures): string =>
    formatRow([name, f.requestsPerSecond.toFixed(1), f.latencyP50Ms.toFixed(1), f.latencyP99Ms.toFixed(1), f.requests, f.non2xx, f.errors, f.timeouts], widths);
  const pass = ratio >= TARGET_RATIO;
  const out = [
    '',
    `Durable ingest benchmark: ${CONNECTIONS} connections, ${BODY_SIZE_BYTES}-byte JSON bodies, ${warmupS} s warm-up (not counted) + ${durationS} s measured per target`,
    `Machine: ${cpus().length} CPUs, load average before the run ${loadBefore.map((value) => value.toFixed(2)).join(' ')} (other work on the machine makes figures noisy)`,
    `Relay database: ${database.description}`,
    '',
    formatRow(['target', 'req/s (mean)', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors', 'timeouts'], widths),
    row('baseline', baseline),
    row('relay', relayFigures),
    '',
    `ratio (relay / baseline throughput): ${ratio.toFixed(2)}`,
    `events acknowledged: ${acknowledged}, rows in PostgreSQL: ${stored.rows}, lost: ${lostIds.length}`,
    `  (warm-up included; ${storedUnacknowledged} stored event(s) were still in flight when autocannon stopped, so their 2xx was never read: not losses)`,
    ...(relayWarnings > 0 ? [`  relay wrote ${relayWarnings} line(s) to stderr at log level warn during the runs (shown above)`] : []),
    `target: ratio >= ${TARGET_RATIO.toFixed(2)} → ${pass ? 'PASS' : 'FAIL'}`,
    ...problems.map((problem) => `PROBLEM: ${problem}`),
    `result: ${problems.length === 0 ? 'no lost events, no failed requests' : 'FAILED (see PROBLEM lines)'}`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);

  if (process.env.BENCH_JSON === '1') {
    const summary = {
      connections: CONNECTIONS,
      body_bytes: BODY_SIZE_BYTES,
      duration_s: durationS,
      warmup_s: warmupS,
      database: serverUrl ? 'server' : 'embedded',
      baseline: figuresJson(baseline),
      relay: figuresJson(relayFigures),
      ratio: round(ratio, 3),
      target_ratio: TARGET_RATIO,
      pass,
      events_acknowledged: acknowledged,
      rows_in_postgresql: stored.rows,
      lost: lostIds.length,
      problems,
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  }
  return problems.length === 0 ? 0 : 1;
}

let exitCode: number;
try {
  exitCode = await main();
} catch (error) {
  if (error instanceof UsageError) {
    log(error.message);
    exitCode = 2;
  } else {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    exitCode = 1;
  }
} finally {
  await runCleanups();
}
process.exit(exitCode);
