/**
 * A real relay for a test file: a fresh database, the app from buildApp, listening on
 * a free local port, spoken to over real HTTP.
 */
import { buildApp, loadConfig, type BuildAppOptions, type DeliveryWorker, type RelayConfig } from '@hook/relay';
import { createOrm, type Orm } from '@hook/db';
import type { Plan } from '@hook/core';
import type { FastifyInstance } from 'fastify';
import type { TestDatabase } from '@hook/db/testing';
import { afterAll, beforeAll } from 'vitest';
import { freshDatabase } from './database.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { checkResponses, type ResponseCheck } from './response-check.ts';
import { TEST_SECRET_KEY_BYTES } from './secret-key.ts';

export interface TestRelay {
  baseUrl: string;
  app: FastifyInstance;
  orm: Orm;
  database: TestDatabase;
  /** The delivery worker, when the relay was started with one (the app's `deliveryWorker`). */
  worker: DeliveryWorker | undefined;
  /** Every JSON answer checked against its route's response schema, and those that did not match (test/support/response-check.ts). */
  responses: ResponseCheck;
  /** Closes the app (its worker and jobs with it) and the ORM and drops the database; fails if an answer drifted from its schema. */
  close(): Promise<void>;
}

export interface TestRelayOptions {
  /** Run a delivery worker too (buildApp's `worker`), polling this often (ms). */
  workerPollMs?: number;
  /** How often that worker refreshes the queue's planner statistics (ms; its default otherwise). */
  workerStatisticsIntervalMs?: number;
  /** How often the live stream pings its clients. */
  streamHeartbeatIntervalMs?: number;
  /** Plays DNS for delivery destinations instead of the system resolver. */
  resolveDestination?: BuildAppOptions['resolveDestination'];
  /** How often listen sessions read their backlog unwoken (ms). */
  listenPollIntervalMs?: number;
  /** Share the live stream with other relay processes on the database (stream/peers.ts), as the server does. */
  peers?: boolean;
  /** How long closing waits for a background job's pass in progress (buildApp's jobStopGraceMs). */
  jobStopGraceMs?: number;
  /**
   * Run on this relay's database instead of a fresh one: a second relay "process" on the
   * same PostgreSQL. Its close() leaves the database to its owner.
   */
  sharing?: TestRelay;
  /** Run on this database, which the caller made and drops (e.g. one reached through test/support/sql-capture.ts). */
  database?: TestDatabase;
  /** Adds routes before the relay listens (tests of this harness itself). */
  routes?(app: FastifyInstance): void;
}

export async function startTestRelay(overrides: Partial<RelayConfig> = {}, options: TestRelayOptions = {}): Promise<TestRelay> {
  const database = options.sharing?.database ?? options.database ?? await freshDatabase();
  const orm = await createOrm({ databaseUrl: database.url, secretKey: TEST_SECRET_KEY_BYTES });
  // Test files sign up many accounts (and playground sessions) from 127.0.0.1; a test of a limit sets its own.
  const config: RelayConfig = { ...loadConfig({}), secretKey: TEST_SECRET_KEY_BYTES, port: 0, signupsPerAddressPerHour: 0, playgroundSessionsPerAddressPerHour: 0, ...overrides, databaseUrl: database.url };
  const app = await buildApp({
    config,
    orm,
    streamHeartbeatIntervalMs: options.streamHeartbeatIntervalMs,
    listenPollIntervalMs: options.listenPollIntervalMs,
    resolveDestination: options.resolveDestination,
    databaseUrl: database.url,
    streamPeers: options.peers ?? false,
    worker: options.workerPollMs === undefined ? false : {
      pollIntervalMs: options.workerPollMs,
      ...(options.workerStatisticsIntervalMs !== undefined ? { statisticsIntervalMs: options.workerStatisticsIntervalMs } : {}),
    },
    ...(options.jobStopGraceMs !== undefined ? { jobStopGraceMs: options.jobStopGraceMs } : {}),
  });
  const responses = checkResponses(app);
  options.routes?.(app);
  // Listening makes the app ready: its worker and jobs start.
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    app,
    orm,
    database,
    worker: app.deliveryWorker ?? undefined,
    responses,
    async close() {
      await app.close();
      await orm.close();
      if (!options.sharing && !options.database) await database.drop();
      if (responses.drifts.length > 0) {
        throw new Error(`Answers drifted from their response schemas:\n${responses.drifts.map((drift) => `  ${drift.route} ${drift.status}: ${drift.errors.join('; ')}`).join('\n')}`);
      }
    },
  };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A JSON API call over real HTTP; `body` is parsed JSON (or null when empty). */
