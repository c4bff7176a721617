/**
 * `npm run bench:listen`: how fast `hook listen` forwards what the relay ingests to a
 * local server, how long one event takes from ingest to localhost, how much memory the
 * CLI uses, and whether any event went missing.
 *
 * Processes: the relay (HOOK_ROLE=all) on a fresh database (as bench:delivery: a new
 * `hook_bench_<random>` on HOOK_BENCH_DATABASE_URL / HOOK_TEST_DATABASE_URL, else an
 * embedded PostgreSQL), the real `hook listen <port> --json` (apps/cli/bin/hook.js) on
 * an endpoint with a CLI destination, and a local server in this process (node:http,
 * answers 200 once a body is in, records each webhook-id and when it arrived). Phases:
 *
 *   1. Ingest baseline: autocannon at 50 connections, 1 KiB JSON bodies, to an endpoint
 *      nobody listens to (events are stored only) → req/s, the same run's reference.
 *   2. Saturation: the same load to the listened endpoint, then a wait until every
 *      acknowledged event has reached the local server → events/s forwarded = events /
 *      (first ingest → last arrival).
 *   3. Latency when not saturated: a paced sender at a steady 200 events/s; each event's
 *      send time → its arrival at the local server (matched by webhook-id) → p50/p99.
 *   Cost model (cost-model.ts, docs/performance.md): for phases 1 and 2 and their
 *      difference, per event and per stage, the relay's and hook listen's CPU (each split
 *      by its CPU profile: the relay's "stream to a listener"; the CLI's own code, its
 *      sends to localhost ("send", undici) and its stream ("stream to a listener", ws)),
 *      PostgreSQL's time per statement, the statements run and the row versions written.
 *   4. Checks: every acknowledged event arrived, with the bytes sent; the CLI's memory
 *      (VmHWM and VmRSS from /proc/<pid>/status, sampled through the run); hook listen
 *      exits 0 on SIGINT.
 *   5. The same run's baseline, smee: the real smee-client (npm) behind a smee.io-style
 *      server (test/bench/smee-server.ts: broadcast over Server-Sent Events, nothing
 *      stored), phases 2 and 3 with the same load and a local server of its own, its
 *      client's memory sampled the same way, and how many bodies arrived byte-exact
 *      (smee-client re-serialises JSON). Skipped with BENCH_SMEE=0.
 *
 * Targets (reported PASS/FAIL), every event committed before it is forwarded: forwarded
 * events/s ≥ smee's in the same run (≥ 1,000 with BENCH_SMEE=0), ingest while listening ≥
 * 0.5 × store-only, p50 ≤ 4 ms and p99 ≤ 30 ms at 200 events/s, no loss, CLI peak RSS <
 * 100 MB. Exit codes: 0 measured (a target missed is reported, not failed); 1 an
 * acknowledged event never arrived, a body differed, an ingest request failed, or a
 * process did not stop cleanly; 2 bad settings.
 *
 * Environment (all optional):
 *   BENCH_DURATION_S           seconds of load in phases 1 and 2 (default 8)
 *   BENCH_WARMUP_S             warm-up seconds before phase 1, not counted (default 2)
 *   BENCH_LATENCY_S            seconds of paced load in phase 3 (default 5)
 *   BENCH_LATENCY_RATE         events per second in phase 3 (default 200; the latency target is only judged at 200)
 *   BENCH_MAX_IN_FLIGHT        hook listen --max-in-flight (default: not passed, the relay's 32)
 *   BENCH_DELIVERY_TIMEOUT_S   how long to wait for a phase's events to arrive (default 120)
 *   BENCH_SMEE=0               leave out the smee baseline (phase 5)
 *   BENCH_COST=0               leave the cost model out (no CPU profiles, no pg_stat_statements): the cleanest throughput,
 *                              and the fair one against smee, whose processes are not profiled
 *   BENCH_COST_DETAIL=1        the cost model also names each stage's costliest functions
 *   BENCH_LISTEN_NODE_OPTIONS  NODE_OPTIONS for hook listen (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to see where its time goes)
 *   BENCH_RELAY_NODE_OPTIONS   NODE_OPTIONS for the relay (the same, for the relay)
 *   BENCH_JSON=1               also print a one-line JSON summary as the last stdout line
 *   HOOK_BENCH_DATABASE_URL / HOOK_TEST_DATABASE_URL   PostgreSQL server URL to create the bench database on
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  acknowledgedIds,
  codeVersion,
  costModelEnabled,
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
  machineLine,
  ms,
  onCleanup,
  percentile,
  positiveNumber,
  REPO_ROOT,
  resultLines,
  round,
  runBench,
  runLoad,
  runPaced,
  sampleCpu,
  seconds,
  startRelay,
  startServer,
  UsageError,
  writeReport,
  type CpuSample,
} from './support.ts';
import { HOOK_ENTRY, longRunningLaunch, nonCanonical, sampleMemory, startLocalServer, waitForArrivals } from './listen-receiver.ts';
import { CostProbe, costDifference, costJson, costLines, costProfiles, costTable, type CostPhase } from './cost-model.ts';

const CONNECTIONS = 50;
const BODY_SIZE_BYTES = 1024;
/** The CLI's sources, run directly when its CPU is profiled: the bundle in dist/ that hook.js runs names no file or package a stage could be told by. */
const HOOK_SOURCE_ENTRY = join(REPO_ROOT, 'apps/cli/src/main.ts');
const SMEE_SERVER_ENTRY = join(REPO_ROOT, 'test/bench/smee-server.ts');
const SMEE_CLIENT_ENTRY = join(REPO_ROOT, 'node_modules/smee-client/bin/smee.js');
const TARGET_LATENCY_P50_MS = 4;
const TARGET_LATENCY_P99_MS = 30;
const TARGET_INGEST_RATIO = 0.5;
/** Forwarded events/s without a smee run to compare with (BENCH_SMEE=0). */
const TARGET_FORWARDED_PER_S = 1000;
const TARGET_RSS_MB = 100;
const DEFAULT_DURATION_S = 8;
const DEFAULT_WARMUP_S = 2;
const DEFAULT_LATENCY_S = 5;
const DEFAULT_LATENCY_RATE = 200;
const DEFAULT_DELIVERY_TIMEOUT_S = 120;
const LATENCY_CONNECTIONS = 10;
const HOOK_READY_TIMEOUT_MS = 30_000;
const EXAMPLES = 3;

