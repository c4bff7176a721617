/**
 * A mirror copy shows what was sent, prepared once (issue 28, item 14). Two relay
 * processes share one database; a destination's transformation runs where the delivery
 * is made, and a `hook listen` connected to the other process is shown that request: the
 * transformed body, with no second run of the code and no second charge of its CPU to
 * the account. The transformation does a fixed amount of work, so its CPU per run is
 * measured first, with nobody listening.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { HookUser } from '../support/cli.ts';
import { freshDatabase } from '../support/database.ts';
import { eventually, startHook, startLocalServer, stopAllHookProcesses, type LocalServer } from '../support/hook-process.ts';
import { relayMetric, startRelayProcess, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';

const user = new HookUser();
let database: TestDatabase;
/** Ingest and the API; its worker or listeners make the deliveries. */
let relayA: RelayProcess;
/** Another process on the database: the listener that is shown copies connects here. */
let relayB: RelayProcess;
let apiKey: string;
const servers: LocalServer[] = [];

/** Busy work of a fixed size (no clock: the same CPU however loaded the machine is), then the body reshaped. */
const TRANSFORMATION = `addHandler('transform', (request) => {
  let x = 0;
  for (let i = 0; i < 4e6; i++) x = (x + i * 7) % 1000003;
  return { path: request.path, query: request.query, headers: { 'x-shaped': String(x > -1) }, body: { shaped: request.body } };
});`;

beforeAll(async () => {
  database = await freshDatabase();
  const env = { HOOK_TRANSFORM_TIMEOUT: '5s' };
  [relayA, relayB] = await Promise.all([startRelayProcess(database.url, env), startRelayProcess(database.url, env)]);
  apiKey = (await user.json(['signup', '--api-url', relayA.baseUrl])).api_key;
  writeFileSync(join(user.home, 'shape.js'), TRANSFORMATION);
}, 60_000);

afterAll(async () => {
  await stopAllHookProcesses();
  await stopRelayProcesses([relayA.child, relayB.child]);
  await Promise.all(servers.map((server) => server.close()));
  await database?.drop().catch(() => undefined);
  user.remove();
});

async function server(): Promise<LocalServer> {
  const started = await startLocalServer();
  servers.push(started);
  return started;
}

async function ingest(url: string, n: number): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

/**
 * The account's transformation CPU once both processes' meters have written what their
 * threads measured so far (hook_transformation_cpu_seconds_total; this account is the
 * only one). A meter writes every 5 s, in whole milliseconds: each may keep under 1 ms back.
 */
