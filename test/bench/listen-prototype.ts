/**
 * `npm run bench:listen-prototype` (issue 30): the measured prototype of the best
 * alternative design for the `hook listen` path, beside smee and the real `hook listen`
 * with and without its memory flags, in one run, with bench:listen's load generator and
 * local receiving server.
 *
 * Systems, one after another:
 *   A. smee: the real smee-client behind a smee.io-shaped server (smee-server.ts), as in
 *      bench:listen: nothing stored.
 *   B. the relay (HOOK_ROLE=all, its embedded PostgreSQL) and the real `hook listen` as
 *      built (apps/cli/bin/hook.js, which re-executes itself with LONG_RUNNING_FLAGS:
 *      `--max-semi-space-size=2 --optimize-for-size` and its malloc settings).
 *   C. the same relay and the same CLI build started WITHOUT the V8 flags (its entry run
 *      directly, so hook.js adds none; the malloc settings kept, so only the flags differ),
 *      on an endpoint of its own.
 *   D. the prototype (listen-prototype-server.ts and listen-prototype-client.ts): ingest
 *      that group-commits events with their deliveries already leased to the connected
 *      session, answers after the commit, pushes binary frames over ws; a client that POSTs
 *      through an undici Pool and acks in batches; results recorded in one statement a
 *      batch. On a fresh database of the same embedded PostgreSQL, migrated to the real
 *      schema, with the relay stopped. Then the same with the client started with hook.js's
 *      V8 flags and malloc settings ("client flags"; BENCH_PROTO_FLAGS=0 leaves it out),
 *      and with a window of 32 events in flight, so that the client falls behind and events
 *      take the queue path (stored due, claimed): what the shortcut saves (BENCH_PROTO_QUEUE=0
 *      leaves it out; BENCH_PROTO_QUEUE_WINDOW sets the window).
 *
 * For each: saturation (autocannon, 50 connections, 1 KiB JSON bodies, BENCH_DURATION_S,
 * then a wait until every acknowledged event arrived: forwarded/s = events ÷ (first
 * ingest → last arrival), as bench:listen), CPU per event over that phase (user + system
 * from /proc) of the server process, of the bench's own PostgreSQL and of the client
 * process, the client's peak RSS (VmHWM, and VmRSS sampled), and latency at a steady
 * BENCH_LATENCY_RATE (default 200/s) for BENCH_LATENCY_EVENTS (default 2,000) events
 * (runPaced, send → arrival at the local server, as bench:listen's phase 3). For the
 * relay and the prototype also a store-only phase (the same load to an endpoint nobody
 * listens to): what forwarding adds to storing.
 *
 * Environment (optional): BENCH_DURATION_S (default 5; the claims variant half of it), BENCH_WARMUP_S (default 2),
 * BENCH_LATENCY_EVENTS (2000), BENCH_LATENCY_RATE (200), BENCH_DELIVERY_TIMEOUT_S (60),
 * BENCH_PROTO_WINDOW (the prototype's events in flight to the client, default 1024),
 * BENCH_PROTO_CONNECTIONS (its client's connections to the local server, default 32),
 * BENCH_PROTO_SERVER_NODE_OPTIONS / BENCH_PROTO_CLIENT_NODE_OPTIONS (NODE_OPTIONS for the
 * prototype's processes: `--cpu-prof --cpu-prof-dir=<dir>` to see where their time goes),
 * BENCH_PROTO_ONLY=1 (the prototype alone),
 * BENCH_COST (pg_stat_statements is not loaded unless BENCH_COST=1: no cost model here),
 * BENCH_JSON=1 (one JSON line at the end). Exit 0 measured, 1 an acknowledged event never
 * arrived or a body differed, 2 bad settings.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { createOrm, migrateToLatest } from '@hook/db';
import { PLAN_LIMITS } from '@hook/core';

import {
  acknowledgedIds, codeVersion, createAccount, createBenchDatabase, createEndpoint, databaseServerUrl, jsonBody, log, machineLine, ms, onCleanup,
  percentile, positiveNumber, REPO_ROOT, resultLines, round, runBench, runLoad, runPaced, sampleCpu, seconds, startRelay, startServer, writeReport,
} from './support.ts';
// The local server, the wait for arrivals and memory sampling: bench:listen's (listen.ts runs its bench on import).
import {
  HOOK_ENTRY, longRunningLaunch, nonCanonical, sampleMemory, startLocalServer, waitForArrivals, type LocalServer, type MemorySampler,
} from './listen-receiver.ts';

const CONNECTIONS = 50;
const LATENCY_CONNECTIONS = 10;
const BODY_SIZE_BYTES = 1024;
const CLI_BUNDLE = join(REPO_ROOT, 'apps/cli/dist/main.js');
const CLI_SOURCE = join(REPO_ROOT, 'apps/cli/src/main.ts');
const SMEE_SERVER_ENTRY = join(REPO_ROOT, 'test/bench/smee-server.ts');
const SMEE_CLIENT_ENTRY = join(REPO_ROOT, 'node_modules/smee-client/bin/smee.js');
const PROTO_SERVER_ENTRY = join(REPO_ROOT, 'test/bench/listen-prototype-server.ts');
const PROTO_CLIENT_ENTRY = join(REPO_ROOT, 'test/bench/listen-prototype-client.ts');
const READY_TIMEOUT_MS = 30_000;

// ---------------------------------------------------------------------------------
// Clients as child processes

/** A child process (a client), drained and stopped by the clean-up registry at the latest. */
interface Client {
  pid: number;
  memory: MemorySampler;
  stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startClient(label: string, args: string[], env: NodeJS.ProcessEnv, isReady: (line: string) => boolean): Promise<Client> {
  const child: ChildProcess = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const memory = sampleMemory(child.pid!);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once('exit', (code, signal) => done({ code, signal })));
  let stopping: ReturnType<Client['stop']> | undefined;
  const stop = (signal: NodeJS.Signals): ReturnType<Client['stop']> => {
    stopping ??= (async () => {
      memory.sample();
      memory.stop();
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    })();
    return stopping;
  };
  onCleanup(label, async () => void (await stop('SIGTERM')));
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (!line.includes('"state":"connecting"') && !line.includes('"state":"open"')) process.stderr.write(`[${label}] ${line}\n`);
  });
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${label} was not ready within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    void exited.then(({ code, signal }) => fail(new Error(`${label} exited during start-up (code ${code}, signal ${signal})`)));
    let ready = false;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!ready && isReady(line)) {
        ready = true;
        clearTimeout(timer);
        done();
      }
    });
  });
  return { pid: child.pid!, memory, stop };
}