// ---------------------------------------------------------------------------------
// hook listen as a child process

interface ListenProcess {
  pid: number;
  /** Delivery lines hook printed, by status (null: no answer from the local server). */
  statuses: Map<string, number>;
  /** Event id → when hook received its delivery (its line's forwarded_at, epoch ms; first delivery only). */
  receivedAt: Map<string, number>;
  /** The highest VmRSS seen by sampling, and VmHWM at the last sample (kB). */
  memory(): { peakRssKb: number; hwmKb: number };
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `hook listen`: through bin/hook.js (the build), or, with `profileArgs`, from its sources with the same flags and the profiler on. */
async function startListen(apiUrl: string, apiKey: string, endpointId: string, port: number, maxInFlight: string | undefined, profileArgs: string[]): Promise<ListenProcess> {
  const home = mkdtempSync(join(tmpdir(), 'hook-bench-cli-'));
  onCleanup(`temporary directory ${home}`, async () => rmSync(home, { recursive: true, force: true }));
  const launch = profileArgs.length > 0 ? longRunningLaunch() : undefined;
  const args = [...(launch ? [...launch.flags, ...profileArgs, HOOK_SOURCE_ENTRY] : [HOOK_ENTRY]), 'listen', String(port), '--endpoint', endpointId, '--json', ...(maxInFlight ? ['--max-in-flight', maxInFlight] : [])];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: {
      ...launch?.env,
      PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, XDG_CONFIG_HOME: join(home, 'config'), HOOK_API_URL: apiUrl, HOOK_API_KEY: apiKey,
      ...(process.env.BENCH_LISTEN_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_LISTEN_NODE_OPTIONS } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const statuses = new Map<string, number>();
  const receivedAt = new Map<string, number>();
  const memory = sampleMemory(child.pid!);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once('exit', (code, signal) => done({ code, signal })));
  let stopping: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  const stop = (): Promise<{ code: number | null; signal: NodeJS.Signals | null }> => {
    stopping ??= (async () => {
      memory.sample();
      memory.stop();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    })();
    return stopping;
  };
  onCleanup('hook listen', async () => void (await stop()));
  createInterface({ input: child.stderr! }).on('line', (line) => {
    // Connection reports are JSON in --json mode; show the ones that are not routine.
    if (!line.includes('"state":"connecting"') && !line.includes('"state":"open"')) process.stderr.write(`[hook listen] ${line}\n`);
  });
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`hook listen printed no ready line within ${HOOK_READY_TIMEOUT_MS} ms`)), HOOK_READY_TIMEOUT_MS);
    void exited.then(({ code, signal }) => fail(new Error(`hook listen exited during start-up (code ${code}, signal ${signal})`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let record: { type?: string; status?: number | null; event_id?: string; forwarded_at?: string };
      try {
        record = JSON.parse(line);
      } catch {
        log(`hook listen printed a line that is not JSON: ${line}`);
        return;
      }
      if (record.type === 'ready') {
        clearTimeout(timer);
        done();
      } else if (record.type === 'delivery') {
        const key = String(record.status);
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        if (record.event_id && record.forwarded_at && !receivedAt.has(record.event_id)) receivedAt.set(record.event_id, Date.parse(record.forwarded_at));
      }
    });
  });
  return { pid: child.pid!, statuses, receivedAt, memory: memory.memory, stop };
}

