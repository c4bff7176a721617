/**
 * `npm run bench:transform`: what an endpoint transformation costs delivery, measured
 * against the same relay delivering without one, in the same run.
 *
 * The relay runs as a child process (HOOK_ROLE=all) on a fresh database (as in
 * bench:delivery: HOOK_BENCH_DATABASE_URL or HOOK_TEST_DATABASE_URL, else embedded).
 * The receiver runs in this process. Two URL endpoints: `plain` (no transformation: the
 * stored bytes go as they are) and `transformed`, whose small transformation renames a
 * header (content-type → x-original-content-type) and drops a field (`created_at`).
 *
 *   1. Warm-up: 3 s of load to each endpoint (hot paths compiled, connections open), waited for.
 *   2. Sustained delivery: autocannon, 50 connections, 1 KiB JSON, BENCH_DURATION_S
 *      (default 2) to one endpoint, then a wait until every acknowledged event arrived
 *      → deliveries/s (first ingest → last delivery); BENCH_GROUPS (default 3) groups of
 *      four runs, plain, transformed, transformed, plain (each to a new endpoint); each
 *      kind's rate is its deliveries over its time. Many short runs, interleaved, so
 *      that other work on a shared machine (which comes and goes over seconds) falls on
 *      both kinds alike; with one group of 5 s runs a single burst of it decided the
 *      ratio. The CPU each delivery cost (relay by thread, PostgreSQL; from /proc) is
 *      reported too: unlike a rate, it hardly moves with other work.
 *   3. Latency at a steady moderate rate (BENCH_LATENCY_RATE, default 100 events/s to
 *      each endpoint, both at once so both see the same machine, for BENCH_LATENCY_S):
 *      ingest send → arrival at the receiver, p50/p99, for each.
 *   Every delivery is checked: plain bodies byte-exact, transformed ones without the
 *   dropped field and with the renamed header.
 *
 * BENCH_RELAY_CPU_PROF=<dir> runs the relay with --cpu-prof (a profile per thread, written on stop).
 * HOOK_TRANSFORM_THREADS is passed on to the relay (the relay gets no other HOOK_ variable
 * of this environment; its default otherwise: one fewer than the cores, at least 1).
 *
 * Targets (issue 7): transformed deliveries/s ≥ 0.70 × plain; added p50 < 2 ms.
 * Exit codes: 0 measured (a target missed is reported, not failed); 1 an acknowledged
 * event was not delivered or a delivery was wrong; 2 bad settings.
 */
import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import {
  acknowledgedIds, codeVersion, createAccount, createBenchDatabase, createEndpoint, databaseServerUrl, jsonBody, listenOnLoopback, log,
  machineLine, ms, percentile, positiveNumber, resultLines, round, runBench, runLoad, runPaced, seconds, startRelay, writeReport, sampleCpu, statOf,
} from './support.ts';

const CONNECTIONS = 50;
const BODY_SIZE_BYTES = 1024;
const TARGET_RATIO = 0.7;
const TARGET_ADDED_P50_MS = 2;
/** Seconds of load per throughput run; short runs, many of them, interleaved (see main). */
const DEFAULT_DURATION_S = 2;
/** ABBA groups of throughput runs (plain, transformed, transformed, plain). */
const DEFAULT_GROUPS = 3;
const DEFAULT_LATENCY_S = 5;
const DEFAULT_LATENCY_RATE = 100;
/** Warm-up load per kind: long enough that V8 has compiled the hot paths (with 1 s the first counted run was 10-25 % slower than the last). */
const WARMUP_S = 3;
const WAIT_TIMEOUT_MS = 120_000;

/** The bench's transformation: rename a header, drop a field. */
export const BENCH_TRANSFORMATION = `addHandler('transform', (request) => {
  request.headers['x-original-content-type'] = request.headers['content-type'];
  delete request.headers['content-type'];
  delete request.body.created_at;
  return request;
});`;

class Track {
  readonly arrivals = new Map<string, number>();
  bad = 0;
  #waiting: { pending: Set<string>; done: () => void } | undefined;
  lastAtMs = 0;

