/**
 * What the benchmarks (`npm run bench:*`) share: settings from the environment, the
 * clean-up registry (every resource registers its release as soon as it exists; the
 * stack runs in reverse on success, failure or a signal), child servers started as
 * their own processes, a fresh database for the relay, autocannon runs, the relay's
 * API calls, a paced sender, a loopback HTTP server's start and stop, and report
 * formatting. `runBench(main)` ties them together: it runs
 * `main`, releases everything and exits with main's code (2 for bad settings, 1 for an
 * exception, 130 after SIGINT/SIGTERM).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import type { Request as LoadRequest, Result } from 'autocannon';
import { TEST_SECRET_KEY } from '../support/secret-key.ts';
import { startEmbeddedPostgres } from '@hook/db';
import { adminQuery, withDatabase } from '@hook/db/testing';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
/** The relay the benchmarks start: this checkout's, or BENCH_RELAY_ROOT's (another checkout, to compare two versions in the same way). */
export const RELAY_ENTRY = join(process.env.BENCH_RELAY_ROOT?.trim() || REPO_ROOT, 'apps/relay/src/server.ts');

/** autocannon counts a request unanswered this long as a timeout. */
export const REQUEST_TIMEOUT_S = 10;
/** The relay migrates a fresh database before it listens. */
export const RELAY_START_TIMEOUT_MS = 60_000;
/** How long a child gets after SIGTERM before SIGKILL. */
const STOP_TIMEOUT_MS = 10_000;
const STDERR_TAIL_LINES = 20;

/** Bad settings: reported without a stack, exit code 2. */
export class UsageError extends Error {}

export function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

/** A number of seconds from the environment, or `fallback` when unset. */
export function seconds(variable: string, fallback: number, allowZero: boolean): number {
  const raw = process.env[variable]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new UsageError(`${variable}=${JSON.stringify(raw)} is not valid: expected a ${allowZero ? 'non-negative' : 'positive'} number of seconds.`);
  }
  return value;
}

/** A positive number from the environment, or `fallback` when unset. */
export function positiveNumber(variable: string, fallback: number): number {
  const raw = process.env[variable]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new UsageError(`${variable}=${JSON.stringify(raw)} is not valid: expected a positive number.`);
  return value;
}

/**
 * A JSON document of exactly `size` bytes, shaped like a typical webhook; `fields` go
 * at its top level (a sequence number, a send time).
 */
export function jsonBody(size: number, fields: Record<string, string | number> = {}): Buffer {
  const envelope = { type: 'bench.event', created_at: new Date().toISOString(), ...fields, data: { object: 'invoice', padding: '' } };
  const padding = size - Buffer.byteLength(JSON.stringify(envelope));
  if (padding < 0) throw new Error(`body envelope is larger than ${size} bytes`);
  envelope.data.padding = 'x'.repeat(padding);
  const body = Buffer.from(JSON.stringify(envelope));
  if (body.length !== size) throw new Error(`body is ${body.length} bytes, expected ${size}`);
  return body;
}

// ---------------------------------------------------------------------------------
// Clean-up and interruption

const cleanups: { label: string; run: () => Promise<void> }[] = [];
let cleaning: Promise<void> | undefined;

/** Registers how to release a resource; releases run in reverse order of registration. */
export function onCleanup(label: string, run: () => Promise<void>): void {
  cleanups.push({ label, run });
}

/** Releases everything once; a signal during the normal clean-up waits for the same run. */
export async function runCleanups(): Promise<void> {
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

const interruptHooks = new Set<() => void>();
let interrupted = false;

/** Whether SIGINT or SIGTERM arrived. */
export function isInterrupted(): boolean {
  return interrupted;
}

/** Calls `hook` (stop sending load, say) if a signal arrives before the returned function is called. */
export function onInterrupt(hook: () => void): () => void {
  interruptHooks.add(hook);
  return () => void interruptHooks.delete(hook);
}

/**
 * Runs a benchmark's `main` and exits with its code after releasing everything: 2 for
 * a UsageError, 1 for any other exception, 130 after SIGINT/SIGTERM.
 */
export async function runBench(main: () => Promise<number>): Promise<never> {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) return;
      interrupted = true;
      log(`${signal} received, stopping servers and removing the bench database`);
      for (const hook of interruptHooks) hook();
      void runCleanups().finally(() => process.exit(130));
    });
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
}

// ---------------------------------------------------------------------------------
// Child servers

