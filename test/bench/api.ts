/**
 * `npm run bench:api`: what the shared per-key rate limit (docs/plans.md#rate-limits-across-processes)
 * costs an authenticated API request. Two relay processes (`HOOK_ROLE=api`) run on one
 * fresh database: one with the per-key limit off (`HOOK_API_RATE_LIMIT=0`), one with it
 * on at a figure the run never reaches (`HOOK_API_RATE_LIMIT=1000000`), so every request
 * is counted in PostgreSQL and none is refused. Each is loaded with `GET /v1/endpoints`
 * (an account with one endpoint), alternately, BENCH_ROUNDS times each after a warm-up,
 * so drift on a shared machine hits both alike; the report gives each run, the medians and
 * the ratio limited/unlimited of requests per second, and the relay's CPU per request.
 *
 * BENCH_KEYS spreads the connections over that many API keys of the account (default 1:
 * every request updates the same counter row, the worst case for row-lock waits).
 *
 * The database: a new `hook_bench_<random>` on the server named by HOOK_BENCH_DATABASE_URL
 * or HOOK_TEST_DATABASE_URL, else an embedded PostgreSQL in a temporary directory.
 *
 * Exit codes: 0 measured; 1 a request was answered non-2xx (a 429 means the limit was
 * reached: the figure is too low for the run) or not at all; 2 bad settings.
 *
 * Environment (all optional):
 *   BENCH_DURATION_S    measured seconds per run (default 10)
 *   BENCH_WARMUP_S      warm-up seconds per relay, not counted (default 2)
 *   BENCH_ROUNDS        measured runs per relay, alternating (default 3)
 *   BENCH_CONNECTIONS   concurrent connections (default 10)
 *   BENCH_KEYS          API keys the connections use, round-robin (default 1)
 *   BENCH_JSON=1        also print a one-line JSON summary as the last stdout line
 *   HOOK_BENCH_DATABASE_URL / HOOK_TEST_DATABASE_URL   PostgreSQL server URL to create the bench database on
 */
import { loadavg } from 'node:os';
import autocannon, { type Result } from 'autocannon';
import {
  codeVersion, createAccount, createBenchDatabase, createEndpoint, databaseServerUrl, figures, figuresHeader, figuresRow, log, machineLine, onInterrupt,
  positiveNumber, postJson, REQUEST_TIMEOUT_S, resultLines, round, runBench, sampleCpu, seconds, startRelay, writeReport, type ServerProcess, type TargetFigures,
} from './support.ts';

/** The limited relay's per-key figure: the largest HOOK_API_RATE_LIMIT allows, far above what a run sends in a minute. */
const UNREACHED_LIMIT = '1000000';

interface Run {
  figures: TargetFigures;
  /** The relay process's user + system CPU per answered request (ms). */
  relayCpuMsPerRequest: number;
}

/** One autocannon run of `GET path` with the keys given round-robin per connection. */
async function load(url: string, keys: readonly string[], connections: number, durationS: number): Promise<Result> {
  let next = 0;
  let forget = (): void => undefined;
  const result = await new Promise<Result>((done, fail) => {
    const instance = autocannon(
      {
        url,
        connections,
        duration: durationS,
        timeout: REQUEST_TIMEOUT_S,
        method: 'GET',
        setupClient: (client) => client.setHeaders({ authorization: `Bearer ${keys[next++ % keys.length]}` }),
      },
      (error: unknown, result: Result) => (error ? fail(error) : done(result)),
    );
    forget = onInterrupt(() => instance.stop());
  });
  forget();
  return result;
}