  readonly path: string;
  readonly check: (body: Buffer, headers: Record<string, string | string[] | undefined>) => boolean;

  constructor(path: string, check: (body: Buffer, headers: Record<string, string | string[] | undefined>) => boolean) {
    this.path = path;
    this.check = check;
  }

  record(id: string, body: Buffer, headers: Record<string, string | string[] | undefined>, atMs: number): void {
    if (!this.check(body, headers)) this.bad++;
    if (this.arrivals.has(id)) return;
    this.arrivals.set(id, atMs);
    this.lastAtMs = atMs;
    if (this.#waiting?.pending.delete(id) && this.#waiting.pending.size === 0) this.#waiting.done();
  }

  /** Waits for every id; returns those that did not arrive in time. */
  async waitForAll(ids: Iterable<string>): Promise<string[]> {
    const pending = new Set([...ids].filter((id) => !this.arrivals.has(id)));
    if (pending.size === 0) return [];
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((done) => {
      this.#waiting = { pending, done };
      timer = setTimeout(done, WAIT_TIMEOUT_MS);
    });
    clearTimeout(timer);
    this.#waiting = undefined;
    return [...pending];
  }
}

async function startReceiver(byPath: Map<string, Track>): Promise<string> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const atMs = performance.now();
      const track = byPath.get(req.url ?? '');
      const id = req.headers['webhook-id'];
      if (track && typeof id === 'string') track.record(id, Buffer.concat(chunks), req.headers, atMs);
      res.writeHead(track ? 200 : 404, { 'content-length': '0' }).end();
    });
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const port = await listenOnLoopback('receiver', server);
  return `http://127.0.0.1:${port}`;
}

/**
 * CPU time (ms) the relay process used so far, split into its main thread (the event
 * loop), its transformation threads (named WorkerThread by Node) and the rest (libuv's
 * pool, V8's compiler and GC helpers); from /proc/<pid>/task. Threads that exited took
 * their time with them, which only the transformation threads do here (when replaced).
 */
function relayThreadsCpu(pid: number): { main: number; transform: number; other: number } {
  const totals = { main: 0, transform: 0, other: 0 };
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return { main: Number.NaN, transform: Number.NaN, other: Number.NaN };
  }
  for (const tid of tasks) {
    const stat = statOf(`/proc/${pid}/task/${tid}/stat`);
    if (!stat) continue;
    if (tid === String(pid)) totals.main += stat.ms;
    else if (stat.name === 'WorkerThread') totals.transform += stat.ms;
    else totals.other += stat.ms;
  }
  return totals;
}

/** CPU time (ms) of this bench's own PostgreSQL (support.ts sampleCpu), NaN without /proc. */
function ownPostgresCpu(): number {
  return sampleCpu([])?.postgresMs ?? Number.NaN;
}

/** One throughput run: its deliveries/s and what each delivery cost in CPU. */
interface Round {
  name: 'plain' | 'transformed';
  round: number;
  delivered: number;
  /** First ingest → last delivery. */
  spanS: number;
  /** End of the load → last delivery: the backlog left when ingest stopped. */
  drainS: number;
  rate: number;
  /** CPU per delivery (ms, user + system): the relay's event loop, its transformation threads, its other threads; PostgreSQL. */
  cpuMsPerDelivery: { main: number; transform: number; other: number; postgres: number };
}