// ---------------------------------------------------------------------------------
// One system's measurement

interface Figures {
  name: string;
  forwardedPerS: number;
  ingestPerS: number;
  acknowledged: number;
  missing: number;
  /** CPU ms per event over the saturation phase (load and drain). */
  serverMs: number;
  postgresMs: number;
  clientMs: number;
  /** This process: the load generator and the local server. */
  benchMs: number;
  /** The same per event when the same load only stores (relay and prototype). */
  storeOnly: { serverMs: number; postgresMs: number; ingestPerS: number } | null;
  clientPeakRssMb: number;
  p50: number;
  p99: number;
  /** At the steady rate, send → the ingest's 2xx answer (for Hook and the prototype: after the commit). */
  answerP50: number;
  latencyEvents: number;
  latencyMissing: number;
  note: string;
}

interface Settings {
  durationS: number;
  warmupS: number;
  latencyRate: number;
  latencyS: number;
  deliveryTimeoutMs: number;
  body: Buffer;
}

interface Target {
  name: string;
  serverPid: number;
  clientPid: () => number;
  listenUrl: string;
  storeUrl: string | null;
  local: LocalServer;
  pacedBodies: Set<string>;
}

/** Store-only phase (when `storeUrl`), saturation and latency for one system. */
async function measure(target: Target, settings: Settings, peakRssKb: () => number): Promise<Omit<Figures, 'note'>> {
  const { durationS, warmupS, body, deliveryTimeoutMs } = settings;
  // Warm-up: the store-only path (if any), then 1 s of the listened one.
  if (warmupS > 0 && target.storeUrl) await runLoad({ url: target.storeUrl, connections: CONNECTIONS, durationS: warmupS, body });
  const warm = await runLoad({ url: target.listenUrl, connections: CONNECTIONS, durationS: 1, body });
  await waitForArrivals(`${target.name} warm-up`, target.local, acknowledgedIds([warm]).ids, deliveryTimeoutMs);

  let storeOnly: Figures['storeOnly'] = null;
  if (target.storeUrl) {
    log(`${target.name}: ${durationS} s store only`);
    const before = sampleCpu([target.serverPid]);
    const run = await runLoad({ url: target.storeUrl, connections: CONNECTIONS, durationS, body });
    const after = sampleCpu([target.serverPid]);
    const events = acknowledgedIds([run]).ids.size;
    if (before && after && events > 0) {
      storeOnly = {
        serverMs: (after.byPid.get(target.serverPid)! - before.byPid.get(target.serverPid)!) / events,
        postgresMs: (after.postgresMs - before.postgresMs) / events,
        ingestPerS: run.result.requests.mean,
      };
    }
  }

  log(`${target.name}: ${durationS} s saturation`);
  const pids = [target.serverPid, target.clientPid(), process.pid];
  const before = sampleCpu(pids);
  const firstMs = performance.now();
  const run = await runLoad({ url: target.listenUrl, connections: CONNECTIONS, durationS, body });
  const ids = acknowledgedIds([run]).ids;
  const missing = await waitForArrivals(target.name, target.local, ids, deliveryTimeoutMs);
  const after = sampleCpu(pids);
  const lastMs = [...ids].reduce((latest, id) => Math.max(latest, target.local.arrivals.get(id) ?? 0), 0);
  const forwardedPerS = (ids.size - missing.length) / ((lastMs - firstMs) / 1000);
  const per = (pid: number): number => (before && after && ids.size > 0 ? (after.byPid.get(pid)! - before.byPid.get(pid)!) / ids.size : Number.NaN);

  log(`${target.name}: ${settings.latencyRate} events/s for ${settings.latencyS} s`);
  const paced = await runPaced({
    url: target.listenUrl,
    ratePerS: settings.latencyRate,
    durationS: settings.latencyS,
    connections: LATENCY_CONNECTIONS,
    prepare: (seq) => {
      const pacedBody = nonCanonical(jsonBody(BODY_SIZE_BYTES, { seq }));
      target.pacedBodies.add(pacedBody.toString('utf8'));
      return { body: pacedBody, sentAtMs: performance.now() };
    },
  });
  const latencyMissing = await waitForArrivals(`${target.name} latency`, target.local, paced.acknowledged.keys(), deliveryTimeoutMs);
  const latencies = [...paced.acknowledged].flatMap(([id, { sentAtMs }]) => {
    const at = target.local.arrivals.get(id);
    return at === undefined ? [] : [at - sentAtMs];
  }).sort((a, b) => a - b);
  const answers = [...paced.acknowledged.values()].map(({ sentAtMs, answeredAtMs }) => answeredAtMs - sentAtMs).sort((a, b) => a - b);
  return {
    name: target.name,
    answerP50: percentile(answers, 50),
    forwardedPerS,
    ingestPerS: run.result.requests.mean,
    acknowledged: ids.size + paced.acknowledged.size,
    missing: missing.length + latencyMissing.length + paced.non2xx + paced.errors + run.result.non2xx + run.result.errors,
    serverMs: per(target.serverPid),
    postgresMs: before && after && ids.size > 0 ? (after.postgresMs - before.postgresMs) / ids.size : Number.NaN,
    clientMs: per(target.clientPid()),
    benchMs: per(process.pid),
    storeOnly,
    clientPeakRssMb: peakRssKb() / 1024,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    latencyEvents: paced.acknowledged.size,
    latencyMissing: latencyMissing.length,
  };
}