export interface ServerProcess {
  /** The URL the server printed as its first stdout line. */
  url: string;
  pid: number;
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
 * the URL). Its stderr is passed through, prefixed with `name`. Stopped by the
 * clean-up registry at the latest.
 */
export async function startServer(name: string, entry: string, env: NodeJS.ProcessEnv, ready: RegExp, timeoutMs: number, nodeArgs: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...nodeArgs, entry], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
  onCleanup(name, async () => void (await stop()));

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
  return { url, pid: child.pid!, stderrLinesWhileServing: () => Math.max(0, (stderrLinesAtStop ?? stderrLines) - readyAtLine), stop };
}

/**
 * Listens with `server` on 127.0.0.1 at a free port and returns the port; the
 * clean-up registry closes it (and its open connections) as `label`.
 */
export async function listenOnLoopback(label: string, server: Server): Promise<number> {
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done());
  });
  onCleanup(label, async () => {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  });
  return (server.address() as AddressInfo).port;
}

/** The environment for the relay: ours without any HOOK_* setting, plus the bench's and `extra`. */
export function relayEnvironment(databaseUrl: string, dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('HOOK_')) env[name] = value;
  return { ...env, HOOK_DATABASE_URL: databaseUrl, HOOK_SECRET_KEY: TEST_SECRET_KEY, HOOK_DATA_DIR: dataDir, HOOK_HOST: '127.0.0.1', HOOK_PORT: '0', HOOK_LOG_LEVEL: 'warn', ...extra };
}

/**
 * Starts the relay (apps/relay/src/server.ts) on `databaseUrl` with a temporary data
 * directory; `extraEnv` adds HOOK_* settings, `nodeArgs` go before the entry
 * (`--cpu-prof`, say).
 */
export async function startRelay(databaseUrl: string, extraEnv: Record<string, string> = {}, nodeArgs: string[] = []): Promise<ServerProcess> {
  const relayDataDir = mkdtempSync(join(tmpdir(), 'hook-bench-relay-'));
  onCleanup(`temporary directory ${relayDataDir}`, async () => rmSync(relayDataDir, { recursive: true, force: true }));
  log('starting the relay');
  return startServer('relay', RELAY_ENTRY, relayEnvironment(databaseUrl, relayDataDir, extraEnv), /^Hook relay listening on (\S+)$/, RELAY_START_TIMEOUT_MS, nodeArgs);
}

// ---------------------------------------------------------------------------------
// CPU time, from /proc (Linux)

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on every Linux in use). */
const CLOCK_TICKS_PER_S = 100;

/**
 * Name, parent and user + system CPU time (ms: its own, and its exited children's) of a
 * process or thread, from its /proc stat file (`/proc/<pid>/stat`, or a thread's
 * `/proc/<pid>/task/<tid>/stat`); null once it is gone.
 */
export function statOf(path: string): { name: string; ppid: number; ms: number; exitedChildrenMs: number } | null {
  try {
    const stat = readFileSync(path, 'utf8');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    // fields[0] is the line's field 3 (state), fields[1] field 4 (ppid); utime and stime
    // are fields 14 and 15, cutime and cstime (its exited children's) 16 and 17
    return {
      name: stat.slice(stat.indexOf('(') + 1, close),
      ppid: Number(fields[1]),
      ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S,
      exitedChildrenMs: ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS_PER_S,
    };
  } catch {
    return null;
  }
}

export interface CpuSample {
  /**
   * PostgreSQL's CPU: the server this bench started (the `postgres` processes descended
   * from it) when there is one, else every process named `postgres` (a server given by
   * URL); with the CPU of backends that have exited (the server keeps them as its
   * children's), so the figure only grows. Counting only its own server keeps other work
   * on a shared machine (another checkout's test databases, say) out of the figures.
   */
  postgresMs: number;
  /** The processes asked for, by pid. */
  byPid: Map<number, number>;
}

/**
 * CPU time used so far by PostgreSQL (see CpuSample) and by `pids`; null without /proc.
 * Differences of two samples give a phase's CPU cost, which, unlike a rate, hardly moves
 * when other work slows the machine down.
 */
export function sampleCpu(pids: readonly number[]): CpuSample | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const processes = new Map<number, NonNullable<ReturnType<typeof statOf>>>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(`/proc/${entry}/stat`);
    if (stat) processes.set(Number(entry), stat);
  }
  const ours = (pid: number): boolean => {
    for (let at = processes.get(pid)?.ppid; at !== undefined && at > 1; at = processes.get(at)?.ppid) if (at === process.pid) return true;
    return false;
  };
  const postgres = [...processes].filter(([, stat]) => stat.name === 'postgres');
  const own = postgres.filter(([pid]) => ours(pid));
  let postgresMs = 0;
  for (const [, stat] of own.length > 0 ? own : postgres) postgresMs += stat.ms + stat.exitedChildrenMs;
  const byPid = new Map<number, number>();
  for (const pid of pids) byPid.set(pid, processes.get(pid)?.ms ?? Number.NaN);
  return { postgresMs, byPid };
}