async function settledCpuMs(): Promise<number> {
  const measuredMs = async (): Promise<number> =>
    (await Promise.all([relayA, relayB].map((relay) => relayMetric(relay.baseUrl, 'hook_transformation_cpu_seconds_total')))).reduce((sum, seconds) => sum + seconds * 1000, 0);
  const usageMs = async (): Promise<number> => {
    const account = (await (await fetch(`${relayA.baseUrl}/v1/account`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { usage: { transformation_cpu_ms: number } };
    return account.usage.transformation_cpu_ms;
  };
  let usage = 0;
  await expect.poll(async () => {
    const measured = await measuredMs();
    usage = await usageMs();
    return measured - usage;
  }, { timeout: 20_000, interval: 250, message: 'the meters to write what the threads measured' }).toBeLessThan(2);
  return usage;
}

/** Until each process knows of `watches[i]` or more of the others' watches (accounts, mirrored URL destinations): then it sends them copies. */
async function untilKnown(watches: [number, number]): Promise<void> {
  await expect.poll(async () => (await Promise.all([relayA, relayB].map((relay) => relayMetric(relay.baseUrl, 'hook_stream_watches_elsewhere')))).map((known, i) => known >= watches[i]!), { timeout: 10_000 })
    .toEqual([true, true]);
}

const shapedBody = (body: Buffer): unknown => JSON.parse(body.toString('utf8'));

describe('mirror copies are prepared once', () => {
  let cpuPerRunMs = 0;

  it('shows a listener on another process what a URL destination was sent, transformed, without running the code again', async () => {
    const receiver = await server();
    const endpoint = await user.json(['endpoints', 'create', 'shaped', '--destination', `http://127.0.0.1:${receiver.port}/hooks`, '--transformation-file', join(user.home, 'shape.js')]);

    // Nobody listening: the CPU of one run.
    for (let n = 0; n < 3; n++) await ingest(endpoint.url, n);
    await receiver.waitFor(3, 30_000);
    const before = await settledCpuMs();
    cpuPerRunMs = before / 3;
    expect(cpuPerRunMs).toBeGreaterThan(2);

    const local = await server();
    const listen = startHook(user, ['listen', String(local.port), '--endpoint', 'shaped', '--json', '--api-url', relayB.baseUrl]);
    expect((await listen.waitForJson((line) => line.type === 'ready')).mirror).toBe(true);
    // relayA learns (one NOTIFY) that relayB has a session for the account and mirrors the destination.
    await untilKnown([2, 0]);
    const sent = [await ingest(endpoint.url, 10), await ingest(endpoint.url, 11), await ingest(endpoint.url, 12)];
    await receiver.waitFor(6, 30_000);
    await local.waitFor(3, 30_000);

    // The listener got what the destination got: the transformed body, the same bytes.
    for (const [i, id] of sent.entries()) {
      const copy = local.requests.find((request) => request.headers['webhook-id'] === id)!;
      const delivered = receiver.requests.find((request) => request.headers['webhook-id'] === id)!;
      expect(shapedBody(copy.body)).toEqual({ shaped: { n: 10 + i } });
      expect(copy.body.equals(delivered.body)).toBe(true);
      expect(copy.headers['x-shaped']).toBe('true');
      expect(copy.headers['x-hook-mirror']).toBe('true');
      expect(copy.headers['webhook-signature']).toBe(delivered.headers['webhook-signature']);
    }
    // Three more runs, not six.
    const added = (await settledCpuMs()) - before;
    expect(added, `${added} ms for 3 events at ${cpuPerRunMs.toFixed(1)} ms a run`).toBeLessThan(4.5 * cpuPerRunMs);
    expect((await listen.stop('SIGINT')).code).toBe(0);
  }, 120_000);

  it('shows a listener the delivery another listener on another process was sent, without running the code again', async () => {
    // No --destination: a cli destination, held for hook listen, with the transformation.
    const endpoint = await user.json(['endpoints', 'create', 'listened', '--transformation-file', join(user.home, 'shape.js')]);
    const [localA, localB] = [await server(), await server()];
    const listenA = startHook(user, ['listen', String(localA.port), '--endpoint', 'listened', '--json', '--api-url', relayA.baseUrl]);
    const listenB = startHook(user, ['listen', String(localB.port), '--endpoint', 'listened', '--json', '--api-url', relayB.baseUrl]);
    await Promise.all([listenA.waitForJson((line) => line.type === 'ready'), listenB.waitForJson((line) => line.type === 'ready')]);
    // Each process learns (one NOTIFY) that the other has a session for the account.
    await untilKnown([1, 1]);
    const before = await settledCpuMs();
    const sent = [await ingest(endpoint.url, 20), await ingest(endpoint.url, 21), await ingest(endpoint.url, 22), await ingest(endpoint.url, 23)];
    // Each listener sees every event: one decides it, the other is shown a copy.
    await eventually(async () => [localA.requests.length, localB.requests.length], ([a, b]) => a! >= 4 && b! >= 4, 30_000, 'every event at both listeners');
    for (const local of [localA, localB]) {
      for (const [i, id] of sent.entries()) expect(shapedBody(local.requests.find((request) => request.headers['webhook-id'] === id)!.body)).toEqual({ shaped: { n: 20 + i } });
    }
    const added = (await settledCpuMs()) - before;
    expect(added, `${added} ms for 4 events at ${cpuPerRunMs.toFixed(1)} ms a run`).toBeLessThan(6 * cpuPerRunMs);
    expect((await listenA.stop('SIGINT')).code).toBe(0);
    expect((await listenB.stop('SIGINT')).code).toBe(0);
  }, 120_000);
});
