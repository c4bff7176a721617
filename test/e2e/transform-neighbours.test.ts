/**
 * One account's slow or hostile transformation must not stall the relay for everyone
 * (issues 15 and 27):
 * a real relay process, real receivers, load over real HTTP. Transformations run on the
 * relay's transformation thread (one on a 2-core machine), so a transformation that
 * busy-waits 90 ms at 20 events/s keeps that thread busy but not the event loop, where
 * ingest, deliveries and the API run. The figures are printed so each run reports them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startRelayProcess, type RelayProcess } from '../support/relay-process.ts';
import { api, createEndpoint, signUp } from '../support/relay.ts';
import type { TestDatabase } from '@hook/db/testing';

/** Busy-waits `ms` on every event (inside the 100 ms limit), then marks the request. */
function busyTransformation(ms: number, mark: string): string {
  return `addHandler('transform', (request) => {
  const end = Date.now() + ${ms};
  while (Date.now() < end) {}
  request.headers['x-transformed-by'] = '${mark}';
  return request;
});`;
}

let database: TestDatabase;
let relay: RelayProcess;
const receivers: Receiver[] = [];

beforeAll(async () => {
  database = await freshDatabase();
  relay = await startRelayProcess(database.url, { HOOK_TRANSFORM_THREADS: '1' });
});
afterAll(async () => {
  if (relay) {
    const exited = new Promise((resolve) => relay.child.once('exit', resolve));
    relay.child.kill('SIGTERM');
    await exited;
  }
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await database?.drop();
});

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  receivers.push(started);
  return started;
}