// ---------------------------------------------------------------------------------
// Database for the relay

/** Whether the benches measure their cost model (cost-model.ts): BENCH_COST=0 leaves it out, for the cleanest throughput. */
export function costModelEnabled(): boolean {
  return process.env.BENCH_COST?.trim() !== '0';
}

/** Server settings that load pg_stat_statements, which the cost model reads (the embedded PostgreSQL starts with them). */
const STATEMENT_STATISTICS_SETTINGS: Readonly<Record<string, string>> = {
  shared_preload_libraries: 'pg_stat_statements',
  'pg_stat_statements.track': 'top',
  'pg_stat_statements.track_planning': 'on',
  'pg_stat_statements.max': '5000',
};

export interface BenchDatabase {
  url: string;
  description: string;
}

/** HOOK_BENCH_DATABASE_URL or HOOK_TEST_DATABASE_URL, if either is set. */
export function databaseServerUrl(): string | undefined {
  return process.env.HOOK_BENCH_DATABASE_URL?.trim() || process.env.HOOK_TEST_DATABASE_URL?.trim() || undefined;
}

/**
 * A fresh database: a new `hook_bench_<random>` on `serverUrl` (dropped afterwards), or
 * without one an embedded PostgreSQL in a temporary directory (removed afterwards).
 */
export async function createBenchDatabase(serverUrl: string | undefined): Promise<BenchDatabase> {
  if (serverUrl) {
    const name = `hook_bench_${randomBytes(6).toString('hex')}`;
    await adminQuery(serverUrl, `create database ${name}`);
    onCleanup(`database ${name}`, () => adminQuery(serverUrl, `drop database if exists ${name} with (force)`));
    const host = new URL(serverUrl).host;
    return { url: withDatabase(serverUrl, name), description: `PostgreSQL server at ${host}, fresh database ${name} (dropped afterwards)` };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'hook-bench-pg-'));
  onCleanup(`temporary directory ${dataDir}`, async () => rmSync(dataDir, { recursive: true, force: true }));
  log(`starting embedded PostgreSQL in ${dataDir}`);
  const embedded = await startEmbeddedPostgres({ dataDir, database: 'hook_bench', log, ...(costModelEnabled() ? { settings: STATEMENT_STATISTICS_SETTINGS } : {}) });
  onCleanup('embedded PostgreSQL', () => embedded.stop());
  return { url: embedded.url, description: `embedded PostgreSQL on 127.0.0.1:${embedded.port} (temporary, removed afterwards)` };
}

// ---------------------------------------------------------------------------------
// Load

export interface LoadRun {
  result: Result;
  /** Bodies of the 2xx responses, in arrival order. */
  acknowledged: string[];
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationS: number;
  body: Buffer;
  /** Headers sent besides content-type (a signature over the fixed body, say). */
  headers?: Record<string, string>;
  /** Called on each 2xx answer, as it comes. */
  onAcknowledged?: () => void;
  /** Headers made afresh for each request (a unique delivery id, say), on top of `headers`. */
  perRequestHeaders?: () => Record<string, string>;
  /** URLs on `url`'s host that the requests go round, one after another (several accounts' endpoints, say); absent: `url` alone. */
  urls?: readonly string[];
}

/** One autocannon run of POSTs with a JSON body; stopped early by a signal. */
export async function runLoad(options: LoadOptions): Promise<LoadRun> {
  const acknowledged: string[] = [];
  const paths = options.urls?.map((url) => { const { pathname, search } = new URL(url); return pathname + search; });
  let next = 0;
  const request = {
    method: 'POST' as const,
    body: options.body,
    headers: { 'content-type': 'application/json', ...options.headers },
    ...(options.perRequestHeaders || paths
      ? {
          setupRequest: (prepared: LoadRequest): LoadRequest => ({
            ...prepared,
            ...(paths ? { path: paths[next++ % paths.length]! } : {}),
            ...(options.perRequestHeaders ? { headers: { ...prepared.headers, ...options.perRequestHeaders() } } : {}),
          }),
        }
      : {}),
    onResponse: (status: number, responseBody: string): void => {
      if (status >= 200 && status < 300) {
        acknowledged.push(responseBody);
        options.onAcknowledged?.();
      }
    },
  };
  let forget = (): void => undefined;
  const result = await new Promise<Result>((done, fail) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        duration: options.durationS,
        timeout: REQUEST_TIMEOUT_S,
        method: request.method,
        body: request.body,
        headers: request.headers,
        requests: [request],
      },
      (error: unknown, result: Result) => (error ? fail(error) : done(result)),
    );
    forget = onInterrupt(() => instance.stop());
  });
  forget();
  if (interrupted) throw new Error('interrupted');
  return { result, acknowledged };
}

