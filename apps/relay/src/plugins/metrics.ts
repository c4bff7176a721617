/**
 * Prometheus metrics (docs/deployment.md#metrics), on a registry of the app's own: no
 * module-level state, so several apps in one process (tests) never share a count.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { attemptErrorClass, HookError, isSuccessStatus, METRICS_TOKEN_REQUIRED, type AttemptKind } from '@hook/core';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { readQueueStatus, type Orm, type PrimaryReadReason, type QueueStatus, type ReadTarget, type ReplicaStatus } from '@hook/db';
import type { FinishedAttempt } from '../delivery/attempt.ts';
import { errorResponses } from '../schemas.ts';

/** Every metric name starts with this (prom-client's process metrics too). */
export const METRICS_PREFIX = 'hook_';

/** How long one reading of the queue (a count over the backlog) serves scrapes, in ms. */
export const QUEUE_STATUS_CACHE_MS = 1000;

/** What became of one ingest request, by its answer's status. */
export type IngestOutcome = 'accepted' | 'duplicate' | 'signature_invalid' | 'quota_exceeded' | 'not_found' | 'disabled' | 'too_large' | 'error';

/** What became of one delivery attempt. */
export type DeliveryOutcome = 'delivered' | 'failed_status' | 'timeout' | 'network_error' | 'transformation_failed' | 'filtered';

/** The kinds of live WebSocket connection. */
export type StreamMode = 'tail' | 'listen' | 'playground';

const INGEST_OUTCOME_BY_STATUS: Record<number, IngestOutcome> = { 401: 'signature_invalid', 404: 'not_found', 410: 'disabled', 413: 'too_large', 429: 'quota_exceeded' };

export function ingestOutcome(statusCode: number, duplicate = false): IngestOutcome {
  if (isSuccessStatus(statusCode)) return duplicate ? 'duplicate' : 'accepted';
  return INGEST_OUTCOME_BY_STATUS[statusCode] ?? 'error';
}

/**
 * The outcome label of an attempt, from its kind (set where the attempt succeeded or
 * failed, SendResult.kind): delivered, failed_status for any other answer, else why none
 * came, summed up as the event list's error_class is (attemptErrorClass).
 */
export function deliveryOutcome(kind: AttemptKind): DeliveryOutcome {
  if (kind === 'ok') return 'delivered';
  return attemptErrorClass({ kind, responseStatus: null }) ?? 'failed_status';
}

/** Latency buckets in seconds, from a fast local insert to a slow receiver. */
const INGEST_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DELIVERY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60];