/** Sends `count` requests to `url` at `perSecond`, each timed from send to answer; resolves with the latencies (ms) and statuses. */
async function paced(url: string, perSecond: number, count: number): Promise<{ latenciesMs: number[]; statuses: number[] }> {
  const latenciesMs: number[] = [];
  const statuses: number[] = [];
  const started = performance.now();
  const sends: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const sentAt = performance.now();
    sends.push(fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'order.paid', n: i }), signal: AbortSignal.timeout(10_000) })
      .then(async (response) => {
        await response.arrayBuffer();
        statuses.push(response.status);
      }, () => {
        statuses.push(0);
      })
      .finally(() => latenciesMs.push(performance.now() - sentAt)));
  }
  await Promise.all(sends);
  return { latenciesMs, statuses };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('a slow transformation next door', () => {
  it("leaves another account's ingest fast, and every one of its own events is still delivered, transformed", async () => {
    const busy = await signUp(relay.baseUrl, { plan: 'enterprise' }); // an allowance that covers the run: this test is about the event loop
    const busyReceiver = await receiver();
    const busyEndpoint = await createEndpoint(relay.baseUrl, busy.key, {
      name: 'busy', destination: { type: 'url', url: busyReceiver.url }, transformation: { code: busyTransformation(90, 'busy') },
    });
    const quiet = await signUp(relay.baseUrl);
    const quietReceiver = await receiver();
    const quietEndpoint = await createEndpoint(relay.baseUrl, quiet.key, { name: 'quiet', destination: { type: 'url', url: quietReceiver.url } });

    const alone = await paced(quietEndpoint.url, 50, 100);
    const [withBusy, busyRun] = await Promise.all([paced(quietEndpoint.url, 50, 400), paced(busyEndpoint.url, 20, 160)]);
    const figures = {
      alone: { p50: percentile(alone.latenciesMs, 50), p99: percentile(alone.latenciesMs, 99) },
      beside_busy_transformation: { p50: percentile(withBusy.latenciesMs, 50), p99: percentile(withBusy.latenciesMs, 99) },
    };
    console.log(`neighbour ingest latency (ms): ${JSON.stringify(figures)}`);
    expect(withBusy.statuses.every((status) => status === 200)).toBe(true);
    expect(busyRun.statuses.every((status) => status === 200)).toBe(true);
    // What this guards against is the event loop held by transformations: seconds per
    // request (6.9 s p99 before issue 15). The figures themselves belong to
    // bench:transform; a tight bound here only measures how loaded the machine is while
    // the suite runs.
    expect(figures.beside_busy_transformation.p99).toBeLessThan(1000);

    // 160 events × 90 ms is more than the run's ~8 s on one thread: the rest waits, then arrives.
    await quietReceiver.waitFor(500, 30_000);
    const delivered = await busyReceiver.waitFor(160, 60_000);
    expect(delivered.every((request) => request.headers['x-transformed-by'] === 'busy')).toBe(true);
    expect(new Set(delivered.map((request) => request.headers['webhook-id'])).size).toBe(160);
  }, 120_000);

  it('shares the transformation thread fairly between two accounts with busy transformations', async () => {
    const endpoints = [];
    const keys: string[] = [];
    const fairReceiver = await receiver();
    for (const mark of ['a', 'b']) {
      const account = await signUp(relay.baseUrl, { plan: 'enterprise' });
      keys.push(account.key);
      endpoints.push(await createEndpoint(relay.baseUrl, account.key, {
        name: `fair-${mark}`, destination: { type: 'url', url: fairReceiver.url }, transformation: { code: busyTransformation(40, mark) },
      }));
    }
    // Both backlogs are stored while their endpoints are paused (so how fast the machine
    // ingests them does not matter); then a's is released first, and b's straight after.
    const status = (endpoint: { id: string }, key: string, value: string) => fetch(`${relay.baseUrl}/v1/endpoints/${endpoint.id}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ status: value }),
    });
    for (const [i, endpoint] of endpoints.entries()) expect((await status(endpoint, keys[i]!, 'paused')).status).toBe(200);
    await paced(endpoints[0].url, 1000, 100);
    await paced(endpoints[1].url, 1000, 100);
    for (const [i, endpoint] of endpoints.entries()) expect((await status(endpoint, keys[i]!, 'active')).status).toBe(200);
    const delivered = await fairReceiver.waitFor(80, 60_000);
    const counts = { a: 0, b: 0 };
    for (const request of delivered.slice(0, 80)) counts[request.headers['x-transformed-by'] as 'a' | 'b'] += 1;
    console.log(`first 80 deliveries by account: ${JSON.stringify(counts)}`);
    expect(Math.abs(counts.a - counts.b)).toBeLessThanOrEqual(0.2 * Math.max(counts.a, counts.b));
    await fairReceiver.waitFor(200, 60_000);
  }, 120_000);
});

/** A transformation that spends most of its time limit, then returns a body nested 5,000 deep. */
const DEEP_RESULT = `addHandler('transform', (request) => {
  const end = Date.now() + 80;
  while (Date.now() < end) {}
  let deep = [];
  for (let i = 0; i < 5000; i++) deep = [deep];
  request.body = deep;
  return request;
});`;
const SMALL = "addHandler('transform', (request) => { request.headers['x-small'] = '1'; return request; });";

/** One POST /v1/transformations/test with a given request; its status, JSON and how long it took (ms). */
async function testRun(key: string, code: string): Promise<{ status: number; body: any; ms: number }> {
  const started = performance.now();
  const response = await api(relay.baseUrl, 'POST', '/v1/transformations/test', { key, json: { code, request: { body: { n: 1 } } } });
  return { status: response.status, body: response.body, ms: performance.now() - started };
}

describe('a tenant looping a transformation whose result is nested 5,000 deep', () => {
  it("leaves another account's test runs fast, is charged for every run and throttled by its allowance", async () => {
    const attacker = await signUp(relay.baseUrl); // free: 10 s of transformation CPU a minute
    const neighbour = await signUp(relay.baseUrl);
    const alone: number[] = [];
    for (let i = 0; i < 6; i++) {
      const run = await testRun(neighbour.key, SMALL);
      expect(run.body.ok).toBe(true);
      alone.push(run.ms);
    }

    // Two loops of the attack until the allowance stops it (or 40 s pass: it never does without a charge).
    const attack: { status: number; body: any }[] = [];
    let stopped = false;
    const deadline = performance.now() + 40_000;
    // The neighbour runs once per attack run that finishes: its turns are paced by the attack, not a clock.
    let attackRan: () => void = () => undefined;
    let attacking = true;
    const nextAttackRun = (): Promise<void> => (attacking ? new Promise((resolve) => (attackRan = resolve)) : Promise.resolve());
    const loop = async () => {
      while (!stopped && performance.now() < deadline) {
        const run = await testRun(attacker.key, DEEP_RESULT);
        attack.push(run);
        if (run.status === 429) stopped = true;
        attackRan();
      }
    };
    const loops = Promise.all([loop(), loop()]).finally(() => {
      attacking = false;
      attackRan();
    });
    const beside: number[] = [];
    while (!stopped && performance.now() < deadline) {
      const attackRunDone = nextAttackRun();
      const run = await testRun(neighbour.key, SMALL);
      expect(run.body.ok).toBe(true);
      beside.push(run.ms);
      await attackRunDone;
    }
    await loops;
    const figures = { alone_p50: percentile(alone, 50), beside_max: Math.max(...beside), neighbour_runs: beside.length, attack_runs: attack.length };
    console.log(`neighbour test runs beside a deep-result loop (ms): ${JSON.stringify(figures)}`);

    // Each run fails fast with the limit named, or the time limit on a busy machine (before:
    // it held the one thread 6 s, until the thread was replaced).
    const ran = attack.filter((run) => run.status === 200);
    expect(ran.length).toBeGreaterThan(10);
    const messages = new Set(ran.map((run) => run.body.ok === false && run.body.error.message));
    expect(messages).toContain('The transformed request is nested deeper than 1000 levels');
    expect([...messages].every((message) => /^The transformed request is nested deeper than 1000 levels$|^Transformation ran longer than 100 ms$/.test(String(message)))).toBe(true);
    // Generous: a neighbour waits for at most one attack run (~0.1 s) per turn; before, up to 6 s.
    expect(beside.length).toBeGreaterThan(0);
    expect(figures.beside_max).toBeLessThan(Math.max(1_500, 10 * figures.alone_p50));

    // Every run was charged: the allowance ran out, and the usage shows at least a minute's worth.
    const refused = attack.find((run) => run.status === 429);
    expect(refused?.body).toMatchObject({ code: 'transformation_throttled' });
    const usage = async () => (await api(relay.baseUrl, 'GET', '/v1/account', { key: attacker.key })).body.usage.transformation_cpu_ms as number;
    await expect.poll(usage, { timeout: 20_000, interval: 500 }).toBeGreaterThanOrEqual(10_000);
  }, 120_000);
});