export async function api<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; json?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.rawBody;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

/** A new account; returns its API key and id. */
export async function signUp(baseUrl: string, { plan }: { plan?: Plan } = {}): Promise<{ key: string; accountId: string }> {
  const response = await api(baseUrl, 'POST', '/v1/accounts');
  if (response.status !== 201) throw new Error(`sign-up failed: ${response.status} ${JSON.stringify(response.body)}`);
  const key = response.body.api_key as string;
  if (plan && plan !== 'free') {
    // For tests that need more than free allows (e.g. more than 3 endpoints on one account).
    const changed = await api(baseUrl, 'POST', '/v1/account/plan', { key, json: { plan } });
    if (changed.status !== 200) throw new Error(`plan change failed: ${changed.status} ${JSON.stringify(changed.body)}`);
  }
  return { key, accountId: response.body.account.id };
}

/** A new endpoint of the account; returns the API's JSON for it. */
export async function createEndpoint(baseUrl: string, key: string, body: Record<string, unknown> = { name: 'test' }): Promise<any> {
  const response = await api(baseUrl, 'POST', '/v1/endpoints', { key, json: body });
  if (response.status !== 201) throw new Error(`endpoint creation failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** A new endpoint of the account with its signing secret (`secret`) beside the API's JSON for it. */
export async function createEndpointWithSecret(baseUrl: string, key: string, body: Record<string, unknown>): Promise<any> {
  const endpoint = await createEndpoint(baseUrl, key, body);
  const secret = (await api(baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/secret`, { key })).body.secret as string;
  return { ...endpoint, secret };
}

/** POSTs an event to an ingest URL, requires 200, and returns the event id. */
export async function sendEvent(url: string, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers, body });
  if (response.status !== 200) throw new Error(`ingest answered ${response.status}: ${await response.text()}`);
  return (await readJson(response)).id;
}

/** Asserts the RFC 9457 shape every error shares and returns the body. */
export function expectProblem(response: ApiResponse, status: number, code: string): any {
  const problem = response.body;
  const summary = `${response.status} ${JSON.stringify(problem)}`;
  if (response.status !== status) throw new Error(`expected ${status} ${code}, got ${summary}`);
  if (!response.headers.get('content-type')?.startsWith('application/problem+json')) throw new Error(`not problem+json: ${response.headers.get('content-type')}`);
  for (const field of ['type', 'title', 'detail', 'fix', 'request_id']) {
    if (typeof problem[field] !== 'string' || problem[field] === '') throw new Error(`problem lacks ${field}: ${summary}`);
  }
  if (problem.status !== status || problem.code !== code) throw new Error(`expected ${status} ${code}, got ${summary}`);
  if (problem.request_id !== response.headers.get('x-request-id')) throw new Error('request_id differs from x-request-id');
  return problem;
}

/** Rows of a SQL query against the relay's database, read over another connection than the app's requests. */
export async function sqlRows(relay: TestRelay, query: string, params: unknown[] = []): Promise<any[]> {
  return relay.orm.em.fork().getConnection().execute(query, params);
}

/** A fetch response's JSON body, untyped for assertions. */
export async function readJson(response: Response): Promise<any> {
  return response.json();
}

/** What useRelayWithReceiver starts for a test file. */
export interface RelayWithReceiver {
  relay: TestRelay;
  receiver: Receiver;
  /** A pro account's API key on `relay`. */
  key: string;
}

/**
 * Hooks for a test file: before its tests, a relay with a delivery worker, a local
 * receiver and a pro account (handed to `use`, to keep in the file's own variables);
 * after them, both closed.
 */
export function useRelayWithReceiver(use: (started: RelayWithReceiver) => void): void {
  let started: RelayWithReceiver | undefined;
  beforeAll(async () => {
    const relay = await startTestRelay({}, { workerPollMs: 20 });
    const receiver = await startReceiver();
    started = { relay, receiver, key: (await signUp(relay.baseUrl, { plan: 'pro' })).key };
    use(started);
  });
  afterAll(async () => {
    await started?.relay.close();
    await started?.receiver.close();
  });
}