// ---------------------------------------------------------------------------------
// The smee baseline (phase 5)

interface SmeeFigures {
  ingest: ReturnType<typeof figures>;
  forwardedPerS: number;
  missing: number;
  acknowledged: number;
  p50: number;
  p99: number;
  peakRssMb: number;
  exactBodies: number;
  forwardedBodies: number;
}

/** Phases 2 and 3 through smee-client and a smee.io-style server, with the same load as Hook's. */
async function runSmee(options: { durationS: number; latencyS: number; latencyRate: number; body: Buffer; deliveryTimeoutMs: number }): Promise<SmeeFigures> {
  const bodyText = options.body.toString('utf8');
  const pacedBodies = new Set<string>();
  let exactBodies = 0;
  let forwardedBodies = 0;
  const local = await startLocalServer((body) => {
    const text = body.toString('utf8');
    // The paced phase's bodies are written as senders write JSON (nonCanonical): do they arrive as sent?
    if (text !== bodyText) {
      forwardedBodies++;
      if (pacedBodies.has(text)) exactBodies++;
    }
    return true; // smee re-serialises JSON: counted, not a failure of the run
  });
  const server = await startServer('smee server', SMEE_SERVER_ENTRY, { PATH: process.env.PATH ?? '/usr/bin:/bin' }, /^smee listening on (\S+)$/, 10_000);
  const channel = `${server.url}/bench`;
  const client = spawn(process.execPath, [SMEE_CLIENT_ENTRY, '--url', channel, '--target', `http://127.0.0.1:${local.port}/`], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const memory = sampleMemory(client.pid!);
  const exited = new Promise<void>((done) => client.once('exit', () => done()));
  const stopClient = async (): Promise<void> => {
    memory.sample();
    memory.stop();
    if (client.exitCode === null && client.signalCode === null) client.kill('SIGTERM');
    await exited;
  };
  onCleanup('smee-client', stopClient);
  client.stderr!.on('data', (chunk: Buffer) => process.stderr.write(`[smee-client] ${chunk.toString()}`));
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error('smee-client did not connect within 30 s')), 30_000);
    createInterface({ input: client.stdout! }).on('line', (line) => {
      if (line.includes('Connected')) {
        clearTimeout(timer);
        done();
      }
    });
  });

  log('phase 5: smee warm-up (1 s)');
  const warm = await runLoad({ url: channel, connections: CONNECTIONS, durationS: 1, body: options.body });
  await waitForArrivals('smee warm-up', local, acknowledgedIds([warm]).ids, options.deliveryTimeoutMs);
  log(`phase 5: ${options.durationS} s of load through smee`);
  const firstIngestMs = performance.now();
  const run = await runLoad({ url: channel, connections: CONNECTIONS, durationS: options.durationS, body: options.body });
  const ids = acknowledgedIds([run]).ids;
  const missing = await waitForArrivals('smee', local, ids, options.deliveryTimeoutMs);
  const lastArrivalMs = [...ids].reduce((latest, id) => Math.max(latest, local.arrivals.get(id) ?? 0), 0);
  const forwardedPerS = (ids.size - missing.length) / ((lastArrivalMs - firstIngestMs) / 1000);

  log(`phase 5: ${options.latencyRate} events/s through smee for ${options.latencyS} s`);
  const paced = await runPaced({
    url: channel,
    ratePerS: options.latencyRate,
    durationS: options.latencyS,
    connections: LATENCY_CONNECTIONS,
    prepare: (seq) => {
      const body = nonCanonical(jsonBody(BODY_SIZE_BYTES, { seq }));
      pacedBodies.add(body.toString('utf8'));
      return { body, sentAtMs: performance.now() };
    },
  });
  const latencyMissing = await waitForArrivals('smee latency', local, paced.acknowledged.keys(), options.deliveryTimeoutMs);
  const latencies = [...paced.acknowledged].flatMap(([id, { sentAtMs }]) => {
    const arrivedMs = local.arrivals.get(id);
    return arrivedMs === undefined ? [] : [arrivedMs - sentAtMs];
  }).sort((a, b) => a - b);
  await stopClient();
  await server.stop();
  return {
    ingest: figures(run.result),
    forwardedPerS,
    missing: missing.length + latencyMissing.length,
    acknowledged: ids.size + paced.acknowledged.size,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    peakRssMb: memory.peakKb() / 1024,
    exactBodies,
    forwardedBodies,
  };
}