function expectedBodies(body: Buffer): { pacedBodies: Set<string>; check: (b: Buffer) => boolean; lenient: (b: Buffer) => boolean } {
  const text = body.toString('utf8');
  const pacedBodies = new Set<string>();
  return {
    pacedBodies,
    check: (b) => {
      const t = b.toString('utf8');
      return t === text || pacedBodies.has(t);
    },
    lenient: () => true, // smee-client re-serialises JSON (bench:listen counts that, not as a failure)
  };
}

// ---------------------------------------------------------------------------------
// A. smee

async function runSmee(settings: Settings): Promise<Figures> {
  const expected = expectedBodies(settings.body);
  const local = await startLocalServer(expected.lenient, 'local server (smee)');
  const server = await startServer('smee server', SMEE_SERVER_ENTRY, { PATH: process.env.PATH ?? '/usr/bin:/bin' }, /^smee listening on (\S+)$/, 10_000);
  const channel = `${server.url}/bench`;
  const client = await startClient('smee-client', [SMEE_CLIENT_ENTRY, '--url', channel, '--target', `http://127.0.0.1:${local.port}/`],
    { PATH: process.env.PATH ?? '/usr/bin:/bin' }, (line) => line.includes('Connected'));
  const figures = await measure({ name: 'smee', serverPid: server.pid, clientPid: () => client.pid, listenUrl: channel, storeUrl: null, local, pacedBodies: expected.pacedBodies },
    { ...settings, warmupS: 0 }, () => client.memory.peakKb());
  await client.stop('SIGTERM');
  await server.stop();
  return { ...figures, clientPeakRssMb: client.memory.peakKb() / 1024, note: 'smee-client + smee.io-shaped server (Fastify, SSE), nothing stored' };
}

