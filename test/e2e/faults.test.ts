/**
 * Fault suite (docs/deployment.md, "Failure behaviour"): real relay processes on a real
 * PostgreSQL, one fault each. A relay SIGKILLed during heavy ingest loses no event it
 * acknowledged; a database that stops answers 503 storage_unavailable and the relay
 * recovers by itself; a receiver that hangs costs one timeout and does not slow other
 * endpoints; SIGTERM finishes what is in flight and exits 0.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@hook/db';
import type { TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startRelayProcess, type RelayProcess } from '../support/relay-process.ts';

const children = new Set<ChildProcess>();
const cleanups: (() => Promise<unknown> | void)[] = [];

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
});

async function startRelay(databaseUrl: string, env: Record<string, string> = {}): Promise<RelayProcess & { stderr: () => string }> {
  const relay = await startRelayProcess(databaseUrl, env);
  children.add(relay.child);
  relay.child.once('exit', () => children.delete(relay.child));
  let stderr = '';
  relay.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { ...relay, stderr: () => stderr };
}

async function testDatabase(): Promise<TestDatabase> {
  const database = await freshDatabase();
  cleanups.push(() => database.drop());
  return database;
}

async function testReceiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const receiver = await startReceiver(...args);
  cleanups.push(() => receiver.close());
  return receiver;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** An enterprise account (no monthly quota in the way of heavy ingest) and its key. */
async function signUp(baseUrl: string): Promise<string> {
  const account = (await (await fetch(`${baseUrl}/v1/accounts`, { method: 'POST' })).json()) as { api_key: string };
  const upgraded = await fetch(`${baseUrl}/v1/account/plan`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'enterprise' }),
  });
  expect(upgraded.status).toBe(200);
  return account.api_key;
}

/** Creates an endpoint delivering to `url`; returns its id and ingest path. */
async function createEndpoint(baseUrl: string, key: string, name: string, url: string): Promise<{ id: string; path: string }> {
  const response = await fetch(`${baseUrl}/v1/endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, destination: { type: 'url', url } }),
  });
  expect(response.status).toBe(201);
  const endpoint = (await response.json()) as { id: string; url: string };
  return { id: endpoint.id, path: new URL(endpoint.url).pathname };
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

async function storedIds(databaseUrl: string): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return new Set((await client.query<{ id: string }>('select id from event')).rows.map((row) => row.id));
  } finally {
    await client.end();
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

describe('relay SIGKILLed during heavy ingest', () => {
  it('keeps every acknowledged event and a second relay delivers them all', async () => {
    const database = await testDatabase();
    const receiver = await testReceiver(() => ({ status: 200 }));
    const env = { HOOK_DELIVERY_TIMEOUT: '1s', HOOK_RETRY_SCHEDULE: Array(6).fill('100ms').join(',') };
    const relayA = await startRelay(database.url, env);
    const key = await signUp(relayA.baseUrl);
    const endpoint = await createEndpoint(relayA.baseUrl, key, 'sigkill', receiver.url);

    // 50 senders; relay A is SIGKILLed once it has acknowledged 300 events, with requests in flight.
    const KILL_AFTER = 300;
    const acknowledged: string[] = [];
    const otherStatuses: number[] = [];
    let connectionErrors = 0;
    let killed = false;
    const sendingSince = Date.now();
    await Promise.all(Array.from({ length: 50 }, async (_, sender) => {
      for (let n = 0; !killed; n++) {
        try {
          const response = await fetch(`${relayA.baseUrl}${endpoint.path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ sender, n, padding: 'x'.repeat(512) }),
          });
          if (response.status === 200) acknowledged.push(((await response.json()) as { id: string }).id);
          else otherStatuses.push(response.status);
        } catch {
          connectionErrors++; // in flight when the relay died: never acknowledged
        }
        if (!killed && acknowledged.length >= KILL_AFTER) {
          killed = true;
          relayA.child.kill('SIGKILL');
        }
      }
    }));
    expect(await exitOf(relayA.child)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(otherStatuses).toEqual([]);
    const sentForMs = Date.now() - sendingSince;
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER);

    // Every 2xx is committed: it is in the table the moment the relay dies.
    const stored = await storedIds(database.url);
    const lost = acknowledged.filter((id) => !stored.has(id));
    expect(lost, `${lost.length} acknowledged events not stored`).toEqual([]);

    // A second relay on the same database delivers what relay A left (its leases lapse).
    const deliveredBeforeKill = new Set(receiver.requests.map((request) => String(request.headers['webhook-id']))).size;
    const restartStarted = Date.now();
    await startRelay(database.url, env);
    const received = (): Set<string> => new Set(receiver.requests.map((request) => String(request.headers['webhook-id'])));
    await expect.poll(() => {
      const ids = received();
      return acknowledged.every((id) => ids.has(id));
    }, { timeout: 60_000, message: 'the receiver to get every acknowledged event' }).toBe(true);
    console.info(
      `faults/sigkill: ${acknowledged.length} events acknowledged in ${sentForMs} ms by 50 senders (${connectionErrors} requests cut off by the kill), ` +
        `${stored.size} stored, ${deliveredBeforeKill} delivered before the kill; the second relay delivered the rest in ${Date.now() - restartStarted} ms ` +
        `(${receiver.requests.length} deliveries for ${received().size} events)`,
    );
  }, 120_000);
});

