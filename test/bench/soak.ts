/**
 * `npm run bench:soak`: ingest and delivery at half of the measured maximum for a long
 * while, to show that throughput and latency hold and memory stays flat, with a check
 * that no acknowledged event is lost.
 *
 * One relay as a child process (HOOK_ROLE=all) on a fresh database (as bench:delivery:
 * HOOK_BENCH_DATABASE_URL or HOOK_TEST_DATABASE_URL, else an embedded PostgreSQL), one
 * endpoint whose destination is a receiver in this process (answers 200 once the body
 * is in, records each webhook-id's first arrival). A probe loaded into the relay
 * (memory-probe.ts) writes its memory every 5 seconds.
 *
 *   1. Maximum: autocannon at 50 connections, 1 KiB bodies, for SOAK_PROBE_S seconds,
 *      then a wait until every acknowledged event arrived → events/s delivered end to
 *      end (first ingest → last arrival). Skipped when SOAK_RATE is set.
 *   2. Soak: a paced sender at half that rate (or SOAK_RATE) for SOAK_MINUTES minutes.
 *      After each minute (and 5 s for its last deliveries): events ingested and
 *      delivered per second in that minute, ingest → delivered latency p50/p95/p99 of
 *      the events sent in it, and the relay's RSS and heap used (means of its 5-second
 *      samples in that minute).
 *   3. Verdict: every acknowledged event arrived (lost = 0), and memory is flat: the
 *      mean RSS of the last 3 minutes against the mean of minutes 2–4 (with fewer than
 *      7 minutes: the last minute against minute 2) grew by less than 10%.
 *
 * Exit codes: 0 flat and nothing lost; 1 an event lost, an ingest refused, or memory
 * grew by 10% or more; 2 bad settings.
 *
 * Environment (all optional):
 *   SOAK_MINUTES      minutes of soak (default 10)
 *   SOAK_RATE         events per second to soak at; skips phase 1 (default: half the measured maximum)
 *   SOAK_PROBE_S      seconds of phase 1's load (default 10)
 *   BENCH_JSON=1      also print a one-line JSON summary as the last stdout line
 *   HOOK_DELIVERY_CONCURRENCY  passed on to the relay
 *   HOOK_BENCH_DATABASE_URL / HOOK_TEST_DATABASE_URL   PostgreSQL server to create the bench database on
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  acknowledgedIds, codeVersion, createAccount, createBenchDatabase, createEndpoint, databaseServerUrl, jsonBody, listenOnLoopback, log, machineLine, ms,
  onCleanup, percentile, positiveNumber, round, runBench, runLoad, runPaced, seconds, startRelay, UsageError, writeReport,
} from './support.ts';

const CONNECTIONS = 50;
const PACED_CONNECTIONS = 20;
const BODY_SIZE_BYTES = 1024;
const MINUTE_S = 60;
/** How long after a minute its last deliveries may take before the minute is reported. */
const REPORT_GRACE_MS = 5000;
/** How long the end waits for the last deliveries. */
const FINAL_WAIT_MS = 60_000;
/** Memory counts as flat below this growth. */
const FLAT_GROWTH_RATIO = 0.1;
const MIB = 1024 * 1024;

interface MemorySample { atMs: number; rss: number; heapUsed: number; heapTotal: number }

interface MinuteReport {
  minute: number;
  ingestedPerS: number;
  deliveredPerS: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** Events sent in the minute that had not arrived 5 s after it. */
  late: number;
  rssMiB: number;
  heapUsedMiB: number;
}

