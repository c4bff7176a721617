/**
 * `npm run bench:console`: how fast the relay answers what the web console asks for at
 * an account with BENCH_EVENTS events (default 100,000; issue 18 asks the first page in
 * under 300 ms of server time at 100,000).
 *
 * The relay runs as a child process on a fresh database (a new `hook_bench_<random>` on
 * the server named by HOOK_BENCH_DATABASE_URL or HOOK_TEST_DATABASE_URL, else an
 * embedded PostgreSQL). The history is written straight into PostgreSQL
 * (test/support/event-history.ts: one event a second up to now, ~70-byte JSON bodies, every
 * fifth failed and every fifth pending), beside another account with as many events
 * (a shared relay), then ANALYZE. Each console request is sent BENCH_REPEAT times (default
 * 20) after 3 unmeasured ones, one at a time, over loopback HTTP; the figures are the time
 * to the whole answer (server time plus well under a millisecond of loopback).
 *
 * Exit codes: 0 measured; 1 a request answered non-2xx; 2 bad settings.
 *
 * Environment (all optional):
 *   BENCH_EVENTS   events in the measured account (default 100000)
 *   BENCH_REPEAT   measured requests per kind (default 20)
 *   BENCH_JSON=1   also print a one-line JSON summary as the last stdout line
 *   HOOK_BENCH_DATABASE_URL / HOOK_TEST_DATABASE_URL   PostgreSQL server URL to create the bench database on
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { writeEventHistory } from '../support/event-history.ts';
import { createAccount, createBenchDatabase, createEndpoint, databaseServerUrl, log, machineLine, ms, percentile, positiveNumber, runBench, startRelay, writeReport } from './support.ts';

const WARMUP_REQUESTS = 3;
const STEP_MS = 1000;

async function main(): Promise<number> {
  const events = positiveNumber('BENCH_EVENTS', 100_000);
  const repeat = positiveNumber('BENCH_REPEAT', 20);
  const loadBefore = loadavg();
  const database = await createBenchDatabase(databaseServerUrl());
  const relay = await startRelay(database.url);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const keys = [await createAccount(relay.url), await createAccount(relay.url)];
    const [measured, other] = await Promise.all(keys.map(async (key) => {
      const endpoint = await createEndpoint(relay.url, key, { name: 'bench' });
      const account = await fetch(`${relay.url}/v1/account`, { headers: { authorization: `Bearer ${key}` } }).then((response) => response.json() as Promise<any>);
      return { key, accountId: account.account.id as string, endpointId: endpoint.id, destinationId: `dst_${endpoint.id.slice(3)}` };
    }));
    const startMs = Date.now() - (events + 60) * STEP_MS;
    log(`writing ${events} events for each of two accounts`);
    const writeStarted = performance.now();
    await writeEventHistory(client, { ...other!, count: events, startMs, stepMs: STEP_MS, tag: 2 });
    await writeEventHistory(client, { ...measured!, count: events, startMs, stepMs: STEP_MS, tag: 1 });
    log(`history written in ${((performance.now() - writeStarted) / 1000).toFixed(1)} s`);

    const at = (g: number) => new Date(startMs + g * STEP_MS).toISOString();
    const firstPage = await (await fetch(`${relay.url}/v1/events`, { headers: { authorization: `Bearer ${measured!.key}` } })).json() as any;
    const requests = [
      { name: 'first page (50 events)', path: '/v1/events' },
      { name: 'second page (cursor)', path: `/v1/events?cursor=${firstPage.next_cursor}` },
      { name: 'status=failed', path: '/v1/events?status=failed' },
      { name: 'endpoint_id', path: `/v1/events?endpoint_id=${measured!.endpointId}` },
      { name: 'since/until (one hour, a day ago)', path: `/v1/events?since=${at(events - 90_000)}&until=${at(events - 86_400)}` },
      { name: 'q, found at once', path: '/v1/events?q=invoice' },
      { name: 'q, no match (10,000 scanned)', path: '/v1/events?q=absent-text' },
      { name: 'usage/daily?days=30', path: '/v1/account/usage/daily?days=30' },
    ];
    const lines = [`Console reads at ${events.toLocaleString('en')} events in the account (and as many in another); ${repeat} requests each, one at a time`, '', `${'request'.padEnd(36)}  ${'p50'.padStart(9)}  ${'p99'.padStart(9)}  ${'max'.padStart(9)}`];
    const summary: Record<string, unknown> = { events, repeat };
    let failures = 0;
    for (const request of requests) {
      const times: number[] = [];
      for (let i = 0; i < WARMUP_REQUESTS + repeat; i++) {
        const started = performance.now();
        const response = await fetch(`${relay.url}${request.path}`, { headers: { authorization: `Bearer ${measured!.key}` } });
        await response.arrayBuffer();
        if (!response.ok) {
          log(`${request.name}: answered ${response.status}`);
          failures++;
          break;
        }
        if (i >= WARMUP_REQUESTS) times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      if (times.length === 0) continue;
      lines.push(`${request.name.padEnd(36)}  ${ms(percentile(times, 50)).padStart(9)}  ${ms(percentile(times, 99)).padStart(9)}  ${ms(times[times.length - 1]!).padStart(9)}`);
      summary[request.name] = { p50_ms: percentile(times, 50), p99_ms: percentile(times, 99) };
    }
    lines.push('', machineLine(loadBefore), `Database: ${database.description}`);
    writeReport(lines, () => summary);
    return failures > 0 ? 1 : 0;
  } finally {
    await client.end();
    await relay.stop();
  }
}

await runBench(main);