describe('PostgreSQL stopped during ingest', () => {
  it('answers 503 storage_unavailable with Retry-After, stays up, and resumes when the database returns', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hook-faults-pg-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    let postgres: EmbeddedPostgres | undefined = await startEmbeddedPostgres({ dataDir });
    cleanups.push(() => postgres?.stop());
    const { port, url: databaseUrl } = postgres;
    const receiver = await testReceiver(() => ({ status: 200 }));
    const relay = await startRelay(databaseUrl, { HOOK_DELIVERY_TIMEOUT: '1s', HOOK_RETRY_SCHEDULE: '100ms,100ms,100ms' });
    const key = await signUp(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, key, 'outage', receiver.url);

    type Outcome = { at: number; status: number; code?: string; contentType?: string; retryAfter?: string | null; id?: string };
    const outcomes: Outcome[] = [];
    let connectionErrors = 0;
    let sending = true;
    const senders = Promise.all(Array.from({ length: 10 }, async (_, sender) => {
      for (let n = 0; sending; n++) {
        try {
          const response = await fetch(`${relay.baseUrl}${endpoint.path}`, { method: 'POST', body: JSON.stringify({ sender, n }), headers: { 'content-type': 'application/json' } });
          const body = (await response.json()) as { id?: string; code?: string };
          outcomes.push({ at: Date.now(), status: response.status, code: body.code, contentType: response.headers.get('content-type') ?? undefined, retryAfter: response.headers.get('retry-after'), id: body.id });
        } catch {
          connectionErrors++;
        }
        await sleep(20);
      }
    }));

    // Ingest works before the outage: 50 events acknowledged.
    await expect.poll(() => outcomes.filter((o) => o.status === 200).length, { timeout: 15_000, message: 'ingest to acknowledge 50 events before the outage' }).toBeGreaterThanOrEqual(50);
    const stoppedAt = Date.now();
    await postgres.stop(); // fast shutdown: open connections are terminated
    postgres = undefined;
    await expect.poll(() => outcomes.some((o) => o.at > stoppedAt && o.status === 503), { timeout: 15_000, message: 'ingest to answer 503' }).toBe(true);
    // The outage goes on until 100 answers have been refused: every answer meanwhile must be a structured 503 (checked below).
    await expect.poll(() => outcomes.filter((o) => o.at > stoppedAt && o.status === 503).length, { timeout: 15_000, message: '100 answers during the outage' }).toBeGreaterThanOrEqual(100);
    const health = await fetch(`${relay.baseUrl}/readyz`); // not ready (/healthz, liveness, stays 200)
    expect(health.status).toBe(503);
    expect(((await health.json()) as { code: string }).code).toBe('storage_unavailable');
    const api = await fetch(`${relay.baseUrl}/v1/endpoints`, { headers: { authorization: `Bearer ${key}` } });
    expect(api.status).toBe(503);
    expect(api.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await api.json()) as { code: string }).code).toBe('storage_unavailable');
    expect(relay.child.exitCode).toBeNull();

    const restartedAt = Date.now();
    postgres = await startEmbeddedPostgres({ dataDir, port });
    const databaseBackAt = Date.now();
    await expect.poll(() => outcomes.some((o) => o.at > databaseBackAt && o.status === 200), { timeout: 15_000, message: 'ingest to answer 200 again' }).toBe(true);
    const recoveredAt = outcomes.find((o) => o.at > databaseBackAt && o.status === 200)!.at;
    // Ingest keeps working after the outage: 50 more events acknowledged.
    await expect.poll(() => outcomes.filter((o) => o.at > databaseBackAt && o.status === 200).length, { timeout: 15_000, message: '50 events acknowledged after the outage' }).toBeGreaterThanOrEqual(50);
    sending = false;
    await senders;

    expect(relay.child.exitCode, relay.stderr()).toBeNull();
    expect(connectionErrors, 'the relay stayed up and answered every request').toBe(0);
    const unexpected = outcomes.filter((o) => o.status !== 200 && o.status !== 503);
    expect(unexpected, 'only 200 or 503 while the database comes and goes').toEqual([]);
    const refused = outcomes.filter((o) => o.status === 503);
    for (const outcome of refused) {
      expect(outcome.code).toBe('storage_unavailable');
      expect(outcome.contentType).toMatch(/^application\/problem\+json/);
      expect(outcome.retryAfter).toMatch(/^\d+$/);
    }
    // Every acknowledged event, before and after the outage, is in the database.
    const acknowledged = outcomes.filter((o) => o.status === 200).map((o) => o.id!);
    const stored = await storedIds(databaseUrl);
    const lost = acknowledged.filter((id) => !stored.has(id));
    expect(lost, `${lost.length} acknowledged events not stored`).toEqual([]);
    // And the worker delivers them (it reconnected too).
    await expect.poll(() => {
      const ids = new Set(receiver.requests.map((request) => String(request.headers['webhook-id'])));
      return acknowledged.every((id) => ids.has(id));
    }, { timeout: 30_000, message: 'every acknowledged event delivered' }).toBe(true);
    console.info(
      `faults/database: ${acknowledged.length} acknowledged, ${refused.length} answered 503 storage_unavailable; ` +
        `first 503 ${outcomes.find((o) => o.at > stoppedAt && o.status === 503)!.at - stoppedAt} ms after the stop began; ` +
        `database restarted in ${databaseBackAt - restartedAt} ms; ingest answered 200 again ${recoveredAt - databaseBackAt} ms after it was back`,
    );
  }, 120_000);
});