async function measure(relay: ServerProcess, keys: readonly string[], connections: number, durationS: number): Promise<Run> {
  const before = sampleCpu([relay.pid]);
  const result = await load(`${relay.url}/v1/endpoints`, keys, connections, durationS);
  const after = sampleCpu([relay.pid]);
  const cpuMs = before && after ? after.byPid.get(relay.pid)! - before.byPid.get(relay.pid)! : Number.NaN;
  return { figures: figures(result), relayCpuMsPerRequest: cpuMs / Math.max(1, result.requests.total) };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function main(): Promise<number> {
  const durationS = seconds('BENCH_DURATION_S', 10, false);
  const warmupS = seconds('BENCH_WARMUP_S', 2, true);
  const rounds = Math.round(positiveNumber('BENCH_ROUNDS', 3));
  const connections = Math.round(positiveNumber('BENCH_CONNECTIONS', 10));
  const keyCount = Math.round(positiveNumber('BENCH_KEYS', 1));
  const loadBefore = loadavg();
  const database = await createBenchDatabase(databaseServerUrl());
  const unlimited = await startRelay(database.url, { HOOK_ROLE: 'api', HOOK_API_RATE_LIMIT: '0' });
  const limited = await startRelay(database.url, { HOOK_ROLE: 'api', HOOK_API_RATE_LIMIT: UNREACHED_LIMIT });

  const owner = await createAccount(unlimited.url);
  await createEndpoint(unlimited.url, owner, { name: 'bench' });
  const keys = [owner];
  for (let i = 1; i < keyCount; i++) keys.push((await postJson(`${unlimited.url}/v1/api-keys`, owner, { name: `bench-${i}` })).api_key);

  const targets = [{ name: 'limits off', relay: unlimited }, { name: 'shared limit', relay: limited }];
  if (warmupS > 0) for (const target of targets) await load(`${target.relay.url}/v1/endpoints`, keys, connections, warmupS);
  const runs = new Map<string, Run[]>(targets.map((target) => [target.name, []]));
  for (let round_ = 1; round_ <= rounds; round_++) {
    for (const target of targets) {
      log(`round ${round_}/${rounds}: ${target.name}, ${durationS} s at ${connections} connections`);
      runs.get(target.name)!.push(await measure(target.relay, keys, connections, durationS));
    }
  }
  await unlimited.stop();
  await limited.stop();

  const widths = [22, 13, 7, 7, 9, 8, 7, 9, 16];
  const lines = [
    `Authenticated GET /v1/endpoints, ${connections} connections over ${keyCount} API key(s), ${rounds} × ${durationS} s per relay, alternating`,
    '',
    `${figuresHeader('run', widths)}  ${'relay CPU ms/req'.padStart(16)}`,
  ];
  for (let i = 0; i < rounds; i++) {
    for (const target of targets) {
      const run = runs.get(target.name)![i]!;
      lines.push(`${figuresRow(`${target.name} #${i + 1}`, run.figures, widths)}  ${run.relayCpuMsPerRequest.toFixed(3).padStart(16)}`);
    }
  }
  const medianOf = (name: string, pick: (run: Run) => number) => median(runs.get(name)!.map(pick));
  const offRate = medianOf('limits off', (run) => run.figures.requestsPerSecond);
  const onRate = medianOf('shared limit', (run) => run.figures.requestsPerSecond);
  const offCpu = medianOf('limits off', (run) => run.relayCpuMsPerRequest);
  const onCpu = medianOf('shared limit', (run) => run.relayCpuMsPerRequest);
  const offP50 = medianOf('limits off', (run) => run.figures.latencyP50Ms);
  const onP50 = medianOf('shared limit', (run) => run.figures.latencyP50Ms);
  lines.push(
    '',
    `median req/s: limits off ${offRate.toFixed(0)}, shared limit ${onRate.toFixed(0)}; ratio shared/off ${(onRate / offRate).toFixed(3)}`,
    `median p50 latency: ${offP50.toFixed(1)} ms → ${onP50.toFixed(1)} ms; relay CPU per request: ${offCpu.toFixed(3)} ms → ${onCpu.toFixed(3)} ms`,
    '',
    machineLine(loadBefore),
    `Database: ${database.description}`,
    `Code: ${codeVersion() ?? 'unknown'}`,
  );
  const problems: string[] = [];
  for (const [name, list] of runs) {
    for (const run of list) {
      if (run.figures.non2xx > 0) problems.push(`${name}: ${run.figures.non2xx} answers were not 2xx`);
      if (run.figures.errors > 0 || run.figures.timeouts > 0) problems.push(`${name}: ${run.figures.errors} errors, ${run.figures.timeouts} timeouts`);
    }
  }
  lines.push(...resultLines(problems, `the shared limit keeps ${(100 * onRate / offRate).toFixed(1)}% of the requests per second`));
  writeReport(lines, () => ({
    connections, keys: keyCount, rounds, duration_s: durationS,
    off_rps: round(offRate, 1), shared_rps: round(onRate, 1), ratio: round(onRate / offRate, 3),
    off_p50_ms: offP50, shared_p50_ms: onP50, off_cpu_ms_per_request: round(offCpu, 4), shared_cpu_ms_per_request: round(onCpu, 4),
  }));
  return problems.length > 0 ? 1 : 0;
}

await runBench(main);