function distribution(values: number[]): { count: number; p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function main(): Promise<number> {
  const durationS = seconds('BENCH_DURATION_S', DEFAULT_DURATION_S, false);
  const groups = Math.floor(positiveNumber('BENCH_GROUPS', DEFAULT_GROUPS));
  const latencyS = seconds('BENCH_LATENCY_S', DEFAULT_LATENCY_S, false);
  const latencyRate = positiveNumber('BENCH_LATENCY_RATE', DEFAULT_LATENCY_RATE);
  const loadBefore = loadavg();
  const serverUrl = databaseServerUrl();
  const body = jsonBody(BODY_SIZE_BYTES);

  const plainCheck = (delivered: Buffer): boolean => delivered.equals(body);
  const transformedCheck = (delivered: Buffer, headers: Record<string, string | string[] | undefined>): boolean => {
    try {
      const parsed = JSON.parse(delivered.toString('utf8'));
      return parsed.created_at === undefined && parsed.type === 'bench.event' && headers['x-original-content-type'] === 'application/json';
    } catch {
      return false;
    }
  };
  const byPath = new Map<string, Track>();
  const newTrack = (path: string, check: Track['check']): Track => {
    const track = new Track(path, check);
    byPath.set(path, track);
    return track;
  };
  const tracks = {
    plainLatency: newTrack('/plain-latency', () => true),
    transformedLatency: newTrack('/transformed-latency', transformedCheck),
    warmup: newTrack('/warmup', () => true),
  };
  const receiverUrl = await startReceiver(byPath);
  const database = await createBenchDatabase(serverUrl);
  const cpuProfileDir = process.env.BENCH_RELAY_CPU_PROF?.trim() || undefined;
  const transformThreads = process.env.HOOK_TRANSFORM_THREADS?.trim() || undefined;
  const relay = await startRelay(database.url, { HOOK_ALLOW_PRIVATE_DESTINATIONS: 'true', ...(transformThreads ? { HOOK_TRANSFORM_THREADS: transformThreads } : {}) }, cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', resolve(cpuProfileDir)] : []);
  const apiKey = await createAccount(relay.url);
  const endpoint = (name: string, track: Track, transformed: boolean) =>
    createEndpoint(relay.url, apiKey, {
      name, destination: { type: 'url', url: `${receiverUrl}${track.path}` }, ...(transformed ? { transformation: { code: BENCH_TRANSFORMATION } } : {}),
    });
  const problems: string[] = [];

  // 1. Warm-up, both kinds, to one track (not counted).
  for (const transformed of [false, true]) {
    const warm = await endpoint(`warmup-${transformed}`, tracks.warmup, transformed);
    const run = await runLoad({ url: warm.url, connections: CONNECTIONS, durationS: WARMUP_S, body });
    await tracks.warmup.waitForAll(acknowledgedIds([run]).ids);
  }

  // 2. Sustained delivery, in the order plain, transformed, transformed, plain, so that
  // drift in what else the machine does falls on both alike; each kind's rate is its
  // deliveries over its time.
  const totals = { plain: { delivered: 0, spanS: 0 }, transformed: { delivered: 0, spanS: 0 } };
  const rounds: Round[] = [];
  const throughput = async (name: 'plain' | 'transformed', round: number): Promise<void> => {
    const track = newTrack(`/${name}-${round}`, name === 'plain' ? plainCheck : transformedCheck);
    const target = await endpoint(`bench-${name}-${round}`, track, name === 'transformed');
    log(`${name} (${round}): ingesting ${durationS} s`);
    const cpuBefore = { relay: relayThreadsCpu(relay.pid), postgresMs: ownPostgresCpu() };
    const startedMs = performance.now();
    const run = await runLoad({ url: target.url, connections: CONNECTIONS, durationS, body });
    const ingestEndedMs = performance.now();
    const ids = acknowledgedIds([run]).ids;
    const missing = await track.waitForAll(ids);
    if (missing.length > 0) problems.push(`${name}: ${missing.length} of ${ids.size} acknowledged events not delivered`);
    const cpuAfter = { relay: relayThreadsCpu(relay.pid), postgresMs: ownPostgresCpu() };
    const delivered = track.arrivals.size;
    const spanS = (track.lastAtMs - startedMs) / 1000;
    totals[name].delivered += delivered;
    totals[name].spanS += spanS;
    const perDelivery = (after: number, before: number) => (after - before) / Math.max(1, delivered);
    rounds.push({
      name, round, delivered, spanS, drainS: Math.max(0, (track.lastAtMs - ingestEndedMs) / 1000), rate: delivered / spanS,
      cpuMsPerDelivery: {
        main: perDelivery(cpuAfter.relay.main, cpuBefore.relay.main),
        transform: perDelivery(cpuAfter.relay.transform, cpuBefore.relay.transform),
        other: perDelivery(cpuAfter.relay.other, cpuBefore.relay.other),
        postgres: perDelivery(cpuAfter.postgresMs, cpuBefore.postgresMs),
      },
    });
  };
  for (let group = 0; group < groups; group++) {
    await throughput('plain', 2 * group + 1);
    await throughput('transformed', 2 * group + 1);
    await throughput('transformed', 2 * group + 2);
    await throughput('plain', 2 * group + 2);
  }
  const cpuPerDelivery = (name: Round['name']) => {
    const of = rounds.filter((r) => r.name === name);
    const delivered = of.reduce((sum, r) => sum + r.delivered, 0);
    const total = (pick: (c: Round['cpuMsPerDelivery']) => number) => of.reduce((sum, r) => sum + pick(r.cpuMsPerDelivery) * r.delivered, 0) / delivered;
    return { relay: total((c) => c.main + c.transform + c.other), transform: total((c) => c.transform), postgres: total((c) => c.postgres) };
  };
  // Each group's own ratio: how far one group of four runs can be from the whole.
  const groupRatios = Array.from({ length: groups }, (_, group) => {
    const rate = (name: Round['name']) => {
      const of = rounds.filter((r) => r.name === name && Math.ceil(r.round / 2) === group + 1);
      return of.reduce((sum, r) => sum + r.delivered, 0) / of.reduce((sum, r) => sum + r.spanS, 0);
    };
    return rate('transformed') / rate('plain');
  });
  const plainCpu = cpuPerDelivery('plain');
  const transformedCpu = cpuPerDelivery('transformed');
  const plainRate = totals.plain.delivered / totals.plain.spanS;
  const transformedRate = totals.transformed.delivered / totals.transformed.spanS;
  const ratio = transformedRate / plainRate;

  // 3. Latency at a steady rate.
  const latency = async (name: 'plainLatency' | 'transformedLatency') => {
    const track = tracks[name];
    const target = await endpoint(`bench-${name}`, track, name === 'transformedLatency');
    log(`${name}: ${latencyRate} events/s for ${latencyS} s`);
    const paced = await runPaced({
      url: target.url, ratePerS: latencyRate, durationS: latencyS, connections: 10,
      prepare: (seq) => ({ body: jsonBody(BODY_SIZE_BYTES, { seq }), sentAtMs: performance.now() }),
    });
    const missing = await track.waitForAll(paced.acknowledged.keys());
    if (missing.length > 0) problems.push(`${name}: ${missing.length} acknowledged events not delivered`);
    const values: number[] = [];
    for (const [id, sent] of paced.acknowledged) {
      const at = track.arrivals.get(id);
      if (at !== undefined) values.push(at - sent.sentAtMs);
    }
    return distribution(values);
  };
  // Both at once, so both see the same machine (other work on a shared machine shifts
  // latency by milliseconds between runs taken one after the other).
  const [plainLatency, transformedLatency] = await Promise.all([latency('plainLatency'), latency('transformedLatency')]);
  const addedP50 = transformedLatency.p50 - plainLatency.p50;

  const relayExit = await relay.stop();
  if (relayExit.code !== 0) problems.push(`relay did not shut down cleanly (exit code ${relayExit.code})`);
  const bad = Object.values(tracks).reduce((sum, track) => sum + track.bad, 0);
  if (bad > 0) problems.push(`${bad} delivery(ies) were not what was expected (plain bytes changed, or the transformation not applied)`);

  const ratioPass = ratio >= TARGET_RATIO;
  const latencyPass = addedP50 < TARGET_ADDED_P50_MS;
  const code = codeVersion();
  writeReport([
    '',
    `Transformation benchmark: ${CONNECTIONS} connections, ${BODY_SIZE_BYTES}-byte JSON bodies, ${4 * groups} × ${durationS} s of load for throughput (${groups} × plain, transformed, transformed, plain), ${latencyRate} events/s to each endpoint at once for ${latencyS} s for latency`,
    machineLine(loadBefore),
    `Relay database: ${database.description}`,
    ...(code ? [`Relay code: ${code}`] : []),
    'Transformation: rename a header (content-type → x-original-content-type), drop a field (created_at)',
    `Relay: HOOK_TRANSFORM_THREADS=${transformThreads ?? 'default'}`,
    '',
    ...rounds.map((r) => `  ${r.name} (${r.round}): ${r.delivered} delivered in ${r.spanS.toFixed(2)} s (backlog drained in ${r.drainS.toFixed(2)} s) → ${r.rate.toFixed(1)}/s; CPU per delivery: relay event loop ${r.cpuMsPerDelivery.main.toFixed(3)} ms, transformation threads ${r.cpuMsPerDelivery.transform.toFixed(3)} ms, other relay threads ${r.cpuMsPerDelivery.other.toFixed(3)} ms, PostgreSQL ${r.cpuMsPerDelivery.postgres.toFixed(3)} ms`),
    `sustained delivery: plain ${plainRate.toFixed(1)} deliveries/s, transformed ${transformedRate.toFixed(1)} deliveries/s → ratio ${ratio.toFixed(2)}`,
    `ratio of each group of four runs: ${groupRatios.map((r) => r.toFixed(2)).join(', ')}`,
    `CPU per delivery (relay + PostgreSQL): plain ${(plainCpu.relay + plainCpu.postgres).toFixed(3)} ms, transformed ${(transformedCpu.relay + transformedCpu.postgres).toFixed(3)} ms (of which transformation threads ${transformedCpu.transform.toFixed(3)} ms) → transformation adds ${(transformedCpu.relay + transformedCpu.postgres - plainCpu.relay - plainCpu.postgres).toFixed(3)} ms`,
    `latency (ingest send → arrival): plain p50 ${ms(plainLatency.p50)} ms, p99 ${ms(plainLatency.p99)} ms; transformed p50 ${ms(transformedLatency.p50)} ms, p99 ${ms(transformedLatency.p99)} ms → added p50 ${ms(addedP50)} ms`,
    `target: transformed ÷ plain deliveries/s >= ${TARGET_RATIO.toFixed(2)} → ${ratioPass ? 'PASS' : 'FAIL'}`,
    `target: added p50 < ${TARGET_ADDED_P50_MS} ms → ${latencyPass ? 'PASS' : 'FAIL'}`,
    ...resultLines(problems, 'every acknowledged event delivered as expected'),
  ], () => ({
    plain_deliveries_per_second: round(plainRate, 1),
    transformed_deliveries_per_second: round(transformedRate, 1),
    ratio: round(ratio, 3),
    group_ratios: groupRatios.map((r) => round(r, 3)),
    rounds: rounds.map((r) => ({ name: r.name, round: r.round, delivered: r.delivered, span_s: round(r.spanS, 3), drain_s: round(r.drainS, 3), rate: round(r.rate, 1), cpu_ms_per_delivery: Object.fromEntries(Object.entries(r.cpuMsPerDelivery).map(([k, v]) => [k, round(v, 4)])) })),
    ratio_pass: ratioPass,
    transform_threads: transformThreads ?? 'default',
    cpu_ms_per_delivery: { plain: { relay: round(plainCpu.relay, 4), postgres: round(plainCpu.postgres, 4) }, transformed: { relay: round(transformedCpu.relay, 4), transform_threads: round(transformedCpu.transform, 4), postgres: round(transformedCpu.postgres, 4) } },
    plain_latency: { p50_ms: round(plainLatency.p50, 2), p99_ms: round(plainLatency.p99, 2) },
    transformed_latency: { p50_ms: round(transformedLatency.p50, 2), p99_ms: round(transformedLatency.p99, 2) },
    added_p50_ms: round(addedP50, 2),
    latency_pass: latencyPass,
    problems,
  }));
  return problems.length === 0 ? 0 : 1;
}

await runBench(main);