// ---------------------------------------------------------------------------------
// B and C. The relay and the real hook listen

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).map((arg) => arg.replace(REPO_ROOT + '/', '')).join(' ').replace(/^\S*\/node /, 'node ');
  } catch {
    return '?';
  }
}

async function runHook(settings: Settings): Promise<{ results: Figures[]; databaseUrl: string }> {
  const database = await createBenchDatabase(databaseServerUrl());
  const relay = await startRelay(database.url, { HOOK_ALLOW_PRIVATE_DESTINATIONS: 'true' });
  const apiKey = await createAccount(relay.url);
  const storeOnly = await createEndpoint(relay.url, apiKey, { name: 'bench-store-only' });
  const results: Figures[] = [];
  const cliEntry = existsSync(CLI_BUNDLE) ? CLI_BUNDLE : CLI_SOURCE;
  let storeFigures: Figures['storeOnly'] = null;
  const launch = longRunningLaunch();
  for (const flags of [true, false]) {
    const name = flags ? 'hook listen (flags)' : 'hook listen (no flags)';
    const expected = expectedBodies(settings.body);
    const local = await startLocalServer(expected.check, `local server (${name})`);
    const listened = await createEndpoint(relay.url, apiKey, { name: `bench-listen-${flags ? 'flags' : 'plain'}` });
    const home = mkdtempSync(join(tmpdir(), 'hook-bench-cli-'));
    onCleanup(`temporary directory ${home}`, async () => rmSync(home, { recursive: true, force: true }));
    const env = {
      ...(flags ? {} : launch.env),
      PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, XDG_CONFIG_HOME: join(home, 'config'), HOOK_API_URL: relay.url, HOOK_API_KEY: apiKey,
    };
    const args = [flags ? HOOK_ENTRY : cliEntry, 'listen', String(local.port), '--endpoint', listened.id, '--json'];
    const cli = await startClient(name, args, env, (line) => line.includes('"type":"ready"'));
    const launched = cmdline(cli.pid);
    log(`${name}: ${launched}`);
    // The store-only phase once, with the first CLI (it does not listen to that endpoint).
    const figures = await measure({ name, serverPid: relay.pid, clientPid: () => cli.pid, listenUrl: listened.url, storeUrl: storeFigures ? null : storeOnly.url, local, pacedBodies: expected.pacedBodies },
      { ...settings, warmupS: storeFigures ? 0 : settings.warmupS }, () => cli.memory.peakKb());
    storeFigures ??= figures.storeOnly;
    const exit = await cli.stop('SIGINT');
    if (local.badBodies > 0) figures.missing += local.badBodies;
    results.push({
      ...figures,
      storeOnly: storeFigures,
      clientPeakRssMb: cli.memory.peakKb() / 1024,
      note: `${launched}; exit ${exit.code ?? exit.signal} on SIGINT`,
    });
  }
  await relay.stop();
  return { results, databaseUrl: database.url };
}

// ---------------------------------------------------------------------------------
// D. The prototype