/** The event ids in the 2xx answers of `runs`, and how many answers had none. */
export function acknowledgedIds(runs: readonly LoadRun[]): { ids: Set<string>; unreadable: number } {
  const ids = new Set<string>();
  let unreadable = 0;
  for (const run of runs) {
    for (const responseBody of run.acknowledged) {
      try {
        const id: unknown = JSON.parse(responseBody).id;
        if (typeof id === 'string') ids.add(id);
        else unreadable++;
      } catch {
        unreadable++;
      }
    }
  }
  return { ids, unreadable };
}

export interface TargetFigures {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export function figures(result: Result): TargetFigures {
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

export function figuresJson(f: TargetFigures): Record<string, number> {
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

// ---------------------------------------------------------------------------------
// Paced sender: a steady rate, unlike autocannon's per-second bursts

export interface PacedAnswer {
  sentAtMs: number;
  answeredAtMs: number;
}

export interface PacedRun {
  sent: number;
  /** Event id (from a 2xx answer) → when its request was sent and answered (performance.now()). */
  acknowledged: Map<string, PacedAnswer>;
  non2xx: number;
  /** 2xx answers without an event id. */
  unreadable: number;
  /** Requests without an answer (connection errors or timeouts). */
  errors: number;
  /** From the first send to the last. */
  sendingMs: number;
}

export interface PacedOptions {
  url: string;
  ratePerS: number;
  durationS: number;
  /** Keep-alive connections at the most. */
  connections: number;
  /** The body of request `seq`, and the time (performance.now()) it counts as sent at. */
  prepare(seq: number): { body: Buffer; sentAtMs: number };
}

/**
 * POSTs `ratePerS` JSON events per second for `durationS` over keep-alive connections
 * and waits for every answer; a signal stops the sending (and then throws).
 */
export async function runPaced(options: PacedOptions): Promise<PacedRun> {
  const { ratePerS } = options;
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const target = new URL(options.url);
  const total = Math.max(1, Math.round(ratePerS * options.durationS));
  const run: PacedRun = { sent: 0, acknowledged: new Map(), non2xx: 0, unreadable: 0, errors: 0, sendingMs: 0 };
  let finished = 0;
  let stopped = false;
  const stopSending = onInterrupt(() => {
    stopped = true;
  });
  const startMs = performance.now();
  try {
    await new Promise<void>((done) => {
      let allSent = false;
      const finishOne = (): void => {
        finished++;
        if (allSent && finished === run.sent) done();
      };
      const sendOne = (seq: number): void => {
        const { body, sentAtMs } = options.prepare(seq);
        let settled = false;
        const settle = (): boolean => {
          if (settled) return false;
          settled = true;
          return true;
        };
        const req = httpRequest(target, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': String(body.length) } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            if (!settle()) return;
            const answeredAtMs = performance.now();
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              try {
                const id: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8')).id;
                if (typeof id === 'string') run.acknowledged.set(id, { sentAtMs, answeredAtMs });
                else run.unreadable++;
              } catch {
                run.unreadable++;
              }
            } else {
              run.non2xx++;
            }
            finishOne();
          });
        });
        req.setTimeout(REQUEST_TIMEOUT_S * 1000, () => req.destroy(new Error('timeout')));
        req.on('error', () => {
          if (!settle()) return;
          run.errors++;
          finishOne();
        });
        req.end(body);
      };
      const timer = setInterval(() => {
        const due = stopped ? run.sent : Math.min(total, Math.floor(((performance.now() - startMs) / 1000) * ratePerS) + 1);
        while (run.sent < due) sendOne(run.sent++);
        if (run.sent >= total || stopped) {
          clearInterval(timer);
          run.sendingMs = performance.now() - startMs;
          allSent = true;
          if (finished === run.sent) done();
        }
      }, 1);
    });
  } finally {
    stopSending();
    agent.destroy();
  }
  if (interrupted) throw new Error('interrupted');
  return run;
}