/** The relay's metrics: counted by the ingest routes, the delivery code and the stream sockets; the queue read at scrape time. */
export class RelayMetrics {
  readonly registry = new Registry();
  readonly #ingestRequests = new Counter({
    name: `${METRICS_PREFIX}ingest_requests_total`,
    help: 'Requests to ingest URLs, by outcome (accepted, signature_invalid, quota_exceeded, not_found, disabled, too_large, error).',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  readonly #ingestDuration = new Histogram({
    name: `${METRICS_PREFIX}ingest_duration_seconds`,
    help: 'Time from an ingest request arriving to its answer (an accepted event is committed by then), by outcome.',
    labelNames: ['outcome'],
    buckets: INGEST_BUCKETS_SECONDS,
    registers: [this.registry],
  });
  readonly #deliveryAttempts = new Counter({
    name: `${METRICS_PREFIX}delivery_attempts_total`,
    help: 'Delivery attempts made by this process (automatic, replays and hook listen sessions), by outcome (delivered, failed_status, timeout, network_error, transformation_failed, filtered).',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  readonly #deliveryDuration = new Histogram({
    name: `${METRICS_PREFIX}delivery_duration_seconds`,
    help: 'How long a delivery attempt took, from sending to the whole answer (or the error), by outcome.',
    labelNames: ['outcome'],
    buckets: DELIVERY_BUCKETS_SECONDS,
    registers: [this.registry],
  });
  readonly #streamConnections = new Gauge({
    name: `${METRICS_PREFIX}stream_connections`,
    help: 'Open live-stream WebSocket connections to this process, by mode (tail, listen, playground).',
    labelNames: ['mode'],
    registers: [this.registry],
  });
  readonly #transformationCpu = new Counter({
    name: `${METRICS_PREFIX}transformation_cpu_seconds_total`,
    help: "CPU time transformations (and filters over large bodies) used on this process's transformation threads, in seconds.",
    registers: [this.registry],
  });
  readonly #transformationThrottles = new Counter({
    name: `${METRICS_PREFIX}transformation_throttles_total`,
    help: "Times an account's transformations ran past its plan's CPU allowance in this process (its deliveries then wait for the allowance to refill).",
    registers: [this.registry],
  });
  readonly #missingPartitions = new Counter({
    name: `${METRICS_PREFIX}history_partitions_missing_total`,
    help: 'Times ingest found no history partition for a batch and made it on the spot (partitions are made ahead by the retention job: is it running?).',
    registers: [this.registry],
  });
  #queueReading: { at: number; status: Promise<QueueStatus> } | undefined;
  #replicaReads: Counter | undefined;
  #replicaFallbacks: Counter | undefined;

  constructor(orm: Orm) {
    collectDefaultMetrics({ register: this.registry, prefix: METRICS_PREFIX });
    for (const outcome of ['accepted', 'signature_invalid', 'quota_exceeded', 'not_found', 'disabled', 'too_large', 'error'] satisfies IngestOutcome[]) this.#ingestRequests.inc({ outcome }, 0);
    for (const outcome of ['delivered', 'failed_status', 'timeout', 'network_error', 'transformation_failed', 'filtered'] satisfies DeliveryOutcome[]) this.#deliveryAttempts.inc({ outcome }, 0);
    for (const mode of ['tail', 'listen', 'playground'] satisfies StreamMode[]) this.#streamConnections.set({ mode }, 0);
    const queueStatus = (): Promise<QueueStatus> => this.#queueStatus(orm);
    new Gauge({
      name: `${METRICS_PREFIX}queue_depth`,
      help: `Events due for delivery that no worker holds (paused endpoints' backlogs included), across every relay process on the database; read at most every ${QUEUE_STATUS_CACHE_MS} ms.`,
      registers: [this.registry],
      async collect() {
        this.set((await queueStatus()).due);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}queue_lag_seconds`,
      help: 'How long the longest-waiting due event has been due, in seconds (0 when nothing waits).',
      registers: [this.registry],
      async collect() {
        this.set((await queueStatus()).oldestDueSeconds);
      },
    });
  }

  /** One reading of the queue serves every scrape within QUEUE_STATUS_CACHE_MS (a failed one is not kept). */
  #queueStatus(orm: Orm): Promise<QueueStatus> {
    const now = Date.now();
    if (this.#queueReading && now - this.#queueReading.at < QUEUE_STATUS_CACHE_MS) return this.#queueReading.status;
    const status = readQueueStatus(orm);
    this.#queueReading = { at: now, status };
    status.catch(() => {
      if (this.#queueReading?.status === status) this.#queueReading = undefined;
    });
    return status;
  }

  /** Counts a batch that met a missing history partition (docs/retention.md#partitions). */
  countMissingPartition(): void {
    this.#missingPartitions.inc();
  }

  /** Counts every answer of the ingest routes registered in `scope` (an onResponse hook, so the handlers stay as they are). */
  countIngest(scope: FastifyInstance): void {
    scope.addHook('onResponse', (request, reply: FastifyReply, done) => {
      this.ingestAnswered(reply.statusCode, request.ingestDuplicate, reply.elapsedTime / 1000);
      done();
    });
  }

  /** Counts one ingest answer (the direct path's, routes/ingest/direct.ts, or a route's): its outcome and how long it took. */
  ingestAnswered(statusCode: number, duplicate: boolean, seconds: number): void {
    const outcome = ingestOutcome(statusCode, duplicate);
    this.#ingestRequests.inc({ outcome });
    this.#ingestDuration.observe({ outcome }, seconds);
  }

  attemptFinished(finished: Pick<FinishedAttempt, 'kind' | 'attempt'>): void {
    this.deliveryMeasured(deliveryOutcome(finished.kind), finished.attempt.duration_ms);
  }

  transformationCpuUsed(cpuMs: number): void {
    this.#transformationCpu.inc(cpuMs / 1000);
  }

  transformationThrottled(): void {
    this.#transformationThrottles.inc();
  }

  /** The live stream's link to other relay processes (stream/peers.ts): how many watches they announced, read at scrape time. */
  watchStreamPeers(peers: { readonly watchesElsewhere: number }): void {
    new Gauge({
      name: `${METRICS_PREFIX}stream_watches_elsewhere`,
      help: 'Watches that live-stream sessions on other relay processes on the database announced, as far as this process knows: accounts with a tail or listen session, and URL destinations a listen session mirrors (what happens to them here is sent there).',
      registers: [this.registry],
      collect() {
        this.set(peers.watchesElsewhere);
      },
    });
  }

  /** Gauges read from the transformation threads at scrape time. */
  watchTransformPool(pool: { readonly queuedTasks: number; readonly runningTasks: number; readonly deferredTasks: number }): void {
    new Gauge({
      name: `${METRICS_PREFIX}transformation_tasks`,
      help: 'Transformation tasks in this process, by state (queued: waiting for a thread; running).',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        this.set({ state: 'queued' }, pool.queuedTasks);
        this.set({ state: 'running' }, pool.runningTasks);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}transformation_deferred_total`,
      help: 'Deliveries given back untried because no transformation thread was free within HOOK_DELIVERY_TIMEOUT (tried again 5 s later).',
      registers: [this.registry],
      collect() {
        this.set(pool.deferredTasks);
      },
    });
  }

  /**
   * The read replicas (docs/deployment.md#read-replicas): whether each answers and its lag, read
   * at scrape time, and counters of where lag-tolerant requests read (lagTolerantRead).
   */
  watchReadReplicas(reads: { status(): ReplicaStatus[] }): void {
    new Gauge({
      name: `${METRICS_PREFIX}db_replica_up`,
      help: 'Whether each read replica (HOOK_DATABASE_READ_URL, named host:port/database) answered its last check as a standby: 1 or 0.',
      labelNames: ['replica'],
      registers: [this.registry],
      collect() {
        for (const replica of reads.status()) this.set({ replica: replica.replica }, replica.up ? 1 : 0);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}db_replica_lag_seconds`,
      help: 'How far each answering read replica is behind the primary, in seconds, at its last check (0 once it has replayed the primary\'s newest WAL position; measured every second or less). Past HOOK_DATABASE_READ_MAX_LAG_MS it serves no reads.',
      labelNames: ['replica'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const replica of reads.status()) if (replica.lagSeconds !== null) this.set({ replica: replica.replica }, replica.lagSeconds);
      },
    });
    this.#replicaReads = new Counter({
      name: `${METRICS_PREFIX}db_replica_reads_total`,
      help: 'Lag-tolerant API requests (event lists and search, usage) whose reads a read replica served, by replica.',
      labelNames: ['replica'],
      registers: [this.registry],
    });
    for (const replica of reads.status()) this.#replicaReads.inc({ replica: replica.replica }, 0);
    this.#replicaFallbacks = new Counter({
      name: `${METRICS_PREFIX}db_replica_fallbacks_total`,
      help: 'Lag-tolerant API requests the primary served instead of a replica, by reason: own_write (the account wrote lately and no replica has that write yet), lagging (every answering replica is past the lag bound), down (none answers), replica_failed (the replica failed during the request).',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    for (const reason of ['own_write', 'lagging', 'down', 'replica_failed'] satisfies PrimaryReadReason[]) this.#replicaFallbacks.inc({ reason }, 0);
  }

  /** Counts where one lag-tolerant request read. */
  lagTolerantRead(target: ReadTarget): void {
    if (target.replica === null) this.#replicaFallbacks?.inc({ reason: target.reason });
    else this.#replicaReads?.inc({ replica: target.replica });
  }

  deliveryMeasured(outcome: DeliveryOutcome, durationMs: number): void {
    this.#deliveryAttempts.inc({ outcome });
    this.#deliveryDuration.observe({ outcome }, durationMs / 1000);
  }

  /**
   * Counts the WebSocket routes' connections: an onRoute hook (added to the app before
   * @fastify/websocket, so it sees each route's own socket handler) wraps the handler
   * to count the socket until it closes.
   */
  countStreamConnections(app: FastifyInstance): void {
    const gauge = this.#streamConnections;
    app.addHook('onRoute', (route: RouteOptions & { websocket?: boolean }) => {
      if (!route.websocket) return;
      const handler = route.handler as unknown as (this: FastifyInstance, socket: import('ws').WebSocket, request: { query: unknown }) => unknown;
      const playground = route.url.startsWith('/playground');
      route.handler = function countedSocket(this: FastifyInstance, socket: import('ws').WebSocket, request: { query: unknown }) {
        const mode: StreamMode = playground ? 'playground' : (request.query as { mode?: string } | undefined)?.mode === 'listen' ? 'listen' : 'tail';
        gauge.inc({ mode });
        socket.once('close', () => gauge.dec({ mode }));
        return handler.call(this, socket, request);
      } as unknown as RouteOptions['handler'];
    });
  }
}

/** Whether an Authorization header carries `Bearer <token>`, compared in constant time. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * `GET /metrics`: the registry in Prometheus text format. Open unless `token` is given
 * (HOOK_METRICS_TOKEN), then only with `Authorization: Bearer <token>` (docs/deployment.md#metrics).
 */
export async function metricsRoutes(app: FastifyInstance, options: { metrics: RelayMetrics; token: string | null }): Promise<void> {
  const { registry } = options.metrics;
  const { token } = options;
  app.get('/metrics', {
    ...(token === null ? {} : {
      onRequest: async (request: FastifyRequest) => {
        if (!bearerMatches(request.headers.authorization, token)) throw new HookError(METRICS_TOKEN_REQUIRED);
      },
    }),
    schema: {
      tags: ['ops'],
      summary: 'Prometheus metrics (text exposition format); turned off with HOOK_METRICS=off',
      response: { 200: { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } }, ...errorResponses },
    },
  }, async (_request, reply) => {
    const text = await registry.metrics();
    return reply.type(registry.contentType).send(text);
  });
}