async function runPrototype(settings: Settings, serverUrl: string): Promise<(Figures & { stats: Record<string, number> })[]> {
  // A fresh database on the same PostgreSQL server, migrated to the real schema.
  const name = `hook_proto_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  onCleanup(`database ${name}`, async () => {
    const drop = new pg.Client({ connectionString: serverUrl });
    await drop.connect();
    await drop.query(`drop database if exists ${name} with (force)`);
    await drop.end();
  });
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const orm = await createOrm({ databaseUrl, poolMax: 1 });
  await migrateToLatest(orm);
  await orm.close();
  const retentionClass = PLAN_LIMITS.enterprise.retentionDays;
  const setup = new pg.Client({ connectionString: databaseUrl });
  await setup.connect();
  const month = new Date().toISOString().slice(0, 7) + '-01';
  await setup.query(`insert into account (id, plan, created_at) values ('acct_proto', 'enterprise', now())`);
  await setup.query(`insert into account_usage (account_id, month) values ('acct_proto', $1::date)`, [month]);
  await setup.query(`insert into endpoint (id, account_id, name, ingest_id, status, created_at, updated_at) values
                     ('ep_proto_listen', 'acct_proto', 'listen', 'proto_listen', 'active', now(), now()),
                     ('ep_proto_store', 'acct_proto', 'store', 'proto_store', 'active', now(), now())`);
  await setup.query(`insert into destination (id, account_id, endpoint_id, position, type, url, secret, status, created_at, updated_at)
                     values ('dst_proto_cli', 'acct_proto', 'ep_proto_listen', 0, 'cli', null, 'whsec_proto', 'active', now(), now())`);
  await setup.query(`select hook_ensure_history_partitions($1, now() - interval '1 day', now() + interval '1 day')`, [retentionClass]);

  // The client runs as plain JavaScript, as the real CLI runs its bundle: Node's type stripping
  // (amaro) alone adds ~18 MB to a process's RSS.
  const clientDir = mkdtempSync(join(tmpdir(), 'hook-bench-proto-'));
  onCleanup(`temporary directory ${clientDir}`, async () => rmSync(clientDir, { recursive: true, force: true }));
  const clientEntry = join(clientDir, 'listen-prototype-client.mjs');
  writeFileSync(clientEntry, stripTypeScriptTypes(readFileSync(PROTO_CLIENT_ENTRY, 'utf8'))
    .replace(/from '(undici|ws)'/g, (_, name: string) => `from '${import.meta.resolve(name)}'`));
  const expected = expectedBodies(settings.body);
  const local = await startLocalServer(expected.check, 'local server (prototype)');
  const server = await startServer('prototype server', PROTO_SERVER_ENTRY, {
    PATH: process.env.PATH ?? '/usr/bin:/bin', PROTO_DATABASE_URL: databaseUrl, PROTO_ACCOUNT: 'acct_proto', PROTO_LISTEN_ENDPOINT: 'ep_proto_listen',
    PROTO_STORE_ENDPOINT: 'ep_proto_store', PROTO_DESTINATION: 'dst_proto_cli', PROTO_SECRET: 'whsec_proto', PROTO_RETENTION_CLASS: String(retentionClass),
    ...(process.env.BENCH_PROTO_WINDOW ? { PROTO_WINDOW: process.env.BENCH_PROTO_WINDOW } : {}),
    ...(process.env.BENCH_PROTO_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_PROTO_SERVER_NODE_OPTIONS } : {}),
  }, /^prototype listening on (\S+)$/, 30_000);
  // The client as it is (V8's defaults), then, unless BENCH_PROTO_FLAGS=0, with hook.js's V8 flags and malloc settings: what they do to a lean client.
  // And, unless BENCH_PROTO_QUEUE=0, with a window of BENCH_PROTO_QUEUE_WINDOW (default 32) events: the client
  // falls behind, so events go through the queue (stored due, then claimed): what the shortcut saves.
  const queueWindow = positiveNumber('BENCH_PROTO_QUEUE_WINDOW', 32);
  const variants = [
    { name: 'prototype', flags: false, window: null },
    ...(process.env.BENCH_PROTO_FLAGS === '0' ? [] : [{ name: 'prototype (client flags)', flags: true, window: null }]),
    ...(process.env.BENCH_PROTO_QUEUE === '0' ? [] : [{ name: `prototype (claims, window ${queueWindow})`, flags: false, window: queueWindow }]),
  ];
  const launch = longRunningLaunch();
  const results: (Figures & { stats: Record<string, number> })[] = [];
  let before: Record<string, number> = {};
  for (const { name, flags, window } of variants) {
    if (window !== null) await fetch(`${server.url}/window?size=${window}`, { method: 'POST' });
    const client = await startClient(name, [...(flags ? launch.flags : []), clientEntry], {
      ...(flags ? launch.env : {}),
      PATH: process.env.PATH ?? '/usr/bin:/bin', PROTO_SESSION_URL: `${server.url.replace(/^http/, 'ws')}/session`, PROTO_TARGET: `http://127.0.0.1:${local.port}`,
      ...(process.env.BENCH_PROTO_CONNECTIONS ? { PROTO_CONNECTIONS: process.env.BENCH_PROTO_CONNECTIONS } : {}),
      ...(process.env.BENCH_PROTO_CLIENT_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_PROTO_CLIENT_NODE_OPTIONS } : {}),
    }, (line) => line === 'ready');
    const figures = await measure({ name, serverPid: server.pid, clientPid: () => client.pid, listenUrl: `${server.url}/listen`, storeUrl: results.length > 0 ? null : `${server.url}/store`, local, pacedBodies: expected.pacedBodies },
      { ...settings, warmupS: results.length > 0 ? 0 : settings.warmupS, durationS: window !== null ? Math.ceil(settings.durationS / 2) : settings.durationS }, () => client.memory.peakKb());
    // Every attempt recorded? (the record is asynchronous: give it a moment)
    let counts = { attempts: 0, open: 0 };
    for (let tries = 0; tries < 250; tries++) {
      const { rows } = await setup.query<{ attempts: string; open: string }>(`select (select count(*) from attempt) as attempts,
        (select count(*) from delivery where layout = 1 and status in ('pending', 'retrying')) as open`);
      counts = { attempts: Number(rows[0]!.attempts), open: Number(rows[0]!.open) };
      if (counts.open === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const total = (await (await fetch(`${server.url}/stats`)).json()) as Record<string, number>;
    const stats = Object.fromEntries(Object.entries(total).map(([key, value]) => [key, key === 'backlog' || key === 'inFlight' ? value : value - (before[key] ?? 0)]));
    before = total;
    await client.stop('SIGTERM');
    const launched = `node ${flags ? `${launch.flags.join(' ')} ` : ''}listen-prototype-client.ts (types stripped)${window !== null ? `, window ${window}` : ''}`;
    results.push({
      ...figures,
      storeOnly: figures.storeOnly ?? results[0]?.storeOnly ?? null,
      clientPeakRssMb: client.memory.peakKb() / 1024,
      note: `${launched}; shortcut ${stats.shortcut}, via claims ${stats.claimed} (${stats.claims} claims), ${stats.storeStatements} store statements for ${stats.stored} events, ` +
        `${stats.recordStatements} record statements for ${stats.recorded} results; attempts in the database ${counts.attempts}, deliveries still open ${counts.open}`,
      stats: { ...stats, attempts_in_database: counts.attempts, open_deliveries: counts.open },
    });
  }
  await setup.end();
  await server.stop();
  if (local.badBodies > 0) results[0]!.missing += local.badBodies;
  return results;
}