// ---------------------------------------------------------------------------------
// Relay set-up over its API

export async function postJson(url: string, apiKey?: string, json?: unknown): Promise<any> {
  const headers: Record<string, string> = {};
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  if (json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method: 'POST', headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`POST ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

/**
 * Signs up a new account on the relay and moves it to enterprise, whose monthly event
 * allowance is unlimited (a free account would hit its 10,000 events within a second of
 * load; the metering itself still runs on every insert); returns its API key.
 */
export async function createAccount(baseUrl: string): Promise<string> {
  const signUp = await postJson(`${baseUrl}/v1/accounts`);
  if (typeof signUp.api_key !== 'string') throw new Error(`unexpected sign-up answer: ${JSON.stringify(signUp)}`);
  const response = await fetch(`${baseUrl}/v1/account/plan`, {
    method: 'POST',
    headers: { authorization: `Bearer ${signUp.api_key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'enterprise' }),
  });
  if (response.status !== 200) throw new Error(`plan change answered ${response.status}: ${await response.text()}`);
  return signUp.api_key;
}

/** Creates an endpoint (`settings`: the POST /v1/endpoints body); returns its id and ingest URL. */
export async function createEndpoint(baseUrl: string, apiKey: string, settings: Record<string, unknown>): Promise<{ id: string; url: string }> {
  const endpoint = await postJson(`${baseUrl}/v1/endpoints`, apiKey, settings);
  if (typeof endpoint.id !== 'string' || typeof endpoint.url !== 'string') throw new Error(`unexpected endpoint: ${JSON.stringify(endpoint)}`);
  return { id: endpoint.id, url: endpoint.url };
}

// ---------------------------------------------------------------------------------
// Report

export function formatRow(cells: (string | number)[], widths: number[]): string {
  return cells.map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]!) : String(cell).padStart(widths[i]!))).join('  ');
}

/** The header of a table of TargetFigures rows, `first` naming the first column. */
export function figuresHeader(first: string, widths: number[]): string {
  return formatRow([first, 'req/s (mean)', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors', 'timeouts'], widths);
}

export function figuresRow(name: string, f: TargetFigures, widths: number[]): string {
  return formatRow([name, f.requestsPerSecond.toFixed(1), f.latencyP50Ms.toFixed(1), f.latencyP99Ms.toFixed(1), f.requests, f.non2xx, f.errors, f.timeouts], widths);
}

/** Nearest-rank percentile of ascending `sorted`. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Milliseconds to one decimal, `-` for none. */
export function ms(value: number): string {
  return Number.isFinite(value) ? value.toFixed(1) : '-';
}

/**
 * The report's closing lines: a `PROBLEM:` line per problem (one starting with two
 * spaces continues the one before), then `result: <success>` or FAILED.
 */
export function resultLines(problems: readonly string[], success: string): string[] {
  return [
    ...problems.map((problem) => (problem.startsWith('  ') ? `PROBLEM:${problem}` : `PROBLEM: ${problem}`)),
    `result: ${problems.length === 0 ? success : 'FAILED (see PROBLEM lines)'}`,
  ];
}

/** Prints the report, and with BENCH_JSON=1 the one-line JSON `summary()` as the last stdout line. */
export function writeReport(lines: readonly string[], summary: () => Record<string, unknown>): void {
  process.stdout.write(`${lines.join('\n')}\n`);
  if (process.env.BENCH_JSON === '1') process.stdout.write(`${JSON.stringify(summary())}\n`);
}

export function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** The report's machine line: CPU count and the load average taken before the run. */
export function machineLine(loadBefore: number[]): string {
  return `Machine: ${cpus().length} CPUs, load average before the run ${loadBefore.map((value) => value.toFixed(2)).join(' ')} (other work on the machine makes figures noisy)`;
}

/**
 * The code under test (the relay's checkout: BENCH_RELAY_ROOT's when set): the commit,
 * and whether apps/ or packages/ have uncommitted changes (a shared working tree can
 * change between runs). Undefined without git.
 */
export function codeVersion(): string | undefined {
  try {
    const root = process.env.BENCH_RELAY_ROOT?.trim() || REPO_ROOT;
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    const changed = git('status', '--porcelain', '--', 'apps', 'packages').split('\n').filter(Boolean).length;
    return changed > 0 ? `${commit} with ${changed} uncommitted change(s) in apps/ and packages/` : commit;
  } catch {
    return undefined;
  }
}