describe('receiver hangs', () => {
  it('bounds the attempt by HOOK_DELIVERY_TIMEOUT and other endpoints keep flowing', async () => {
    const database = await testDatabase();
    // Accepts connections and reads, never answers.
    const hungSockets = new Set<Socket>();
    const hung = createServer((socket) => {
      hungSockets.add(socket);
      socket.on('data', () => undefined);
      socket.on('close', () => hungSockets.delete(socket));
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => {
      for (const socket of hungSockets) socket.destroy();
      return new Promise((resolve) => hung.close(resolve));
    });
    const hungUrl = `http://127.0.0.1:${(hung.address() as { port: number }).port}/hooks`;
    const healthy = await testReceiver(() => ({ status: 200 }));
    const relay = await startRelay(database.url, { HOOK_DELIVERY_TIMEOUT: '500ms', HOOK_RETRY_SCHEDULE: '1m' });
    const key = await signUp(relay.baseUrl);
    const hanging = await createEndpoint(relay.baseUrl, key, 'hangs', hungUrl);
    const flowing = await createEndpoint(relay.baseUrl, key, 'flows', healthy.url);
    const ingest = async (path: string, body: string): Promise<string> => {
      const response = await fetch(`${relay.baseUrl}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      expect(response.status).toBe(200);
      return ((await response.json()) as { id: string }).id;
    };

    // Baseline latency to the healthy receiver, then the same while 20 deliveries hang.
    const latencies = async (count: number): Promise<number[]> => {
      const result: number[] = [];
      for (let i = 0; i < count; i++) {
        const before = healthy.requests.length;
        const sentAt = Date.now();
        await ingest(flowing.path, JSON.stringify({ i }));
        await healthy.waitFor(before + 1, 5000);
        result.push(healthy.requests[before]!.receivedAtMs - sentAt);
        await sleep(25);
      }
      return result;
    };
    const baseline = await latencies(10);
    const hangStartedAt = Date.now();
    const hungIds = await Promise.all(Array.from({ length: 20 }, (_, i) => ingest(hanging.path, JSON.stringify({ hang: i }))));
    await expect.poll(() => hungSockets.size, { timeout: 5000, message: 'the hung deliveries to reach the receiver' }).toBeGreaterThan(0);
    const during = await latencies(20);
    const duringMs = Date.now() - hangStartedAt;

    // Each hung delivery is one attempt, recorded as a timeout after ~500 ms.
    const attempts: { error: string | null; duration_ms: number; response_status: number | null }[] = [];
    await expect.poll(async () => {
      attempts.length = 0;
      for (const id of hungIds) {
        const event = (await (await fetch(`${relay.baseUrl}/v1/events/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { status: string; attempts: typeof attempts };
        if (event.status !== 'retrying') return false;
        attempts.push(...event.attempts);
      }
      return true;
    }, { timeout: 10_000, message: 'every hung delivery recorded' }).toBe(true);
    expect(attempts).toHaveLength(20);
    for (const attempt of attempts) {
      expect(attempt.response_status).toBeNull();
      expect(attempt.error).toMatch(/no answer within 500 ms/);
      expect(attempt.duration_ms).toBeGreaterThanOrEqual(450);
      expect(attempt.duration_ms).toBeLessThan(2000);
    }
    // The healthy endpoint kept its latency (within a generous bound on a shared machine).
    expect(percentile(during, 50)).toBeLessThan(Math.max(250, percentile(baseline, 50) * 4));
    expect(Math.max(...during)).toBeLessThan(1000);
    console.info(
      `faults/hang: 20 deliveries to a hung receiver recorded as timeouts (durations ${Math.min(...attempts.map((a) => a.duration_ms))}-${Math.max(...attempts.map((a) => a.duration_ms))} ms); ` +
        `healthy endpoint latency p50/max ${percentile(baseline, 50)}/${Math.max(...baseline)} ms before, ${percentile(during, 50)}/${Math.max(...during)} ms during the hang (${duringMs} ms)`,
    );
  }, 60_000);
});