// ---------------------------------------------------------------------------------

async function main(): Promise<number> {
  process.env.BENCH_COST ??= '0'; // read by createBenchDatabase: no pg_stat_statements (no cost model here)
  const durationS = seconds('BENCH_DURATION_S', 5, false);
  const warmupS = seconds('BENCH_WARMUP_S', 2, true);
  const latencyRate = positiveNumber('BENCH_LATENCY_RATE', 200);
  const latencyEvents = positiveNumber('BENCH_LATENCY_EVENTS', 2000);
  const deliveryTimeoutMs = seconds('BENCH_DELIVERY_TIMEOUT_S', 60, false) * 1000;
  const settings: Settings = { durationS, warmupS, latencyRate, latencyS: latencyEvents / latencyRate, deliveryTimeoutMs, body: jsonBody(BODY_SIZE_BYTES) };
  const loadBefore = loadavg();
  const code = codeVersion();

  // BENCH_PROTO_ONLY=1: the prototype alone (trying it out; no ratios).
  const only = process.env.BENCH_PROTO_ONLY === '1';
  const smee = only ? undefined : await runSmee(settings);
  const { results: hook, databaseUrl } = only ? { results: [], databaseUrl: (await createBenchDatabase(databaseServerUrl())).url } : await runHook(settings);
  // The prototype on a database of its own on the same PostgreSQL server (created over the relay's database's connection).
  const prototypes = await runPrototype(settings, databaseUrl);
  const prototype = prototypes[0]!;
  const all: Figures[] = [...(smee ? [smee] : []), ...hook, ...prototypes];
  const toSmee = (f: Figures): number => (smee ? f.forwardedPerS / smee.forwardedPerS : Number.NaN);

  const widths = [31, 7, 7, 9, 8, 9, 8, 8, 10, 7, 7, 11];
  const row = (cells: (string | number)[]): string => cells.map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]!) : String(cell).padStart(widths[i]!))).join(' ');
  const f3 = (value: number): string => (Number.isFinite(value) ? value.toFixed(3) : '-');
  const out = [
    '',
    `Listen prototype benchmark: ${CONNECTIONS} connections, ${BODY_SIZE_BYTES}-byte JSON bodies, ${durationS} s saturation, ${latencyEvents} events at ${latencyRate}/s for latency`,
    machineLine(loadBefore),
    ...(code ? [`Code: ${code}`] : []),
    'CPU: ms per event over saturation (load and drain), user + system from /proc; PostgreSQL: the bench\'s own server; bench: this process (autocannon and the local server); client MB: its peak RSS; p50/p99: send → arrival at the local server; answer p50: send → the ingest\'s 2xx',
    '',
    row(['system', 'fwd/s', '÷ smee', 'ingest/s', 'server', 'postgres', 'client', 'bench', 'client MB', 'p50 ms', 'p99 ms', 'answer p50']),
    ...all.map((f) => row([f.name, f.forwardedPerS.toFixed(0), toSmee(f).toFixed(2), f.ingestPerS.toFixed(0), f3(f.serverMs), f3(f.postgresMs), f3(f.clientMs), f3(f.benchMs),
      f.clientPeakRssMb.toFixed(1), ms(f.p50), ms(f.p99), ms(f.answerP50)])),
    '',
    ...all.filter((f) => f.storeOnly).map((f) => `${f.name}: store only ${f.storeOnly!.ingestPerS.toFixed(0)} req/s, server ${f3(f.storeOnly!.serverMs)} ms, PostgreSQL ${f3(f.storeOnly!.postgresMs)} ms an event → forwarding adds server ${f3(f.serverMs - f.storeOnly!.serverMs)}, PostgreSQL ${f3(f.postgresMs - f.storeOnly!.postgresMs)} ms an event`),
    ...all.map((f) => `${f.name}: ${f.acknowledged} acknowledged, ${f.missing} missing or failed; ${f.note}`),
  ];
  const problems: string[] = [];
  for (const f of all) if (f.missing > 0 && f.name !== 'smee') problems.push(`${f.name}: ${f.missing} acknowledged event(s) missing, failed or with another body`);
  for (const p of prototypes) if (p.stats.open_deliveries !== 0) problems.push(`${p.name}: ${p.stats.open_deliveries} deliveries still open after the run`);
  out.push(...resultLines(problems, 'every acknowledged event forwarded'));
  const json = (f: Figures): Record<string, unknown> => ({
    forwarded_per_second: round(f.forwardedPerS, 1),
    ratio_to_smee: smee ? round(toSmee(f), 2) : null,
    ingest_per_second: round(f.ingestPerS, 1),
    cpu_ms_per_event: { server: round(f.serverMs, 4), postgres: round(f.postgresMs, 4), client: round(f.clientMs, 4), bench: round(f.benchMs, 4) },
    store_only: f.storeOnly ? { ingest_per_second: round(f.storeOnly.ingestPerS, 1), server: round(f.storeOnly.serverMs, 4), postgres: round(f.storeOnly.postgresMs, 4) } : null,
    client_peak_rss_mb: round(f.clientPeakRssMb, 1),
    latency_p50_ms: round(f.p50, 2),
    latency_p99_ms: round(f.p99, 2),
    answer_p50_ms: round(f.answerP50, 2),
    acknowledged: f.acknowledged,
    missing: f.missing,
    note: f.note,
  });
  writeReport(out, () => ({
    bench: 'listen-prototype',
    code: code ?? null,
    duration_s: durationS,
    latency_rate: latencyRate,
    latency_events: latencyEvents,
    load: loadBefore.map((value) => round(value, 2)),
    smee: smee ? json(smee) : null,
    hook_listen_flags: hook[0] ? json(hook[0]) : null,
    hook_listen_no_flags: hook[1] ? json(hook[1]) : null,
    prototype: { ...json(prototype), stats: prototype.stats },
    prototype_variants: prototypes.slice(1).map((p) => ({ name: p.name, ...json(p), stats: p.stats })),
    problems,
  }));
  return problems.length === 0 ? 0 : 1;
}

await runBench(main);