// ---------------------------------------------------------------------------------
// Figures

interface CpuPerEvent { relay: number; postgres: number; hook: number; bench: number }

/** CPU ms per event between two samples of [relay, hook listen, this process] and PostgreSQL. */
function cpuPerEvent(before: CpuSample | null, after: CpuSample | null, [relayPid, hookPid, benchPid]: number[], events: number): CpuPerEvent | null {
  if (!before || !after || events === 0) return null;
  const of = (pid: number): number => (after.byPid.get(pid)! - before.byPid.get(pid)!) / events;
  return { relay: of(relayPid!), postgres: (after.postgresMs - before.postgresMs) / events, hook: of(hookPid!), bench: of(benchPid!) };
}

function cpuText(cpu: CpuPerEvent): string {
  return [cpu.relay, cpu.postgres, cpu.hook, cpu.bench].map((ms) => ms.toFixed(3)).join(' / ');
}

function smeeClientVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules/smee-client/package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

function mb(kb: number): string {
  return (kb / 1024).toFixed(1);
}

// ---------------------------------------------------------------------------------

async function main(): Promise<number> {
  const durationS = seconds('BENCH_DURATION_S', DEFAULT_DURATION_S, false);
  const warmupS = seconds('BENCH_WARMUP_S', DEFAULT_WARMUP_S, true);
  const latencyS = seconds('BENCH_LATENCY_S', DEFAULT_LATENCY_S, false);
  const latencyRate = positiveNumber('BENCH_LATENCY_RATE', DEFAULT_LATENCY_RATE);
  const deliveryTimeoutMs = seconds('BENCH_DELIVERY_TIMEOUT_S', DEFAULT_DELIVERY_TIMEOUT_S, false) * 1000;
  const maxInFlight = process.env.BENCH_MAX_IN_FLIGHT?.trim() || undefined;
  const withSmee = process.env.BENCH_SMEE !== '0';
  if (maxInFlight !== undefined && !/^\d+$/.test(maxInFlight)) throw new UsageError(`BENCH_MAX_IN_FLIGHT=${JSON.stringify(maxInFlight)} is not a whole number.`);
  const loadBefore = loadavg();
  const code = codeVersion();
  const loadBody = jsonBody(BODY_SIZE_BYTES);
  const pacedBodies = new Set<string>();
  const loadBodyText = loadBody.toString('utf8');

  const local = await startLocalServer((body) => {
    const text = body.toString('utf8');
    return text === loadBodyText || pacedBodies.has(text);
  });
  const database = await createBenchDatabase(databaseServerUrl());
  const profiles = costProfiles(undefined);
  const relay = await startRelay(database.url, {
    HOOK_ALLOW_PRIVATE_DESTINATIONS: 'true',
    ...(process.env.BENCH_RELAY_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_RELAY_NODE_OPTIONS } : {}),
  }, profiles.args);
  const apiKey = await createAccount(relay.url);
  const storeOnly = await createEndpoint(relay.url, apiKey, { name: 'bench-store-only' });
  const listened = await createEndpoint(relay.url, apiKey, { name: 'bench-listen' });
  log(`starting hook listen on ${listened.id}, forwarding to 127.0.0.1:${local.port}`);
  const hook = await startListen(relay.url, apiKey, listened.id, local.port, maxInFlight, profiles.args);
  const costProbe = await CostProbe.open(database.url, [{ role: 'relay', pid: relay.pid }, { role: 'CLI', pid: hook.pid }]);
  onCleanup('cost probe', () => costProbe.close());

  // 1. Ingest baseline (with a warm-up of the relay and the listener's path first).
  if (warmupS > 0) {
    log(`warm-up: ${warmupS} s of ingest to the store-only endpoint, then 1 s to the listened one`);
    await runLoad({ url: storeOnly.url, connections: CONNECTIONS, durationS: warmupS, body: loadBody });
    const warm = await runLoad({ url: listened.url, connections: CONNECTIONS, durationS: 1, body: loadBody });
    const missingWarm = await waitForArrivals('warm-up', local, acknowledgedIds([warm]).ids, deliveryTimeoutMs);
    if (missingWarm.length > 0) log(`warm-up: ${missingWarm.length} events not forwarded (counted below)`);
  }
  log(`phase 1: ${durationS} s of ingest to the store-only endpoint (baseline)`);
  const cpuPids = [relay.pid, hook.pid, process.pid];
  const storeCost = await costProbe.start('1. stored only');
  const storeCpuBefore = sampleCpu(cpuPids);
  const baselineRun = await runLoad({ url: storeOnly.url, connections: CONNECTIONS, durationS, body: loadBody });
  const baseline = figures(baselineRun.result);
  const storeCpu = cpuPerEvent(storeCpuBefore, sampleCpu(cpuPids), cpuPids, baselineRun.acknowledged.length);
  const storePhase: CostPhase = await storeCost.stop(baselineRun.acknowledged.length);

  // 2. Saturation.
  log(`phase 2: ${durationS} s of ingest to the listened endpoint`);
  const listenCost = await costProbe.start('2. stored and forwarded by hook listen');
  const firstIngestMs = performance.now();
  const listenCpuBefore = sampleCpu(cpuPids);
  const saturationRun = await runLoad({ url: listened.url, connections: CONNECTIONS, durationS, body: loadBody });
  const ingestEndMs = performance.now();
  const whileListening = figures(saturationRun.result);
  const saturationIds = acknowledgedIds([saturationRun]).ids;
  const forwardedDuringIngest = [...saturationIds].filter((id) => (local.arrivals.get(id) ?? Infinity) <= ingestEndMs).length;
  const saturationMissing = await waitForArrivals('phase 2', local, saturationIds, deliveryTimeoutMs);
  const listenCpu = cpuPerEvent(listenCpuBefore, sampleCpu(cpuPids), cpuPids, saturationIds.size);
  const listenPhase: CostPhase = await listenCost.stop(saturationIds.size);
  const lastArrivalMs = [...saturationIds].reduce((latest, id) => Math.max(latest, local.arrivals.get(id) ?? 0), 0);
  const forwardSpanS = (lastArrivalMs - firstIngestMs) / 1000;
  const forwardedPerS = (saturationIds.size - saturationMissing.length) / forwardSpanS;
  const forwardedPerSDuringIngest = forwardedDuringIngest / ((ingestEndMs - firstIngestMs) / 1000);
  const drainS = (lastArrivalMs - ingestEndMs) / 1000;

  // 3. Latency at a steady rate.
  log(`phase 3: ${latencyRate} events/s for ${latencyS} s`);
  const paced = await runPaced({
    url: listened.url,
    ratePerS: latencyRate,
    durationS: latencyS,
    connections: LATENCY_CONNECTIONS,
    prepare: (seq) => {
      const body = nonCanonical(jsonBody(BODY_SIZE_BYTES, { seq }));
      pacedBodies.add(body.toString('utf8'));
      return { body, sentAtMs: performance.now() };
    },
  });
  const pacedFailed = paced.non2xx + paced.unreadable + paced.errors;
  const latencyMissing = await waitForArrivals('phase 3', local, paced.acknowledged.keys(), deliveryTimeoutMs);
  const latencies = [...paced.acknowledged].flatMap(([id, { sentAtMs }]) => {
    const arrivedMs = local.arrivals.get(id);
    return arrivedMs === undefined ? [] : [arrivedMs - sentAtMs];
  }).sort((a, b) => a - b);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  // Where the time goes (wall clocks of one machine, hook's to the millisecond): ingest send →
  // hook has the delivery (relay), and hook has it → the local server has it (hook).
  const relayPart: number[] = [];
  const hookPart: number[] = [];
  for (const [id, { sentAtMs }] of paced.acknowledged) {
    const arrivedMs = local.arrivals.get(id);
    const hookMs = hook.receivedAt.get(id);
    if (arrivedMs === undefined || hookMs === undefined) continue;
    relayPart.push(hookMs - (performance.timeOrigin + sentAtMs));
    hookPart.push(performance.timeOrigin + arrivedMs - hookMs);
  }
  relayPart.sort((a, b) => a - b);
  hookPart.sort((a, b) => a - b);

  // 4. Stop and check.
  const memory = hook.memory();
  const hookExit = await hook.stop();
  const relayExit = await relay.stop();
  // The cost model: each phase's stages, with the relay's and the CLI's CPU split by their profiles (written as they stopped).
  const profileOf = new Map([relay.pid, hook.pid].flatMap((pid) => {
    const file = profiles.find(pid);
    return file ? [[pid, file] as const] : [];
  }));
  const storeTable = costTable(storePhase, costProbe.processes, profileOf);
  const listenTable = costTable(listenPhase, costProbe.processes, profileOf);
  const listeningAdds = costDifference('what forwarding to hook listen adds (2 − 1)', listenTable, storeTable);
  const smee = withSmee ? await runSmee({ durationS, latencyS, latencyRate, body: loadBody, deliveryTimeoutMs }) : undefined;
  const finalMemory = { peakRssKb: Math.max(memory.peakRssKb, hook.memory().peakRssKb), hwmKb: Math.max(memory.hwmKb, hook.memory().hwmKb) };
  const peakKb = Math.max(finalMemory.peakRssKb, finalMemory.hwmKb);
  const missing = [...saturationMissing, ...latencyMissing];
  const acknowledged = saturationIds.size + paced.acknowledged.size;
  const duplicates = local.requests - local.arrivals.size;
  const ingestFailures = saturationRun.result.non2xx + saturationRun.result.errors + baselineRun.result.non2xx + baselineRun.result.errors + pacedFailed;

  const problems: string[] = [];
  if (missing.length > 0) problems.push(`${missing.length} acknowledged event(s) never reached the local server, e.g. ${missing.slice(0, EXAMPLES).join(', ')}`);
  if (local.badBodies > 0) problems.push(`${local.badBodies} forwarded request(s) carried a body other than one sent`);
  if (ingestFailures > 0) problems.push(`${ingestFailures} ingest request(s) failed (non-2xx, errors or timeouts)`);
  if (hookExit.code !== 0) problems.push(`hook listen did not exit 0 on SIGINT (code ${hookExit.code}, signal ${hookExit.signal})`);
  if (relayExit.code !== 0) problems.push(`relay did not shut down cleanly (exit code ${relayExit.code}, signal ${relayExit.signal})`);

  const latencyJudged = latencyRate === DEFAULT_LATENCY_RATE;
  const latencyPass = latencyJudged && latencies.length > 0 && latencyMissing.length === 0 && p50 <= TARGET_LATENCY_P50_MS && p99 <= TARGET_LATENCY_P99_MS;
  const forwardedTarget = smee?.forwardedPerS ?? TARGET_FORWARDED_PER_S;
  const throughputPass = saturationMissing.length === 0 && forwardedPerS >= forwardedTarget;
  const ingestRatio = whileListening.requestsPerSecond / baseline.requestsPerSecond;
  const ingestPass = ingestRatio >= TARGET_INGEST_RATIO;
  const lossPass = missing.length === 0;
  const rssPass = peakKb > 0 && peakKb / 1024 < TARGET_RSS_MB;
  const verdict = (pass: boolean): string => (pass ? 'PASS' : 'FAIL');
  const widths = [22, 13, 8, 8, 10, 8, 7, 9];
  const statusSummary = [...hook.statuses].map(([status, n]) => `${status === 'null' ? 'no answer' : status} ${n}`).join(', ') || 'none';
  const out = [
    '',
    `Listen benchmark: ${CONNECTIONS} connections, ${BODY_SIZE_BYTES}-byte JSON bodies, ${warmupS} s warm-up, ${durationS} s per load phase, ${latencyRate} events/s for ${latencyS} s for latency`,
    machineLine(loadBefore),
    `Relay database: ${database.description}`,
    ...(code ? [`Code: ${code}`] : []),
    `Relay: one process, HOOK_ROLE=all; hook listen: one process (--max-in-flight ${maxInFlight ?? 'default'}); local server and load generator in the bench process`,
    '',
    figuresHeader('ingest', widths),
    figuresRow('1. store only', baseline, widths),
    figuresRow('2. listened endpoint', whileListening, widths),
    '',
    `2. forwarded: ${saturationIds.size - saturationMissing.length} of ${saturationIds.size} events in ${forwardSpanS.toFixed(2)} s from first ingest to last arrival → ${forwardedPerS.toFixed(1)} events/s`,
    `   while ingesting: ${forwardedPerSDuringIngest.toFixed(1)} events/s (${forwardedDuringIngest} forwarded when the load ended); backlog drained in ${drainS.toFixed(2)} s`,
    `   ratio to the store-only baseline: ${(forwardedPerS / baseline.requestsPerSecond).toFixed(2)}`,
    ...(storeCpu && listenCpu
      ? [
        `   CPU per event, ms (relay / PostgreSQL / hook listen / bench: load and local server): store only ${cpuText(storeCpu)}; listened ${cpuText(listenCpu)}`,
        `   forwarding adds ${cpuText({ relay: listenCpu.relay - storeCpu.relay, postgres: listenCpu.postgres - storeCpu.postgres, hook: listenCpu.hook - storeCpu.hook, bench: listenCpu.bench - storeCpu.bench })} ms per event`,
      ]
      : []),
    ...(costModelEnabled() ? [...costLines(storeTable), ...costLines(listenTable), ...costLines(listeningAdds)] : []),
    `3. latency at ${latencyRate} events/s (${paced.sent} sent, ${paced.acknowledged.size} acknowledged), ingest send → arrival at the local server:`,
    latencies.length === 0 ? '   no event arrived' : `   p50 ${ms(p50)} ms, p90 ${ms(percentile(latencies, 90))} ms, p99 ${ms(p99)} ms, max ${ms(latencies.at(-1)!)} ms${latencyMissing.length > 0 ? ` over the ${latencies.length} that arrived` : ''}`,
    ...(relayPart.length > 0
      ? [`   of which ingest send → hook has the delivery: p50 ${ms(percentile(relayPart, 50))} ms, p99 ${ms(percentile(relayPart, 99))} ms; hook has it → local server has it: p50 ${ms(percentile(hookPart, 50))} ms, p99 ${ms(percentile(hookPart, 99))} ms (hook's clock has millisecond steps)`]
      : []),
    `4. events acknowledged to the listened endpoint: ${acknowledged}, forwarded at least once: ${acknowledged - missing.length}, missing: ${missing.length}; repeats: ${duplicates}`,
    `   hook listen: delivery lines by local status: ${statusSummary}; peak RSS ${mb(peakKb)} MB (VmHWM ${mb(finalMemory.hwmKb)} MB, highest sampled VmRSS ${mb(finalMemory.peakRssKb)} MB); exit ${hookExit.code ?? hookExit.signal} on SIGINT`,
    ...(smee
      ? [
        `5. smee baseline (smee-client ${smeeClientVersion()}, smee.io-shaped server, nothing stored): ingest ${smee.ingest.requestsPerSecond.toFixed(0)} req/s while forwarding; forwarded ${smee.forwardedPerS.toFixed(1)} events/s; p50 ${ms(smee.p50)} ms, p99 ${ms(smee.p99)} ms at ${latencyRate} events/s; client peak RSS ${smee.peakRssMb.toFixed(1)} MB; ${smee.missing} of ${smee.acknowledged} acknowledged never arrived; ${smee.exactBodies} of ${smee.forwardedBodies} non-canonical JSON bodies (phase 3's) arrived byte-exact`,
        `   Hook / smee: forwarded ${(forwardedPerS / smee.forwardedPerS).toFixed(2)}, ingest while forwarding ${(whileListening.requestsPerSecond / smee.ingest.requestsPerSecond).toFixed(2)}`,
      ]
      : []),
    `target: forwarded events/s >= ${smee ? `smee's ${smee.forwardedPerS.toFixed(0)}` : TARGET_FORWARDED_PER_S} → ${verdict(throughputPass)}`,
    `target: ingest while listening >= ${TARGET_INGEST_RATIO} × store-only (${ingestRatio.toFixed(2)}) → ${verdict(ingestPass)}`,
    latencyJudged
      ? `target: ingest → localhost p50 <= ${TARGET_LATENCY_P50_MS} ms and p99 <= ${TARGET_LATENCY_P99_MS} ms at ${DEFAULT_LATENCY_RATE} events/s → ${verdict(latencyPass)}`
      : `target: ingest → localhost p50 <= ${TARGET_LATENCY_P50_MS} ms and p99 <= ${TARGET_LATENCY_P99_MS} ms at ${DEFAULT_LATENCY_RATE} events/s → not judged (BENCH_LATENCY_RATE=${latencyRate})`,
    `target: no loss → ${verdict(lossPass)}`,
    `target: hook listen peak RSS < ${TARGET_RSS_MB} MB → ${verdict(rssPass)}`,
    ...resultLines(problems, 'every acknowledged event forwarded, no failed requests'),
  ];
  writeReport(out, () => ({
    connections: CONNECTIONS,
    body_bytes: BODY_SIZE_BYTES,
    duration_s: durationS,
    code: code ?? null,
    max_in_flight: maxInFlight ?? 'default',
    ingest: figuresJson(baseline),
    ingest_while_listening: figuresJson(whileListening),
    forwarded_per_second: round(forwardedPerS, 1),
    forwarded_per_second_during_ingest: round(forwardedPerSDuringIngest, 1),
    latency_rate: latencyRate,
    latency_p50_ms: round(p50, 2),
    latency_p99_ms: round(p99, 2),
    relay_part_p50_ms: round(percentile(relayPart, 50), 2),
    hook_part_p50_ms: round(percentile(hookPart, 50), 2),
    acknowledged,
    missing: missing.length,
    repeats: duplicates,
    cli_peak_rss_mb: round(peakKb / 1024, 1),
    ingest_ratio: round(ingestRatio, 2),
    cpu_ms_per_event_store_only: storeCpu,
    cpu_ms_per_event_listened: listenCpu,
    cost: costModelEnabled() ? { stored: costJson(storeTable), listened: costJson(listenTable), listening_adds: costJson(listeningAdds) } : null,
    smee: smee ? {
      ingest: figuresJson(smee.ingest),
      forwarded_per_second: round(smee.forwardedPerS, 1),
      latency_p50_ms: round(smee.p50, 2),
      latency_p99_ms: round(smee.p99, 2),
      client_peak_rss_mb: round(smee.peakRssMb, 1),
      missing: smee.missing,
      exact_bodies: smee.exactBodies,
      forwarded_bodies: smee.forwardedBodies,
    } : null,
    throughput_pass: throughputPass,
    ingest_pass: ingestPass,
    latency_pass: latencyPass,
    loss_pass: lossPass,
    rss_pass: rssPass,
    problems,
  }));
  return problems.length === 0 ? 0 : 1;
}

await runBench(main);