function wholeMinutes(variable: string, fallback: number): number {
  const value = positiveNumber(variable, fallback);
  if (!Number.isInteger(value)) throw new UsageError(`${variable}=${value} is not valid: expected a whole number of minutes.`);
  return value;
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

await runBench(async () => {
  const minutes = wholeMinutes('SOAK_MINUTES', 10);
  const fixedRate = process.env.SOAK_RATE?.trim() ? positiveNumber('SOAK_RATE', 1) : undefined;
  const probeS = seconds('SOAK_PROBE_S', 10, false);
  const loadBefore = loadavg();

  // Receiver: first arrival of each webhook-id, and every arrival's time.
  const firstArrivalMs = new Map<string, number>();
  const arrivalTimesMs: number[] = [];
  let duplicates = 0;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const now = performance.now();
      const id = String(request.headers['webhook-id']);
      if (firstArrivalMs.has(id)) duplicates++;
      else firstArrivalMs.set(id, now);
      arrivalTimesMs.push(now);
      response.end('ok');
    });
  });
  const receiverPort = await listenOnLoopback('receiver', receiver);

  const database = await createBenchDatabase(databaseServerUrl());
  const probeDir = mkdtempSync(join(tmpdir(), 'hook-bench-soak-'));
  onCleanup(`temporary directory ${probeDir}`, async () => rmSync(probeDir, { recursive: true, force: true }));
  const memoryFile = join(probeDir, 'memory.jsonl');
  const relayEnv: Record<string, string> = { HOOK_ALLOW_PRIVATE_DESTINATIONS: 'true', BENCH_MEMORY_FILE: memoryFile };
  if (process.env.HOOK_DELIVERY_CONCURRENCY) relayEnv.HOOK_DELIVERY_CONCURRENCY = process.env.HOOK_DELIVERY_CONCURRENCY;
  const relay = await startRelay(database.url, relayEnv, ['--import', resolve(import.meta.dirname, 'memory-probe.ts')]);
  onCleanup('relay', async () => void (await relay.stop()));
  /** The mean of the relay's memory samples taken between two Date.now() times (the last sample if none). */
  const memoryBetween = (fromMs: number, toMs: number): { rss: number; heapUsed: number } => {
    const samples = readFileSync(memoryFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as MemorySample);
    const within = samples.filter((sample) => sample.atMs >= fromMs && sample.atMs <= toMs);
    const used = within.length > 0 ? within : samples.slice(-1);
    return { rss: mean(used.map((sample) => sample.rss)), heapUsed: mean(used.map((sample) => sample.heapUsed)) };
  };

  const apiKey = await createAccount(relay.url);
  const destination = `http://127.0.0.1:${receiverPort}/soak`;
  const probeEndpoint = await createEndpoint(relay.url, apiKey, { name: 'soak-max', destination: { type: 'url', url: destination } });
  const soakEndpoint = await createEndpoint(relay.url, apiKey, { name: 'soak', destination: { type: 'url', url: destination } });
  const acknowledged = new Set<string>();
  let refused = 0;

  const waitForArrivals = async (ids: Iterable<string>, timeoutMs: number): Promise<string[]> => {
    const deadline = Date.now() + timeoutMs;
    let missing = [...ids].filter((id) => !firstArrivalMs.has(id));
    while (missing.length > 0 && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 200));
      missing = missing.filter((id) => !firstArrivalMs.has(id));
    }
    return missing;
  };

  // 1. The maximum, ingest and delivery together.
  let maxRate: number | undefined;
  let rate: number;
  if (fixedRate !== undefined) {
    rate = fixedRate;
    log(`soaking at SOAK_RATE=${rate} events/s (no maximum measured)`);
  } else {
    log(`measuring the maximum: ${probeS} s at ${CONNECTIONS} connections`);
    const startMs = performance.now();
    const run = await runLoad({ url: probeEndpoint.url, connections: CONNECTIONS, durationS: probeS, body: jsonBody(BODY_SIZE_BYTES) });
    const { ids } = acknowledgedIds([run]);
    refused += run.result.non2xx;
    for (const id of ids) acknowledged.add(id);
    const missing = await waitForArrivals(ids, FINAL_WAIT_MS);
    if (missing.length > 0) throw new Error(`${missing.length} events of the maximum phase were not delivered within ${FINAL_WAIT_MS} ms`);
    const lastMs = Math.max(...[...ids].map((id) => firstArrivalMs.get(id)!));
    maxRate = ids.size / ((lastMs - startMs) / 1000);
    rate = Math.max(1, Math.round(maxRate / 2));
    log(`maximum: ${Math.round(maxRate)} events/s ingested and delivered; soaking at ${rate} events/s`);
  }

  // 2. The soak, a minute at a time; each minute is reported REPORT_GRACE_MS after it ends.
  const reports: MinuteReport[] = [];
  const reporting: Promise<void>[] = [];
  const body = jsonBody(BODY_SIZE_BYTES);
  for (let minute = 1; minute <= minutes; minute++) {
    const startMs = performance.now();
    const startClockMs = Date.now();
    const run = await runPaced({ url: soakEndpoint.url, ratePerS: rate, durationS: MINUTE_S, connections: PACED_CONNECTIONS, prepare: () => ({ body, sentAtMs: performance.now() }) });
    const endMs = performance.now();
    refused += run.non2xx + run.errors + run.unreadable;
    for (const id of run.acknowledged.keys()) acknowledged.add(id);
    const memory = memoryBetween(startClockMs, Date.now());
    reporting.push(new Promise<void>((done) => setTimeout(done, REPORT_GRACE_MS)).then(() => {
      const latencies: number[] = [];
      let late = 0;
      for (const [id, answer] of run.acknowledged) {
        const arrivedMs = firstArrivalMs.get(id);
        if (arrivedMs === undefined) late++;
        else latencies.push(arrivedMs - answer.sentAtMs);
      }
      latencies.sort((a, b) => a - b);
      const delivered = arrivalTimesMs.filter((atMs) => atMs >= startMs && atMs < endMs).length;
      const report: MinuteReport = {
        minute,
        ingestedPerS: round(run.acknowledged.size / ((endMs - startMs) / 1000), 1),
        deliveredPerS: round(delivered / ((endMs - startMs) / 1000), 1),
        p50Ms: round(percentile(latencies, 50), 1),
        p95Ms: round(percentile(latencies, 95), 1),
        p99Ms: round(percentile(latencies, 99), 1),
        late,
        rssMiB: round(memory.rss / MIB, 1),
        heapUsedMiB: round(memory.heapUsed / MIB, 1),
      };
      reports.push(report);
      process.stdout.write(`minute ${String(minute).padStart(2)}: ingested ${report.ingestedPerS}/s, delivered ${report.deliveredPerS}/s, `
        + `latency p50 ${ms(report.p50Ms)} ms, p95 ${ms(report.p95Ms)} ms, p99 ${ms(report.p99Ms)} ms${late > 0 ? ` (${late} not yet arrived)` : ''}, `
        + `relay RSS ${report.rssMiB} MiB, heap used ${report.heapUsedMiB} MiB (minute means)\n`);
    }));
  }
  await Promise.all(reporting);

  // 3. Verdict.
  const lost = await waitForArrivals(acknowledged, FINAL_WAIT_MS);
  const rss = reports.map((report) => report.rssMiB);
  let growth: number | undefined;
  let comparison = '';
  if (minutes >= 7) {
    const base = mean(rss.slice(1, 4));
    const last = mean(rss.slice(-3));
    growth = (last - base) / base;
    comparison = `mean RSS of the last 3 minutes ${last.toFixed(1)} MiB against minutes 2–4 ${base.toFixed(1)} MiB`;
  } else if (minutes >= 3) {
    growth = (rss.at(-1)! - rss[1]!) / rss[1]!;
    comparison = `RSS after minute ${minutes} ${rss.at(-1)!.toFixed(1)} MiB against minute 2 ${rss[1]!.toFixed(1)} MiB`;
  }
  const flat = growth === undefined ? undefined : growth < FLAT_GROWTH_RATIO;
  const problems: string[] = [];
  if (lost.length > 0) problems.push(`${lost.length} acknowledged events never arrived (e.g. ${lost.slice(0, 3).join(', ')})`);
  if (refused > 0) problems.push(`${refused} ingest requests were refused or unanswered`);
  if (flat === false) problems.push(`memory grew by ${(growth! * 100).toFixed(1)}% (${comparison})`);
  const lines = [
    '',
    `Soak: ${minutes} minute(s) at ${rate} events/s${maxRate === undefined ? ' (SOAK_RATE)' : ` (half of the measured maximum, ${Math.round(maxRate)} events/s)`}, ${BODY_SIZE_BYTES}-byte bodies, one relay (HOOK_ROLE=all)`,
    `Database: ${database.description}`,
    machineLine(loadBefore),
    ...(codeVersion() ? [`Code: ${codeVersion()}`] : []),
    `Events acknowledged: ${acknowledged.size}, lost: ${lost.length}, delivered more than once: ${duplicates}`,
    flat === undefined ? 'Memory: not judged (fewer than 3 minutes)' : `Memory: ${flat ? 'flat' : 'NOT flat'}, ${growth! >= 0 ? '+' : ''}${(growth! * 100).toFixed(1)}% (${comparison}; flat below ${FLAT_GROWTH_RATIO * 100}%)`,
    problems.length === 0 ? 'Result: OK' : `Result: FAILED: ${problems.join('; ')}`,
  ];
  writeReport(lines, () => ({ minutes, rate, maxRate: maxRate && Math.round(maxRate), acknowledged: acknowledged.size, lost: lost.length, duplicates, growth, flat, reports }));
  return problems.length === 0 ? 0 : 1;
});