describe('SIGTERM', () => {
  it('finishes in-flight ingests and deliveries, refuses new connections, and exits 0', async () => {
    const database = await testDatabase();
    const receiver = await testReceiver(() => ({ status: 200, delayMs: 1000 }));
    const relay = await startRelay(database.url, { HOOK_DELIVERY_TIMEOUT: '5s', HOOK_RETRY_SCHEDULE: '1m' });
    const key = await signUp(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, key, 'sigterm', receiver.url);
    const { port } = new URL(relay.baseUrl);

    // Five deliveries in flight: the receiver holds each for a second.
    const deliveryIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${relay.baseUrl}${endpoint.path}`, { method: 'POST', body: JSON.stringify({ delivery: i }), headers: { 'content-type': 'application/json' } });
      deliveryIds.push(((await response.json()) as { id: string }).id);
    }
    await receiver.waitFor(5, 5000);

    // Three ingests still uploading at SIGTERM: each sends its headers and the first half of its
    // body, then the rest only once the relay has stopped listening.
    let resumeUploads!: () => void;
    const resumed = new Promise<void>((resolve) => (resumeUploads = resolve));
    const connected: Promise<void>[] = [];
    const uploads = Array.from({ length: 3 }, (_, upload) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const chunks = Array.from({ length: 10 }, (_, i) => Buffer.from(JSON.stringify({ upload, chunk: i }).padEnd(100, ' ')));
      const request = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: endpoint.path, agent: false, headers: { 'content-type': 'text/plain', 'content-length': chunks.length * 100 } }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
      connected.push(new Promise<void>((written) => request.write(Buffer.concat(chunks.slice(0, 5)), () => written())));
      void resumed.then(() => request.end(Buffer.concat(chunks.slice(5))));
    }));
    // Settled once here, so a failure below is not also an unhandled rejection.
    const uploadsSettled = Promise.allSettled(uploads);
    await Promise.all(connected);
    // The relay accepts connections in order: once one opened after the uploads' is answered, theirs are accepted and their headers read.
    const probe = (): Promise<string> => new Promise<string>((resolve) => {
      const request = httpRequest({ host: '127.0.0.1', port, method: 'GET', path: '/healthz', agent: false }, (response) => {
        response.resume();
        resolve(`answered ${response.statusCode}`);
      });
      request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      request.end();
    });
    expect(await probe()).toBe('answered 200');

    const exit = exitOf(relay.child);
    const termAt = Date.now();
    relay.child.kill('SIGTERM');
    // A new connection after SIGTERM is refused once the listener closes, which it does
    // at once: the relay stops listening before it waits for anything (here, the uploads held back until then).
    await expect.poll(probe, { timeout: 1000, interval: 20, message: 'a new connection refused soon after SIGTERM' }).toBe('ECONNREFUSED');
    expect(relay.child.exitCode, 'still finishing the uploads').toBeNull();
    resumeUploads();

    const uploaded = (await uploadsSettled).map((result) => {
      if (result.status === 'rejected') throw new Error(`an upload in flight at SIGTERM failed: ${String(result.reason)}`);
      return result.value;
    });
    const { code, signal } = await exit;
    const exitMs = Date.now() - termAt;
    expect({ code, signal }, relay.stderr()).toEqual({ code: 0, signal: null });
    // About 1 s of work in flight; before responses in flight at close ended their connections, the keep-alive timeout added 5 s.
    expect(exitMs).toBeLessThan(4000);
    for (const result of uploaded) expect(result.status, result.body).toBe(200);

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const uploadedIds = uploaded.map((result) => (JSON.parse(result.body) as { id: string }).id);
      const rows = (await client.query<{ id: string; status: string; lease_id: string | null; attempt_count: number }>(
        'select e.id, l.status, l.lease_id, l.attempt_count from event e join delivery l on l.event_id = e.id where e.id = any($1)', [[...deliveryIds, ...uploadedIds]],
      )).rows;
      const byId = new Map(rows.map((row) => [row.id, row]));
      // The uploads were stored.
      for (const id of uploadedIds) expect(byId.get(id), id).toBeDefined();
      // The deliveries in flight completed and were recorded, with no lease left behind.
      for (const id of deliveryIds) expect(byId.get(id), id).toMatchObject({ status: 'delivered', lease_id: null, attempt_count: 1 });
      // The uploads' deliveries (if claimed before the worker stopped) were recorded or released.
      const leftLeased = (await client.query("select count(*)::int as n from delivery where lease_id is not null")).rows[0].n as number;
      expect(leftLeased).toBe(0);
    } finally {
      await client.end();
    }
    console.info(`faults/sigterm: exited 0 ${exitMs} ms after SIGTERM with 5 deliveries (1 s each) and 3 half-sent uploads in flight; all completed and recorded`);
  }, 60_000);
});
