/**
 * `npm run bench:delivery`: how fast the relay delivers what it ingests, and how long
 * one event takes from ingest to its destination, with a check that every
 * acknowledged event reached the destination.
 *
 * The relay runs as a child process (HOOK_ROLE=all: the API and the delivery worker in
 * one process) on a fresh database: a new `hook_bench_<random>` on the server named by
 * HOOK_BENCH_DATABASE_URL or HOOK_TEST_DATABASE_URL, else an embedded PostgreSQL in a
 * temporary directory. The destination is a receiver in this process (node:http,
 * answers 200 as soon as a request's body is in, records each `webhook-id` and when
 * it arrived). Phases, one relay, one account, one endpoint each:
 *
 *   1. Durable ingest: autocannon at 50 connections, 1 KiB JSON bodies, to an endpoint
 *      without a URL destination (events are stored only), after a warm-up → req/s.
 *   1b. Ceiling: forwarder.ts, the relay's send path (signature headers, pooled undici
 *      POST, answer read) with no database, as its own process at the relay's default
 *      concurrency: first alone for phase 1's duration (→ forwards/s), then phase 1's
 *      load again with the forwarder sending one delivery for each event acknowledged,
 *      as the acknowledgements come in. That second run is a relay whose queue costs
 *      nothing at all (and which has a second process for its sends): its deliveries/s
 *      over phase 1's req/s is the most the ratio can be on this machine.
 *   2. Sustained delivery: the same load to an endpoint whose destination is the
 *      receiver, then a wait until every acknowledged event id has arrived →
 *      deliveries/s = events delivered / (first ingest → last delivery), and its ratio
 *      to the ceiling's deliveries/s (1b). (A short delivery warm-up on its own endpoint
 *      comes first.) CPU per event of PostgreSQL and the relay, against phase 1's.
 *   2b. Fan-out: the same load to an endpoint with three URL destinations (three
 *      tracks), until every acknowledged event reached all three → deliveries/s =
 *      deliveries (3 per event) / (first ingest → last delivery), against phase 2's.
 *   3. Latency when not saturated: a paced sender (node:http, 10 keep-alive
 *      connections) at a steady 200 events/s; each event's send time → its arrival at
 *      the receiver, matched by event id (the ingest answer's `id` is the delivery's
 *      `webhook-id`) → p50/p99.
 *   Cost model (cost-model.ts, docs/performance.md): for phases 1 and 2 and their
 *      difference, per event and per stage, the relay's CPU, PostgreSQL's time per
 *      statement, the statements run and the row versions written. The relay's CPU is
 *      split by stage with the CPU profile of a stand-in relay that repeats phases 1 and 2
 *      for 4 s each after phase 4 (the profiler would add a third to the measured CPU).
 *   5. HTTP reference: with phase 5 or 6, phase 2's load again to a URL endpoint right
 *      before them, the denominator of their ratios (phase 2 runs minutes earlier).
 *      Queue destinations (issue 31; BENCH_QUEUES, after phase 3): for each broker type,
 *      phase 2's load to an endpoint whose one destination is that broker on this machine
 *      (RabbitMQ, NATS JetStream, Redis Streams, Mosquitto), consumed by the bench
 *      (queue-consumers.ts: how each carries webhook-id) → deliveries/s as phase 2 counts
 *      them, and their ratio to the HTTP reference's. A broker
 *      that does not answer on its port is named on one line and its phase skipped.
 *   6. Ordered delivery (issue 31; BENCH_ORDERED): the receiver as an ordered destination
 *      (on_give_up skip), first with one key (`key: null`; BENCH_ORDERED_ONE_KEY_S of
 *      load, since its events go one at a time) → deliveries/s, the receiver's mean round
 *      trip (headers in → answer written) and the ideal 1/round trip, and the relay's
 *      turnaround (answer → the key's next delivery); then phase 2's load with x-key going
 *      round 1,000 keys (`key: {header: 'x-key'}`) → deliveries/s ÷ the reference's. Order is
 *      checked at the receiver: within a key, event ids (ULIDs) by first arrival increase.
 *   4. Verification: every acknowledged event arrived at least once, with the exact
 *      bytes sent; ids delivered more than once are counted; after a graceful stop of
 *      the relay the `event` and `attempt` tables are read for the same endpoints
 *      (phases 5 and 6 included).
 *
 * Exit codes: 0 measured (a target missed is reported, not failed); 1 an acknowledged
 * event was not delivered (within BENCH_DELIVERY_TIMEOUT_S, or before deliveries to its
 * endpoint stalled for BENCH_STALL_S), a delivered body differed
 * from the one sent, an ingest request was answered non-2xx or not at all, a broker's
 * message carried no webhook-id, an ordered key's events arrived out of order, or the
 * relay did not stop cleanly; 2 bad settings.
 *
 * Environment (all optional):
 *   BENCH_DURATION_S           seconds of load in phases 1 and 2 (default 8)
 *   BENCH_WARMUP_S             ingest warm-up seconds, not counted (default 2; the delivery warm-up is at most 1 s)
 *   BENCH_LATENCY_S            seconds of paced load in phase 3 (default 5)
 *   BENCH_LATENCY_RATE         events per second in phase 3 (default 200; the latency target is only judged at 200)
 *   BENCH_DELIVERY_TIMEOUT_S   how long to wait for the deliveries of a phase (default 120)
 *   BENCH_STALL_S              stop waiting earlier when no delivery at all reached the phase's endpoint for this long (default 30)
 *   BENCH_JSON=1               also print a one-line JSON summary as the last stdout line
 *   BENCH_RELAY_CPU_PROF=<dir> keep the cost model's CPU profile (the stand-in relay's, --cpu-prof) in <dir> (else a temporary directory)
 *   BENCH_COST=0               leave the cost model out (no CPU profile, no pg_stat_statements): the cleanest throughput
 *   BENCH_COST_DETAIL=1        the cost model also names each stage's costliest functions
 *   BENCH_SEPARATE_WORKER=1    two relay processes: HOOK_ROLE=api takes the ingest, HOOK_ROLE=worker delivers
 *   BENCH_ACCOUNTS=n           phase 2's load goes round n accounts, one endpoint each to the same receiver (default 1),
 *                              so a flush of ingest or of results holds several accounts'
 *   BENCH_DISTRIBUTED=1        the relay runs with HOOK_DATABASE_DISTRIBUTED=citus (one statement per account of a flush)
 *   BENCH_QUEUES=1             add phase 5 for every broker type (or a list: BENCH_QUEUES=amqp,redis); about 15 s a type
 *   BENCH_ORDERED=1            add phase 6 (about 1 minute: the single key drains one event at a time)
 *   BENCH_ORDERED_ONE_KEY_S    seconds of load to the single ordered key (default 1)
 *   BENCH_ORDERED_HOLD_MS      the receiver holds each single-key delivery this long before answering (default 0: at once)
 *   HOOK_DELIVERY_CONCURRENCY  passed on to the relay (its default otherwise)
 *   HOOK_BENCH_DATABASE_URL / HOOK_TEST_DATABASE_URL   PostgreSQL server URL to create the bench database on
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import {
  acknowledgedIds,
  codeVersion,
  createAccount,
  createBenchDatabase,
  createEndpoint,
  databaseServerUrl,
  figures,
  figuresHeader,
  figuresJson,
  figuresRow,
  jsonBody,
  listenOnLoopback,
  log,
  machineLine,
  ms,
  onCleanup,
  onInterrupt,
  percentile,
  REPO_ROOT,
  positiveNumber,
  resultLines,
  round,
  runBench,
  runLoad,
  runPaced,
  sampleCpu,
  seconds,
  startRelay,
  UsageError,
  writeReport,
  type LoadOptions,
  type LoadRun,
} from './support.ts';
import { BROKER_NAMES, BROKER_URLS, brokerReachable, QUEUE_TYPES, startQueueConsumer, type QueueType } from './queue-consumers.ts';
import { CostProbe, costDifference, costJson, costLines, costProfiles, costTable, monotonicUs, type CostPhase } from './cost-model.ts';

const CONNECTIONS = 50;
const BODY_SIZE_BYTES = 1024;
/** Sustained deliveries/s must reach this share of the ceiling's (a queue that costs nothing, 1b). */
const TARGET_CEILING_SHARE = 0.8;
/** What delivering may add to storing, per event: CPU ms of PostgreSQL and the relay together (issue 30). */
const TARGET_EXTRA_CPU_MS = 0.1;
/** Deliveries/s to three destinations per event must reach this share of one destination's. */
const TARGET_FAN_OUT_SHARE = 0.9;
/** Destinations of the fan-out endpoint. */
const FAN_OUT = 3;
/** Phase 5: each queue type's deliveries/s must reach this share of phase 2's, to a local HTTP receiver (issue 31). */
const TARGET_QUEUE_SHARE = 1.0;
/** Phase 6: ordered deliveries/s with ORDERING_KEYS keys must reach this share of unordered (phase 2's). */
const TARGET_ORDERED_KEYS_SHARE = 0.8;
/**
 * Phase 6: one ordered key counts as "limited only by the receiver's round trip" when its
 * deliveries/s reach this share of 1 / the receiver's mean round trip (the issue gives no number).
 */
const TARGET_ONE_KEY_IDEAL_SHARE = 0.8;
/** Phase 6: the keys the sender's x-key goes round. */
const ORDERING_KEYS = 1000;
/** Phase 6: seconds of load to the single ordered key (its events are delivered one at a time, so a full phase's load would take minutes to drain). */
const DEFAULT_ORDERED_ONE_KEY_S = 1;
/** End-to-end p50 at DEFAULT_LATENCY_RATE must stay under this. */
const TARGET_LATENCY_P50_MS = 10;
const DEFAULT_DURATION_S = 8;
const DEFAULT_WARMUP_S = 2;
/** The delivery warm-up is this long at most. */
const MAX_DELIVERY_WARMUP_S = 1;
const DEFAULT_LATENCY_S = 5;
const DEFAULT_DELIVERY_TIMEOUT_S = 120;
/** A wait for deliveries gives up after this long without any delivery to its endpoint. */
const DEFAULT_STALL_S = 30;
/** Phase 3: events per second (default), and the paced sender's connections. */
const DEFAULT_LATENCY_RATE = 200;
const LATENCY_CONNECTIONS = 10;
/** How often a wait for deliveries reports progress. */
const PROGRESS_EVERY_MS = 5000;
/** How many missing or duplicated ids a report names. */
const EXAMPLES = 3;

// ---------------------------------------------------------------------------------
// Receiver: the destination of every URL endpoint, one track (path) per endpoint

interface Arrival {
  /** performance.now() when the first delivery of this id had been read in full. */
  firstAtMs: number;
  count: number;
}

interface WaitOutcome {
  /** Acknowledged ids that had not arrived when the wait ended. */
  missing: string[];
  /** Why the wait ended. */
  ending: 'complete' | 'timeout' | 'stalled';
  /** When the last of them arrived (else the last arrival so far), and how many distinct ids had arrived by then. */
  atMs: number;
  delivered: number;
}

interface WaitLimits {
  /** The longest wait. */
  timeoutMs: number;
  /** Give up earlier when nothing at all has arrived on this track for this long. */
  stallMs: number;
}

/** What one endpoint's deliveries brought. */
class Track {
  readonly path: string;
  /** Ids in the order of their first arrival. */
  readonly arrivals = new Map<string, Arrival>();
  /** Delivery requests, duplicates included. */
  requests = 0;
  /** Deliveries whose body was not the one sent. */
  badBodies = 0;
  lastFirstArrivalMs = 0;
  lastRequestMs = 0;
  /** The ordering key (x-key) of each id, for tracks that record one. */
  readonly keys = new Map<string, string>();
  /** How long the receiver held this track's requests (headers in → answer written), and how many. */
  heldMs = 0;
  answered = 0;
  /**
   * From the receiver's answer to the next request of this track, when none was open in
   * between: for a single ordered key, the relay's own time per event (the rest of the
   * period is the receiver's round trip).
   */
  turnaroundMs = 0;
  turnarounds = 0;
  #open = 0;
  #lastAnsweredMs = 0;
  readonly #bodyIsExpected: (body: Buffer) => boolean;
  #waiting: { pending: Set<string>; done: (outcome: WaitOutcome) => void } | undefined;

  constructor(path: string, bodyIsExpected: (body: Buffer) => boolean) {
    this.path = path;
    this.#bodyIsExpected = bodyIsExpected;
  }

  /** A request of this track began (its headers are in). */
  opened(atMs: number): void {
    if (this.#open === 0 && this.#lastAnsweredMs > 0) {
      this.turnaroundMs += atMs - this.#lastAnsweredMs;
      this.turnarounds++;
    }
    this.#open++;
  }

  /** A request of this track that began at `openedAtMs` was answered at `atMs`. */
  closed(openedAtMs: number, atMs: number): void {
    this.#open--;
    this.heldMs += atMs - openedAtMs;
    this.answered++;
    this.#lastAnsweredMs = atMs;
  }

  record(id: string, body: Buffer, atMs: number, key?: string): void {
    this.requests++;
    this.lastRequestMs = atMs;
    if (!this.#bodyIsExpected(body)) this.badBodies++;
    const arrival = this.arrivals.get(id);
    if (arrival) {
      arrival.count++;
      return;
    }
    this.arrivals.set(id, { firstAtMs: atMs, count: 1 });
    if (key !== undefined) this.keys.set(id, key);
    this.lastFirstArrivalMs = atMs;
    const waiting = this.#waiting;
    if (waiting?.pending.delete(id) && waiting.pending.size === 0) waiting.done({ missing: [], ending: 'complete', atMs, delivered: this.arrivals.size });
  }

  /** Resolves once every id in `ids` has arrived, or at a limit with those that have not. */
  async waitForAll(label: string, ids: Iterable<string>, limits: WaitLimits): Promise<WaitOutcome> {
    const pending = new Set<string>();
    let total = 0;
    for (const id of ids) {
      total++;
      if (!this.arrivals.has(id)) pending.add(id);
    }
    if (pending.size === 0) return { missing: [], ending: 'complete', atMs: this.lastFirstArrivalMs, delivered: this.arrivals.size };
    const startedMs = performance.now();
    let lastProgressMs = startedMs;
    let timer: NodeJS.Timeout | undefined;
    let stopOnInterrupt = (): void => undefined;
    try {
      return await new Promise<WaitOutcome>((done) => {
        const end = (ending: WaitOutcome['ending']): void =>
          done({ missing: [...pending], ending, atMs: this.lastFirstArrivalMs, delivered: this.arrivals.size });
        this.#waiting = { pending, done };
        timer = setInterval(() => {
          const nowMs = performance.now();
          if (nowMs - lastProgressMs >= PROGRESS_EVERY_MS) {
            lastProgressMs = nowMs;
            log(`${label}: ${total - pending.size} of ${total} acknowledged events delivered after ${((nowMs - startedMs) / 1000).toFixed(0)} s of waiting`);
          }
          if (nowMs - startedMs >= limits.timeoutMs) end('timeout');
          else if (nowMs - Math.max(startedMs, this.lastRequestMs) >= limits.stallMs) end('stalled');
        }, 100);
        stopOnInterrupt = onInterrupt(() => clearInterval(timer));
      });
    } finally {
      this.#waiting = undefined;
      clearInterval(timer);
      stopOnInterrupt();
    }
  }

  /**
   * Ids that arrived (first) after a later one of their key. The relay orders a key by the
   * place it gave each event when storing it (`delivery.ordering_seq`, the order ingest
   * committed them: events sent at once have no order of their own), so within a key
   * they must arrive in that order. Keys are those recorded (x-key); ids without one
   * share the key "".
   */
  orderViolations(placeOf: ReadonlyMap<string, number>): { key: string; id: string; after: string }[] {
    const lastByKey = new Map<string, string>();
    const violations: { key: string; id: string; after: string }[] = [];
    for (const id of this.arrivals.keys()) {
      const key = this.keys.get(id) ?? '';
      const last = lastByKey.get(key);
      if (last !== undefined && (placeOf.get(id) ?? -1) < (placeOf.get(last) ?? -1)) violations.push({ key, id, after: last });
      else lastByKey.set(key, id);
    }
    return violations;
  }

  /** Ids delivered more than once, and the extra deliveries. */
  duplicates(): { ids: string[]; extra: number } {
    const ids: string[] = [];
    let extra = 0;
    for (const [id, arrival] of this.arrivals) {
      if (arrival.count > 1) {
        ids.push(id);
        extra += arrival.count - 1;
      }
    }
    return { ids, extra };
  }
}

interface TrackOptions {
  /** Hold each request this long before answering (a receiver's own work); 0: answer at once. */
  holdMs?: number;
}

interface Receiver {
  url: string;
  track(name: string, bodyIsExpected: (body: Buffer) => boolean, options?: TrackOptions): Track;
  /** Requests to an unknown path or without a webhook-id (answered 404). */
  stray(): number;
}

async function startReceiver(): Promise<Receiver> {
  const tracks = new Map<string, { track: Track; holdMs: number }>();
  let stray = 0;
  const server: Server = createServer((req, res) => {
    const openedAtMs = performance.now();
    const entry = tracks.get(req.url ?? '');
    entry?.track.opened(openedAtMs);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const atMs = performance.now();
      const id = req.headers['webhook-id'];
      if (!entry || typeof id !== 'string' || req.method !== 'POST') {
        stray++;
        res.writeHead(404, { 'content-length': '0' }).end();
        if (entry) entry.track.closed(openedAtMs, performance.now());
        return;
      }
      const key = req.headers['x-key'];
      entry.track.record(id, Buffer.concat(chunks), atMs, typeof key === 'string' ? key : undefined);
      const answer = (): void => {
        res.writeHead(200, { 'content-length': '0' }).end();
        entry.track.closed(openedAtMs, performance.now());
      };
      if (entry.holdMs > 0) setTimeout(answer, entry.holdMs);
      else answer();
    });
  });
  // Idle keep-alive connections stay open longer than the relay keeps them, so a
  // delivery never races the receiver closing its connection.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const port = await listenOnLoopback('receiver', server);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    track(name, bodyIsExpected, options = {}) {
      const track = new Track(`/deliveries/${name}`, bodyIsExpected);
      tracks.set(track.path, { track, holdMs: options.holdMs ?? 0 });
      return track;
    },
    stray: () => stray,
  };
}

// ---------------------------------------------------------------------------------
// Ceiling: the relay's send path with no database (forwarder.ts, its own process)

interface ForwardRun {
  sent: number;
  ok: number;
  seconds: number;
}

/** A forwarder process, ready: give it one of `run` or `credit`… `end`. */
interface Forwarder {
  pid: number;
  /** Forwards as fast as it can for `seconds`. */
  run(seconds: number): Promise<ForwardRun>;
  /** `n` more deliveries to send. */
  credit(n: number): void;
  /** Resolves once every credited delivery was answered. */
  end(): Promise<ForwardRun>;
}

/** Starts a forwarder to `url` and waits until it is ready. */
async function startForwarder(url: string, concurrency: string | undefined): Promise<Forwarder> {
  const child = spawn(process.execPath, [resolve(REPO_ROOT, 'test/bench/forwarder.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, FORWARD_URL: url, FORWARD_BODY_BYTES: String(BODY_SIZE_BYTES), ...(concurrency ? { FORWARD_CONCURRENCY: concurrency } : {}) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  onCleanup('forwarder', async () => void child.kill('SIGKILL'));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const nextLine = async (): Promise<string> => {
    const line = await lines.next();
    if (line.done) throw new Error(`the forwarder exited (code ${child.exitCode}) without an answer`);
    return line.value;
  };
  const first = await nextLine();
  if (first !== 'ready') throw new Error(`the forwarder printed ${JSON.stringify(first)} where "ready" was expected`);
  const answer = async (): Promise<ForwardRun> => JSON.parse(await nextLine()) as ForwardRun;
  return {
    pid: child.pid!,
    async run(seconds) {
      child.stdin!.end(`go ${seconds}\n`);
      return answer();
    },
    credit(n) {
      child.stdin!.write(`credit ${n}\n`);
    },
    async end() {
      child.stdin!.end('end\n');
      return answer();
    },
  };
}

/** How often the ceiling run passes the acknowledged count on to the forwarder. */
const CREDIT_EVERY_MS = 10;

/** CPU ms per event between two samples: PostgreSQL's and the relay's; null without /proc or events. */
function cpuPerEvent(before: ReturnType<typeof sampleCpu>, after: ReturnType<typeof sampleCpu>, relayPids: readonly number[], events: number): { postgres: number; relay: number } | null {
  if (!before || !after || events === 0) return null;
  const relayMs = relayPids.reduce((sum, pid) => sum + after.byPid.get(pid)! - before.byPid.get(pid)!, 0);
  return { postgres: (after.postgresMs - before.postgresMs) / events, relay: relayMs / events };
}

// ---------------------------------------------------------------------------------
// Figures

interface Distribution {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function distribution(values: number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN };
}

function distributionJson(d: Distribution): Record<string, number> {
  return { count: d.count, p50_ms: round(d.p50, 2), p90_ms: round(d.p90, 2), p99_ms: round(d.p99, 2), max_ms: round(d.max, 2) };
}

function deliveryRunJson(measured: DeliveryRun, share: number): Record<string, unknown> {
  return {
    ingest: figuresJson(figures(measured.run.result)),
    acknowledged: measured.acks.size,
    delivered: measured.wait.delivered,
    missing: measured.wait.missing.length,
    wait: measured.wait.ending,
    span_s: round(measured.spanS, 3),
    deliveries_per_second: round(measured.perSecond, 1),
    share_of_http: round(share, 3), // of the HTTP reference's (the reference's own: of phase 2's)
  };
}

// ---------------------------------------------------------------------------------
// What PostgreSQL says about the delivery endpoints (read after the relay stopped)

interface StoredDeliveries {
  /** Events by status. */
  byStatus: Record<string, number>;
  attempts: number;
  failedAttempts: number;
  /** A few failed attempts: status or error. */
  failureSamples: string[];
}

/** An attempt that failed: an error, or an HTTP answer other than 2xx (a broker's acknowledgement has no status and no error). */
const FAILED_ATTEMPT = `(a.error is not null or a.response_status not between 200 and 299)`;

async function storedDeliveries(databaseUrl: string, endpointIds: string[]): Promise<StoredDeliveries> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const statuses = await client.query<{ status: string; n: number }>('select status, count(*)::int as n from delivery where endpoint_id = any($1) group by status', [endpointIds]);
    const attempts = await client.query<{ total: number; failed: number }>(
      `select count(*)::int as total, count(*) filter (where ${FAILED_ATTEMPT})::int as failed
       from attempt a join event e on e.id = a.event_id where e.endpoint_id = any($1)`,
      [endpointIds],
    );
    const samples = await client.query<{ sample: string }>(
      `select coalesce(a.error, 'HTTP ' || a.response_status) as sample
       from attempt a join event e on e.id = a.event_id
       where e.endpoint_id = any($1) and ${FAILED_ATTEMPT}
       group by 1 order by count(*) desc limit ${EXAMPLES}`,
      [endpointIds],
    );
    return {
      byStatus: Object.fromEntries(statuses.rows.map((row) => [row.status, row.n])),
      attempts: attempts.rows[0]!.total,
      failedAttempts: attempts.rows[0]!.failed,
      failureSamples: samples.rows.map((row) => row.sample),
    };
  } finally {
    await client.end();
  }
}

/** Where some undelivered events stand in PostgreSQL, for the report. */
async function describeEvents(databaseUrl: string, ids: string[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const rows = await client.query<{ id: string; status: string | null; attempt_count: number | null; next_attempt_at: Date | null; leased: boolean | null; last: string | null }>(
      `select ids.id, l.status, l.attempt_count, l.next_attempt_at, l.lease_id is not null as leased,
              (select coalesce(a.error, 'HTTP ' || a.response_status) from attempt a where a.event_id = e.id order by a.n desc limit 1) as last
       from unnest($1::text[]) as ids(id) left join event e on e.id = ids.id left join delivery l on l.event_id = e.id`,
      [ids],
    );
    return rows.rows.map((row) =>
      row.status === null
        ? `${row.id}: not in the event table`
        : `${row.id}: status ${row.status}, ${row.attempt_count} attempt(s)${row.last ? ` (last: ${row.last})` : ''}, next attempt ${row.next_attempt_at?.toISOString() ?? 'none'}${row.leased ? ', leased' : ''}`,
    );
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------
// The cost model's stand-in: phases 1 and 2 again, briefly, on a profiled relay

/** Seconds of each phase the profiled stand-in repeats (at most BENCH_DURATION_S). */
const COST_REPEAT_S = 4;

/**
 * Runs phase 1's and phase 2's load again on a relay started with the CPU profiler (on
 * the same database, new endpoints) and returns the profile with each phase's window:
 * what splits the measured phases' CPU by stage (cost-model.ts costTable).
 */
async function profiledRepeat(databaseUrl: string, relayEnv: Record<string, string>, profiles: ReturnType<typeof costProfiles>, receiver: Receiver, body: Buffer, seconds: number, limits: WaitLimits) {
  log(`cost model: phases 1 and 2 again for ${seconds} s each on a profiled relay`);
  const standIn = await startRelay(databaseUrl, relayEnv, profiles.args);
  const apiKey = await createAccount(standIn.url);
  const storeOnly = await createEndpoint(standIn.url, apiKey, { name: 'cost-store-only' });
  const track = receiver.track('cost', (delivered) => delivered.equals(body));
  const delivering = await createEndpoint(standIn.url, apiKey, { name: 'cost-delivery', destination: { type: 'url', url: `${receiver.url}${track.path}` } });
  await runLoad({ url: storeOnly.url, connections: CONNECTIONS, durationS: 1, body }); // warm-up
  let fromUs = monotonicUs();
  await runLoad({ url: storeOnly.url, connections: CONNECTIONS, durationS: seconds, body });
  const store = { fromUs, toUs: monotonicUs() };
  fromUs = monotonicUs();
  const run = await runLoad({ url: delivering.url, connections: CONNECTIONS, durationS: seconds, body });
  await track.waitForAll('cost model delivery', acknowledgedIds([run]).ids, limits);
  const delivery = { fromUs, toUs: monotonicUs() };
  await standIn.stop();
  const file = profiles.find(standIn.pid);
  if (!file) throw new Error(`the profiled relay (pid ${standIn.pid}) wrote no CPU profile`);
  return { store: { file, window: store }, delivery: { file, window: delivery } };
}

// ---------------------------------------------------------------------------------
// Phases 5 and 6: queue destinations and ordered delivery (issue 31)

/** One endpoint's load and the wait for its deliveries, counted as phase 2 counts. */
interface DeliveryRun {
  run: LoadRun;
  acks: Set<string>;
  wait: WaitOutcome;
  /** From the first ingest to the last delivery. */
  spanS: number;
  perSecond: number;
}

/** Runs `load`, then waits until every acknowledged id arrived on `track` (a fresh one). */
async function measureDelivery(label: string, track: Track, load: LoadOptions, limits: WaitLimits): Promise<DeliveryRun> {
  const startMs = performance.now();
  const run = await runLoad(load);
  const acks = acknowledgedIds([run]).ids;
  const wait = await track.waitForAll(label, acks, limits);
  const spanS = (wait.atMs - startMs) / 1000;
  return { run, acks, wait, spanS, perSecond: spanS > 0 ? wait.delivered / spanS : 0 };
}

type QueuePhase =
  | { type: QueueType; skipped: string }
  | { type: QueueType; skipped: null; endpointId: string; track: Track; measured: DeliveryRun; withoutId: number };

/** BENCH_QUEUES: 1 or all for every broker type, else a comma-separated list of them; unset or 0: none. */
function queueSelection(): QueueType[] {
  const raw = process.env.BENCH_QUEUES?.trim();
  if (!raw || raw === '0') return [];
  if (raw === '1' || raw === 'all') return [...QUEUE_TYPES];
  const types = raw.split(',').map((type) => type.trim());
  const unknown = types.filter((type) => !(QUEUE_TYPES as readonly string[]).includes(type));
  if (unknown.length > 0) throw new UsageError(`BENCH_QUEUES=${JSON.stringify(raw)} is not valid: expected 1, all, or a list of ${QUEUE_TYPES.join(', ')}.`);
  return types as QueueType[];
}

/** POST /v1/endpoints/{id}/destinations with `settings` (a destination and its options). */
async function addDestination(relayUrl: string, apiKey: string, endpointId: string, settings: Record<string, unknown>): Promise<void> {
  const added = await fetch(`${relayUrl}/v1/endpoints/${endpointId}/destinations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(settings),
  });
  if (added.status !== 201) throw new Error(`adding a destination answered ${added.status}: ${await added.text()}`);
}

/** Phase 5: phase 2's load to an endpoint whose one destination is the broker of `type`, consumed by the bench. */
async function measureQueue(type: QueueType, relayUrl: string, apiKey: string, body: Buffer, durationS: number, limits: WaitLimits): Promise<QueuePhase> {
  if (!(await brokerReachable(type))) {
    log(`queue ${type}: ${BROKER_NAMES[type]} is not reachable at ${BROKER_URLS[type]}; its phase is skipped`);
    return { type, skipped: `${BROKER_NAMES[type]} not reachable at ${BROKER_URLS[type]}` };
  }
  const track = new Track(type, (delivered) => delivered.equals(body));
  let withoutId = 0;
  const consumer = await startQueueConsumer(type, (id, delivered, atMs) => (id === undefined ? void withoutId++ : track.record(id, delivered, atMs)));
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= consumer.close());
  onCleanup(`${type} consumer`, close);
  const endpoint = await createEndpoint(relayUrl, apiKey, { name: `bench-queue-${type}`, destination: consumer.destination });
  log(`queue ${type}: ingesting ${durationS} s to an endpoint whose destination is ${BROKER_NAMES[type]}`);
  const measured = await measureDelivery(`${type} destination`, track, { url: endpoint.url, connections: CONNECTIONS, durationS, body }, limits);
  await close();
  return { type, skipped: null, endpointId: endpoint.id, track, measured, withoutId };
}

interface OrderedPhase {
  endpointId: string;
  track: Track;
  measured: DeliveryRun;
  violations: ReturnType<Track['orderViolations']>;
}

/**
 * Phase 6: `load` to an endpoint whose one destination is `track`, ordered by `key` (null:
 * one key), skipping a key's give-ups. The endpoint is made with its URL destination and
 * then ordered (PATCH), as phase 2's: an endpoint made without one would keep a `hook
 * listen` destination beside it, a second delivery row for every event.
 */
async function measureOrdered(label: string, relayUrl: string, databaseUrl: string, apiKey: string, receiver: Receiver, track: Track, key: { header: string } | null, load: Omit<LoadOptions, 'url'>, limits: WaitLimits): Promise<OrderedPhase> {
  const endpoint = await createEndpoint(relayUrl, apiKey, { name: `bench-${track.path.split('/').at(-1)}`, destination: { type: 'url', url: `${receiver.url}${track.path}` } });
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const listed = await fetch(`${relayUrl}/v1/endpoints/${endpoint.id}/destinations`, { headers });
  const destinations = (await listed.json()) as { data?: { id: string }[] };
  if (listed.status !== 200 || destinations.data?.length !== 1) throw new Error(`listing the destinations answered ${listed.status}: ${JSON.stringify(destinations)}`);
  const ordered = await fetch(`${relayUrl}/v1/destinations/${destinations.data[0]!.id}`, { method: 'PATCH', headers, body: JSON.stringify({ ordering: { key, on_give_up: 'skip' } }) });
  if (ordered.status !== 200) throw new Error(`ordering the destination answered ${ordered.status}: ${await ordered.text()}`);
  log(`${label}: ingesting ${load.durationS} s`);
  const measured = await measureDelivery(label, track, { ...load, url: endpoint.url }, limits);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ event_id: string; ordering_seq: string }>('select event_id, ordering_seq from delivery where endpoint_id = $1', [endpoint.id]);
    return { endpointId: endpoint.id, track, measured, violations: track.orderViolations(new Map(rows.map((row) => [row.event_id, Number(row.ordering_seq)]))) };
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------

async function main(): Promise<number> {
  const durationS = seconds('BENCH_DURATION_S', DEFAULT_DURATION_S, false);
  const warmupS = seconds('BENCH_WARMUP_S', DEFAULT_WARMUP_S, true);
  const latencyS = seconds('BENCH_LATENCY_S', DEFAULT_LATENCY_S, false);
  const latencyRate = positiveNumber('BENCH_LATENCY_RATE', DEFAULT_LATENCY_RATE);
  const deliveryTimeoutMs = seconds('BENCH_DELIVERY_TIMEOUT_S', DEFAULT_DELIVERY_TIMEOUT_S, false) * 1000;
  const stallMs = seconds('BENCH_STALL_S', DEFAULT_STALL_S, false) * 1000;
  const waitLimits: WaitLimits = { timeoutMs: deliveryTimeoutMs, stallMs };
  const cpuProfileDir = process.env.BENCH_RELAY_CPU_PROF?.trim() || undefined;
  const separateWorker = process.env.BENCH_SEPARATE_WORKER?.trim() === '1';
  const concurrency = process.env.HOOK_DELIVERY_CONCURRENCY?.trim() || undefined;
  const accounts = Math.floor(positiveNumber('BENCH_ACCOUNTS', 1));
  const queueTypes = queueSelection();
  const ordered = process.env.BENCH_ORDERED?.trim() === '1';
  const orderedOneKeyS = seconds('BENCH_ORDERED_ONE_KEY_S', DEFAULT_ORDERED_ONE_KEY_S, false);
  const orderedHoldMs = seconds('BENCH_ORDERED_HOLD_MS', 0, true);
  const serverUrl = databaseServerUrl();
  const body = jsonBody(BODY_SIZE_BYTES);
  const loadBefore = loadavg();
  const code = codeVersion();

  const receiver = await startReceiver();
  const database = await createBenchDatabase(serverUrl);
  const relayEnv = { HOOK_ALLOW_PRIVATE_DESTINATIONS: 'true', ...(process.env.BENCH_DISTRIBUTED === '1' ? { HOOK_DATABASE_DISTRIBUTED: 'citus' } : {}), ...(concurrency ? { HOOK_DELIVERY_CONCURRENCY: concurrency } : {}) };
  const profiles = costProfiles(cpuProfileDir && resolve(cpuProfileDir));
  const relay = await startRelay(database.url, separateWorker ? { ...relayEnv, HOOK_ROLE: 'api' } : relayEnv);
  const worker = separateWorker ? await startRelay(database.url, { ...relayEnv, HOOK_ROLE: 'worker' }) : undefined;
  const relayPids = worker ? [relay.pid, worker.pid] : [relay.pid];
  const costProbe = await CostProbe.open(database.url, [{ role: 'relay', pid: relay.pid }, ...(worker ? [{ role: 'relay' as const, pid: worker.pid }] : [])]);
  onCleanup('cost probe', () => costProbe.close());
  const apiKey = await createAccount(relay.url);
  const urlEndpoint = async (name: string, track: Track) =>
    createEndpoint(relay.url, apiKey, { name, destination: { type: 'url', url: `${receiver.url}${track.path}` } });

  // 1. Durable ingest, events stored only.
  const storeOnly = await createEndpoint(relay.url, apiKey, { name: 'bench-store-only' });
  const ingestRuns: LoadRun[] = [];
  if (warmupS > 0) {
    log(`ingest: warm-up ${warmupS} s`);
    ingestRuns.push(await runLoad({ url: storeOnly.url, connections: CONNECTIONS, durationS: warmupS, body }));
  }
  log(`ingest: measuring ${durationS} s (store only)`);
  const storeCpuBefore = sampleCpu(relayPids);
  const storeCost = await costProbe.start('1. stored only');
  const ingestRun = await runLoad({ url: storeOnly.url, connections: CONNECTIONS, durationS, body });
  const storeCpu = cpuPerEvent(storeCpuBefore, sampleCpu(relayPids), relayPids, ingestRun.acknowledged.length);
  const storePhase: CostPhase = await storeCost.stop(ingestRun.acknowledged.length);
  ingestRuns.push(ingestRun);
  const ingest = figures(ingestRun.result);

  // 1b. The ceiling: how fast the relay's send path alone forwards on this machine, then
  // phase 1's load with one forwarded delivery per acknowledged event: delivering
  // everything stored with a queue that costs nothing.
  const ceilingTrack = receiver.track('ceiling', (delivered) => delivered.equals(body));
  const ceilingUrl = `${receiver.url}${ceilingTrack.path}`;
  log(`ceiling: forwarding ${durationS} s with the relay's send path and no database`);
  const aloneForwarder = await startForwarder(ceilingUrl, concurrency);
  const sendCpuBefore = sampleCpu([aloneForwarder.pid]);
  const forwardAlone = await aloneForwarder.run(durationS);
  const sendCpuAfter = sampleCpu([aloneForwarder.pid]);
  // The send itself, with nothing else around it: the forwarder's CPU per delivery (what no queue can save).
  const sendCpuMs = sendCpuBefore && sendCpuAfter && forwardAlone.ok > 0 ? (sendCpuAfter.byPid.get(aloneForwarder.pid)! - sendCpuBefore.byPid.get(aloneForwarder.pid)!) / forwardAlone.ok : null;
  log(`ceiling: store-only ingest ${durationS} s, forwarding one delivery per acknowledged event`);
  const creditedForwarder = await startForwarder(ceilingUrl, concurrency);
  let acknowledgedSoFar = 0;
  let credited = 0;
  const creditTimer = setInterval(() => {
    if (acknowledgedSoFar > credited) {
      creditedForwarder.credit(acknowledgedSoFar - credited);
      credited = acknowledgedSoFar;
    }
  }, CREDIT_EVERY_MS);
  const ceilingStartMs = performance.now();
  let ceilingIngestRun: LoadRun;
  try {
    ceilingIngestRun = await runLoad({ url: storeOnly.url, connections: CONNECTIONS, durationS, body, onAcknowledged: () => void acknowledgedSoFar++ });
  } finally {
    clearInterval(creditTimer);
  }
  if (acknowledgedSoFar > credited) creditedForwarder.credit(acknowledgedSoFar - credited);
  const forwardCredited = await creditedForwarder.end();
  ingestRuns.push(ceilingIngestRun);
  const ceilingIngest = figures(ceilingIngestRun.result);
  const forwardAloneRate = forwardAlone.ok / forwardAlone.seconds;
  // As phase 2 counts: deliveries over the time from the first ingest to the last delivery.
  const ceilingSpanS = (performance.now() - ceilingStartMs) / 1000;
  const ceilingRate = forwardCredited.ok / ceilingSpanS;
  const ceilingRatio = ingest.requestsPerSecond > 0 ? ceilingRate / ingest.requestsPerSecond : 0;
  const forwardFailures = forwardAlone.sent - forwardAlone.ok + forwardCredited.sent - forwardCredited.ok;

  // Delivery warm-up: the same load briefly, waited for, not counted.
  const warmupTrack = receiver.track('warmup', (delivered) => delivered.equals(body));
  const warmupEndpoint = await urlEndpoint('bench-warmup', warmupTrack);
  const deliveryWarmupS = Math.min(warmupS, MAX_DELIVERY_WARMUP_S);
  let warmupRun: LoadRun | undefined;
  let warmupWait: WaitOutcome | undefined;
  if (deliveryWarmupS > 0) {
    log(`delivery: warm-up ${deliveryWarmupS} s`);
    warmupRun = await runLoad({ url: warmupEndpoint.url, connections: CONNECTIONS, durationS: deliveryWarmupS, body });
    warmupWait = await warmupTrack.waitForAll('delivery warm-up', acknowledgedIds([warmupRun]).ids, waitLimits);
  }

  // 2. Sustained delivery: as fast as the relay ingests, then until all is delivered.
  const throughputTrack = receiver.track('throughput', (delivered) => delivered.equals(body));
  const throughputEndpoint = await urlEndpoint('bench-throughput', throughputTrack);
  // BENCH_ACCOUNTS=n: the load goes round n accounts' endpoints, all to the same receiver track
  const throughputEndpoints = [throughputEndpoint];
  while (throughputEndpoints.length < accounts) {
    throughputEndpoints.push(await createEndpoint(relay.url, await createAccount(relay.url), { name: 'bench-throughput', destination: { type: 'url', url: `${receiver.url}${throughputTrack.path}` } }));
  }
  log(`delivery: ingesting ${durationS} s to ${accounts > 1 ? `${accounts} accounts' endpoints` : 'an endpoint'} with a URL destination`);
  const deliveryCpuBefore = sampleCpu(relayPids);
  const deliveryCost = await costProbe.start('2. stored and delivered');
  const throughputStartMs = performance.now();
  const throughputRun = await runLoad({ url: throughputEndpoint.url, urls: accounts > 1 ? throughputEndpoints.map((e) => e.url) : undefined, connections: CONNECTIONS, durationS, body });
  const ingestEndMs = performance.now();
  const deliveredDuringIngest = throughputTrack.arrivals.size;
  const throughputAcks = acknowledgedIds([throughputRun]);
  log(`delivery: ${deliveredDuringIngest} of ${throughputAcks.ids.size} acknowledged events delivered when ingest ended; waiting for the rest`);
  const throughputWait = await throughputTrack.waitForAll('delivery', throughputAcks.ids, waitLimits);
  const deliveryCpu = cpuPerEvent(deliveryCpuBefore, sampleCpu(relayPids), relayPids, throughputWait.delivered);
  const deliveryPhase: CostPhase = await deliveryCost.stop(throughputWait.delivered);
  const whileDelivering = figures(throughputRun.result);
  const deliverySpanS = (throughputWait.atMs - throughputStartMs) / 1000;
  const deliveriesPerSecond = deliverySpanS > 0 ? throughputWait.delivered / deliverySpanS : 0;
  const ingestSpanS = (ingestEndMs - throughputStartMs) / 1000;
  const deliveriesPerSecondDuringIngest = deliveredDuringIngest / ingestSpanS;
  const drainS = Math.max(0, (throughputWait.atMs - ingestEndMs) / 1000);
  const ratio = ingest.requestsPerSecond > 0 ? deliveriesPerSecond / ingest.requestsPerSecond : 0;

  // 2b. Fan-out: the same load to an endpoint with three URL destinations.
  const fanTracks = Array.from({ length: FAN_OUT }, (_, i) => receiver.track(`fan-${i}`, (delivered) => delivered.equals(body)));
  const fanEndpoint = await urlEndpoint('bench-fan-out', fanTracks[0]!);
  for (const track of fanTracks.slice(1)) await addDestination(relay.url, apiKey, fanEndpoint.id, { destination: { type: 'url', url: `${receiver.url}${track.path}` } });
  log(`fan-out: ingesting ${durationS} s to an endpoint with ${FAN_OUT} URL destinations`);
  const fanStartMs = performance.now();
  const fanRun = await runLoad({ url: fanEndpoint.url, connections: CONNECTIONS, durationS, body });
  const fanAcks = acknowledgedIds([fanRun]);
  const fanWaits: WaitOutcome[] = [];
  for (const [i, track] of fanTracks.entries()) fanWaits.push(await track.waitForAll(`fan-out destination ${i}`, fanAcks.ids, waitLimits));
  const fanDelivered = fanWaits.reduce((sum, wait) => sum + wait.delivered, 0);
  const fanSpanS = (Math.max(...fanWaits.map((wait) => wait.atMs)) - fanStartMs) / 1000;
  const fanDeliveriesPerSecond = fanSpanS > 0 ? fanDelivered / fanSpanS : 0;
  const fanShare = deliveriesPerSecond > 0 ? fanDeliveriesPerSecond / deliveriesPerSecond : 0;
  const fanMissing = fanWaits.flatMap((wait) => wait.missing);

  // 3. Latency at a steady rate well under saturation.
  const latencyBodies = new Map<number, Buffer>();
  const latencyTrack = receiver.track('latency', (delivered) => {
    try {
      const seq: unknown = JSON.parse(delivered.toString('utf8')).seq;
      return typeof seq === 'number' && latencyBodies.get(seq)?.equals(delivered) === true;
    } catch {
      return false;
    }
  });
  const latencyEndpoint = await urlEndpoint('bench-latency', latencyTrack);
  const warmupMissing = warmupWait?.missing ?? [];
  const backlogAtLatencyStart = warmupMissing.length + throughputWait.missing.length;
  log(`latency: ${latencyRate} events/s for ${latencyS} s`);
  // Each body carries its sequence number and send time and is kept, so the receiver
  // can check it arrived byte-exact.
  const paced = await runPaced({
    url: latencyEndpoint.url,
    ratePerS: latencyRate,
    durationS: latencyS,
    connections: LATENCY_CONNECTIONS,
    prepare: (seq) => {
      const sentAtMs = performance.now();
      const body = jsonBody(BODY_SIZE_BYTES, { seq, sent_at_ms: round(performance.timeOrigin + sentAtMs, 3) });
      latencyBodies.set(seq, body);
      return { body, sentAtMs };
    },
  });
  const latencyWait = await latencyTrack.waitForAll('latency', paced.acknowledged.keys(), waitLimits);
  const endToEnd: number[] = [];
  const ingestAnswer: number[] = [];
  for (const [id, sent] of paced.acknowledged) {
    ingestAnswer.push(sent.answeredAtMs - sent.sentAtMs);
    const arrival = latencyTrack.arrivals.get(id);
    if (arrival) endToEnd.push(arrival.firstAtMs - sent.sentAtMs);
  }
  const latency = distribution(endToEnd);
  const answer = distribution(ingestAnswer);
  const achievedRate = paced.sendingMs > 0 ? paced.sent / (paced.sendingMs / 1000) : 0;

  // The denominator of phases 5 and 6: phase 2's load again, right before them, to a URL
  // endpoint (phase 2 ran minutes earlier, and on a shared machine that is another machine).
  let reference: { endpointId: string; track: Track; measured: DeliveryRun } | undefined;
  if (queueTypes.length > 0 || ordered) {
    const track = receiver.track('reference', (delivered) => delivered.equals(body));
    const endpoint = await urlEndpoint('bench-reference', track);
    log(`HTTP reference: ingesting ${durationS} s to an endpoint with a URL destination`);
    reference = { endpointId: endpoint.id, track, measured: await measureDelivery('HTTP reference', track, { url: endpoint.url, connections: CONNECTIONS, durationS, body }, waitLimits) };
  }

  // 5. Queue destinations (BENCH_QUEUES): phase 2's load to an endpoint whose one destination is a broker.
  const queuePhases: QueuePhase[] = [];
  for (const type of queueTypes) queuePhases.push(await measureQueue(type, relay.url, apiKey, body, durationS, waitLimits));
  const measuredQueues = queuePhases.filter((phase) => phase.skipped === null);

  // 6. Ordered delivery (BENCH_ORDERED): one key (a shorter load: its events go one at a
  // time), then ORDERING_KEYS keys from the sender's x-key, round robin.
  let orderedOne: OrderedPhase | undefined;
  let orderedKeys: OrderedPhase | undefined;
  let keyedReference: { endpointId: string; track: Track; measured: DeliveryRun } | undefined;
  if (ordered) {
    const oneTrack = receiver.track('ordered-one-key', (delivered) => delivered.equals(body), { holdMs: orderedHoldMs });
    orderedOne = await measureOrdered('ordered, one key', relay.url, database.url, apiKey, receiver, oneTrack, null, { connections: CONNECTIONS, durationS: orderedOneKeyS, body }, waitLimits);
    const keysTrack = receiver.track('ordered-keys', (delivered) => delivered.equals(body));
    let nextKey = 0;
    const perRequestHeaders = (): Record<string, string> => ({ 'x-key': `key-${nextKey++ % ORDERING_KEYS}` });
    // The same load to an unordered destination first: a header per request makes the load
    // generator (in this process) build every request anew, which costs it half its rate,
    // so the ordered run's denominator is this run, not the HTTP reference.
    const keyedTrack = receiver.track('unordered-keys', (delivered) => delivered.equals(body));
    const keyedEndpoint = await urlEndpoint('bench-unordered-keys', keyedTrack);
    log(`unordered, ${ORDERING_KEYS} keys' headers: ingesting ${durationS} s`);
    keyedReference = { endpointId: keyedEndpoint.id, track: keyedTrack, measured: await measureDelivery(`unordered, ${ORDERING_KEYS} keys' headers`, keyedTrack, { url: keyedEndpoint.url, connections: CONNECTIONS, durationS, body, perRequestHeaders }, waitLimits) };
    orderedKeys = await measureOrdered(`ordered, ${ORDERING_KEYS} keys`, relay.url, database.url, apiKey, receiver, keysTrack, { header: 'x-key' }, { connections: CONNECTIONS, durationS, body, perRequestHeaders }, waitLimits);
  }
  const orderedPhases = [orderedOne, orderedKeys].filter((phase) => phase !== undefined);
  const newPhases = [...(reference ? [reference] : []), ...(keyedReference ? [keyedReference] : []), ...measuredQueues, ...orderedPhases];
  const newPhaseWaits = newPhases.map((phase) => phase.measured);

  const ending = (wait: WaitOutcome): string =>
    wait.ending === 'timeout' ? `after ${deliveryTimeoutMs / 1000} s (BENCH_DELIVERY_TIMEOUT_S)` : wait.ending === 'stalled' ? `after ${stallMs / 1000} s without any delivery to the endpoint (BENCH_STALL_S)` : 'complete';

  // 4. Verification, after a graceful stop (it finishes and records the deliveries in flight).
  log('stopping the relay');
  const relayExit = await relay.stop();
  const workerExit = worker ? await worker.stop() : undefined;
  const relayWarnings = relay.stderrLinesWhileServing();
  // The cost model: each phase's CPU split by the shares of a profiled stand-in relay's
  // repeat of it (cost-model.ts; one process, so not with BENCH_SEPARATE_WORKER).
  const standIn = profiles.args.length > 0 && !worker
    ? await profiledRepeat(database.url, relayEnv, profiles, receiver, body, Math.min(durationS, COST_REPEAT_S), waitLimits)
    : null;
  const storeTable = costTable(storePhase, costProbe.processes, new Map(standIn ? [[relay.pid, standIn.store]] : []));
  const deliveryTable = costTable(deliveryPhase, costProbe.processes, new Map(standIn ? [[relay.pid, standIn.delivery]] : []));
  const deliveringAdds = costDifference('what delivering adds (2 − 1)', deliveryTable, storeTable);
  const tracks = [warmupTrack, throughputTrack, latencyTrack, ...fanTracks, ...newPhases.map((phase) => phase.track)];
  const deliveryEndpointIds = [
    warmupEndpoint.id,
    ...throughputEndpoints.map((e) => e.id),
    latencyEndpoint.id,
    fanEndpoint.id,
    ...newPhases.map((phase) => phase.endpointId),
  ];
  const stored = await storedDeliveries(database.url, deliveryEndpointIds);
  const queueMissing = [...(reference?.measured.wait.missing ?? []), ...measuredQueues.flatMap((phase) => phase.measured.wait.missing)];
  const orderedMissing = orderedPhases.flatMap((phase) => phase.measured.wait.missing);
  const missing = [...warmupMissing, ...throughputWait.missing, ...latencyWait.missing].filter((id) => !tracks.some((track) => track.arrivals.has(id)));
  if (fanMissing.length > 0) missing.push(...new Set(fanMissing));
  // Each new phase's ids count only on its own track (a queue's consumer is not the receiver).
  missing.push(...queueMissing, ...orderedMissing);
  const missingDescribed = missing.length > 0 ? await describeEvents(database.url, missing.slice(0, EXAMPLES)) : [];
  const acknowledgedCount =
    (warmupRun ? acknowledgedIds([warmupRun]).ids.size : 0) + throughputAcks.ids.size + paced.acknowledged.size + fanAcks.ids.size +
    newPhaseWaits.reduce((sum, measured) => sum + measured.acks.size, 0);
  const duplicates = tracks.map((track) => track.duplicates());
  const duplicateIds = duplicates.flatMap((d) => d.ids);
  const duplicateDeliveries = duplicates.reduce((sum, d) => sum + d.extra, 0);
  const deliveredDistinct = tracks.reduce((sum, track) => sum + track.arrivals.size, 0);
  const deliveryRequests = tracks.reduce((sum, track) => sum + track.requests, 0);
  const badBodies = tracks.reduce((sum, track) => sum + track.badBodies, 0);
  const storedRows = Object.values(stored.byStatus).reduce((sum, n) => sum + n, 0);
  const storedUndelivered = storedRows - (stored.byStatus.delivered ?? 0);

  const loadRuns = [...ingestRuns, ...(warmupRun ? [warmupRun] : []), throughputRun, fanRun, ...newPhaseWaits.map((measured) => measured.run)];
  const ingestNon2xx = loadRuns.reduce((sum, run) => sum + run.result.non2xx, 0) + paced.non2xx;
  const ingestErrors = loadRuns.reduce((sum, run) => sum + run.result.errors, 0) + paced.errors;
  const unreadable = acknowledgedIds(loadRuns).unreadable + paced.unreadable;

  const problems: string[] = [];
  if (missing.length > 0) {
    const byPhase: [string, string[]][] = [
      ['warm-up', warmupMissing],
      ['throughput', throughputWait.missing],
      ['latency', latencyWait.missing],
      ['fan-out', fanMissing],
      ...(queueTypes.length > 0 ? [['queues', queueMissing] as [string, string[]]] : []),
      ...(ordered ? [['ordered', orderedMissing] as [string, string[]]] : []),
    ];
    const missingSet = new Set(missing);
    const phases = byPhase.map(([name, ids]) => `${name} ${ids.filter((id) => missingSet.has(id)).length}`).join(', ');
    const endings = [warmupWait, throughputWait, latencyWait, ...fanWaits, ...newPhaseWaits.map((measured) => measured.wait)]
      .filter((wait) => wait && wait.ending !== 'complete')
      .map((wait) => ending(wait!));
    problems.push(`${missing.length} acknowledged event(s) not delivered (${phases}); waits ended ${[...new Set(endings)].join(', ')}; e.g.`);
    problems.push(...missingDescribed.map((line) => `  ${line}`));
  }
  for (const phase of measuredQueues) {
    if (phase.withoutId > 0) problems.push(`${phase.withoutId} message(s) from ${BROKER_NAMES[phase.type]} carried no webhook-id`);
  }
  for (const [name, phase] of [['one key', orderedOne], [`${ORDERING_KEYS} keys`, orderedKeys]] as const) {
    if (!phase || phase.violations.length === 0) continue;
    problems.push(`ordered (${name}): ${phase.violations.length} event(s) arrived after a later event of their key; e.g.`);
    problems.push(...phase.violations.slice(0, EXAMPLES).map((v) => `  key ${JSON.stringify(v.key)}: ${v.id} arrived after ${v.after}`));
  }
  if (forwardFailures > 0) problems.push(`${forwardFailures} forwarded request(s) of the ceiling phase were not answered 2xx`);
  if (badBodies > 0) problems.push(`${badBodies} delivery(ies) carried a body other than the one sent`);
  if (receiver.stray() > 0) problems.push(`${receiver.stray()} request(s) reached the receiver on an unknown path or without webhook-id`);
  if (ingestNon2xx > 0) problems.push(`relay answered ${ingestNon2xx} ingest request(s) with a non-2xx status`);
  if (ingestErrors > 0) problems.push(`relay left ${ingestErrors} ingest request(s) without an answer (connection errors or timeouts)`);
  if (unreadable > 0) problems.push(`${unreadable} 2xx ingest answer(s) without an event id`);
  if (workerExit && workerExit.code !== 0) problems.push(`delivery worker process did not shut down cleanly (exit code ${workerExit.code}, signal ${workerExit.signal})`);
  if (relayExit.code !== 0) problems.push(`relay did not shut down cleanly (exit code ${relayExit.code}, signal ${relayExit.signal}${relayExit.killed ? ', killed after timeout' : ''})`);

  const ceilingShare = ceilingRate > 0 ? deliveriesPerSecond / ceilingRate : 0;
  const ratioPass = ceilingShare >= TARGET_CEILING_SHARE;
  const extraCpu = storeCpu && deliveryCpu ? { postgres: deliveryCpu.postgres - storeCpu.postgres, relay: deliveryCpu.relay - storeCpu.relay } : null;
  const cpuPass = extraCpu !== null && extraCpu.postgres + extraCpu.relay <= TARGET_EXTRA_CPU_MS;
  const fanPass = fanMissing.length === 0 && fanShare >= TARGET_FAN_OUT_SHARE;
  // Percentiles over part of the events (the rest never arrived) cannot pass.
  const latencyPass = latencyRate === DEFAULT_LATENCY_RATE && latency.count > 0 && latency.count === paced.acknowledged.size && latency.p50 < TARGET_LATENCY_P50_MS;
  const httpPerSecond = reference?.measured.perSecond ?? 0;
  const httpShare = (measured: DeliveryRun): number => (httpPerSecond > 0 ? measured.perSecond / httpPerSecond : 0);
  const queuePass = (measured: DeliveryRun): boolean => measured.wait.missing.length === 0 && httpShare(measured) >= TARGET_QUEUE_SHARE;
  // Ordered keys against the same load (x-key headers) to an unordered destination.
  const keysShare = orderedKeys && keyedReference && keyedReference.measured.perSecond > 0 ? orderedKeys.measured.perSecond / keyedReference.measured.perSecond : 0;
  const orderedKeysPass = orderedKeys !== undefined && orderedKeys.measured.wait.missing.length === 0 && orderedKeys.violations.length === 0 && keysShare >= TARGET_ORDERED_KEYS_SHARE;
  // One key: each event's period is the receiver's round trip plus the relay's turnaround.
  const oneKeyRoundTripMs = orderedOne && orderedOne.track.answered > 0 ? orderedOne.track.heldMs / orderedOne.track.answered : Number.NaN;
  const oneKeyTurnaroundMs = orderedOne && orderedOne.track.turnarounds > 0 ? orderedOne.track.turnaroundMs / orderedOne.track.turnarounds : Number.NaN;
  const oneKeyIdealPerSecond = 1000 / oneKeyRoundTripMs;
  const oneKeyIdealShare = orderedOne && Number.isFinite(oneKeyIdealPerSecond) ? orderedOne.measured.perSecond / oneKeyIdealPerSecond : 0;
  const oneKeyPass = orderedOne !== undefined && orderedOne.measured.wait.missing.length === 0 && orderedOne.violations.length === 0 && oneKeyIdealShare >= TARGET_ONE_KEY_IDEAL_SHARE;
  const deliveredLine = (measured: DeliveryRun): string =>
    `${measured.wait.delivered} events delivered in ${measured.spanS.toFixed(2)} s from first ingest to last delivery → ${measured.perSecond.toFixed(1)} deliveries/s` +
    (measured === reference?.measured ? ` (${deliveriesPerSecond > 0 ? (measured.perSecond / deliveriesPerSecond).toFixed(2) : '—'} of phase 2's)` : `, ${httpShare(measured).toFixed(2)} of the HTTP reference's`) +
    (measured.wait.missing.length > 0 ? `; INCOMPLETE: the wait ended ${ending(measured.wait)} with ${measured.wait.missing.length} of ${measured.acks.size} acknowledged events undelivered` : '');
  const widths = [22, 13, 8, 8, 10, 8, 7, 9];
  const out = [
    '',
    `Delivery benchmark: ${CONNECTIONS} connections, ${BODY_SIZE_BYTES}-byte JSON bodies, ${warmupS} s ingest + ${deliveryWarmupS} s delivery warm-up (not counted), ${durationS} s of load per throughput phase, ${latencyRate} events/s for ${latencyS} s for latency`,
    machineLine(loadBefore),
    `Relay database: ${database.description}`,
    ...(code ? [`Relay code: ${code}`] : []),
    `Relay: ${worker ? 'two processes, HOOK_ROLE=api and HOOK_ROLE=worker (BENCH_SEPARATE_WORKER=1)' : 'one process, HOOK_ROLE=all'}, HOOK_DELIVERY_CONCURRENCY=${concurrency ?? 'default'}; receiver in the bench process (shares its CPU with the load generator)${accounts > 1 ? `; phase 2's load goes round ${accounts} accounts (BENCH_ACCOUNTS)` : ''}${process.env.BENCH_DISTRIBUTED === '1' ? '; HOOK_DATABASE_DISTRIBUTED=citus' : ''}`,
    '',
    figuresHeader('ingest', widths),
    figuresRow('1. store only', ingest, widths),
    figuresRow('1b. + forwarding', ceilingIngest, widths),
    figuresRow('2. URL destination', whileDelivering, widths),
    figuresRow(`2b. ${FAN_OUT} destinations`, figures(fanRun.result), widths),
    ...(reference ? [figuresRow('5. HTTP reference', figures(reference.measured.run.result), widths)] : []),
    ...measuredQueues.map((phase) => figuresRow(`5. ${phase.type} destination`, figures(phase.measured.run.result), widths)),
    ...(orderedOne ? [figuresRow('6. ordered, 1 key', figures(orderedOne.measured.run.result), widths)] : []),
    ...(keyedReference ? [figuresRow(`6. unordered, x-key headers`, figures(keyedReference.measured.run.result), widths)] : []),
    ...(orderedKeys ? [figuresRow(`6. ordered, ${ORDERING_KEYS} keys`, figures(orderedKeys.measured.run.result), widths)] : []),
    '',
    `1b. ceiling: the relay's send path (sign, pooled POST, answer read) with no database forwards ${forwardAloneRate.toFixed(1)}/s alone${sendCpuMs === null ? '' : `, at ${sendCpuMs.toFixed(3)} ms of its CPU a delivery`};`,
    `   store-only ingest with one such delivery per acknowledged event: ${forwardCredited.ok} delivered in ${ceilingSpanS.toFixed(2)} s → ${ceilingRate.toFixed(1)} deliveries/s,`,
    `   a queue that costs nothing: ratio ceiling on this machine ${ceilingRatio.toFixed(2)}`,
    `2. delivery: ${throughputWait.delivered} events delivered in ${deliverySpanS.toFixed(2)} s from first ingest to last delivery → ${deliveriesPerSecond.toFixed(1)} deliveries/s`,
    ...(throughputWait.missing.length > 0
      ? [`   INCOMPLETE: the wait ended ${ending(throughputWait)} with ${throughputWait.missing.length} of ${throughputAcks.ids.size} acknowledged events undelivered; the rate is over what arrived`]
      : []),
    `   while ingesting: ${deliveriesPerSecondDuringIngest.toFixed(1)} deliveries/s (${deliveredDuringIngest} of ${throughputAcks.ids.size} acknowledged delivered when the ${ingestSpanS.toFixed(1)} s of load ended); backlog ${throughputWait.missing.length > 0 ? 'not drained' : `drained in ${drainS.toFixed(2)} s`}`,
    `   ratio (deliveries/s ÷ store-only ingest req/s): ${ratio.toFixed(2)}, ${ceilingRatio > 0 ? (ratio / ceilingRatio).toFixed(2) : '—'} of the ceiling`,
    ...(storeCpu && deliveryCpu
      ? [
        `   CPU per event (user + system, /proc): stored only: PostgreSQL ${storeCpu.postgres.toFixed(3)} ms, relay ${storeCpu.relay.toFixed(3)} ms; stored and delivered: PostgreSQL ${deliveryCpu.postgres.toFixed(3)} ms, relay ${deliveryCpu.relay.toFixed(3)} ms`,
        `   (delivering adds PostgreSQL ${(deliveryCpu.postgres - storeCpu.postgres).toFixed(3)} ms = ${(deliveryCpu.postgres / storeCpu.postgres - 1).toFixed(2)}× storing's, relay ${(deliveryCpu.relay - storeCpu.relay).toFixed(3)} ms = ${(deliveryCpu.relay / storeCpu.relay - 1).toFixed(2)}×)`,
      ]
      : []),
    ...costLines(storeTable),
    ...costLines(deliveryTable),
    ...costLines(deliveringAdds),
    `2b. fan-out: ${fanDelivered} deliveries (${fanAcks.ids.size} events × ${FAN_OUT} destinations) in ${fanSpanS.toFixed(2)} s → ${fanDeliveriesPerSecond.toFixed(1)} deliveries/s, ${fanShare.toFixed(2)} of phase 2's one-destination deliveries/s`,
    `3. latency at ${achievedRate.toFixed(1)} events/s (${paced.sent} sent, ${paced.acknowledged.size} acknowledged), ingest send → arrival at the receiver:`,
    ...(backlogAtLatencyStart > 0 ? [`   (started with ${backlogAtLatencyStart} undelivered events of the earlier phases still queued: not an unsaturated relay)`] : []),
    latency.count === 0
      ? `   end-to-end: no delivery arrived; the wait ended ${ending(latencyWait)} (ingest answer alone: p50 ${ms(answer.p50)} ms, p99 ${ms(answer.p99)} ms)`
      : `   end-to-end p50 ${ms(latency.p50)} ms, p90 ${ms(latency.p90)} ms, p99 ${ms(latency.p99)} ms, max ${ms(latency.max)} ms${latency.count < paced.acknowledged.size ? ` over the ${latency.count} delivered in time` : ''} (ingest answer alone: p50 ${ms(answer.p50)} ms, p99 ${ms(answer.p99)} ms)`,
    ...(reference ? [`5. HTTP reference, phase 2's load again right before phases 5 and 6 (their ratios' denominator): ${deliveredLine(reference.measured)}`] : []),
    ...(queuePhases.length > 0
      ? [
        `5. queue destinations: phase 2's load to an endpoint whose one destination is the broker, consumed by the bench (deliveries/s ÷ the HTTP reference's):`,
        ...queuePhases.map((phase) =>
          phase.skipped !== null ? `   ${phase.type}: skipped, ${phase.skipped}` : `   ${phase.type} (${BROKER_NAMES[phase.type]}): ${deliveredLine(phase.measured)}`),
      ]
      : []),
    ...(orderedOne && orderedKeys
      ? [
        `6. ordered delivery to the receiver (on_give_up skip), deliveries/s ÷ the HTTP reference's (unordered):`,
        `   one key (${orderedOneKeyS} s of load, BENCH_ORDERED_ONE_KEY_S): ${deliveredLine(orderedOne.measured)}`,
        `     receiver's round trip (headers in → answer written${orderedHoldMs > 0 ? `, holding each request ${orderedHoldMs} ms` : ', answering at once'}): mean ${oneKeyRoundTripMs.toFixed(3)} ms → at most ${oneKeyIdealPerSecond.toFixed(1)} deliveries/s; reached ${oneKeyIdealShare.toFixed(3)} of that`,
        `     the relay's turnaround (answer written → the key's next delivery in): mean ${oneKeyTurnaroundMs.toFixed(3)} ms, so a period of ${(oneKeyRoundTripMs + oneKeyTurnaroundMs).toFixed(3)} ms an event`,
        `   unordered with the same x-key headers (the keys' denominator: a header per request slows the load generator): ${deliveredLine(keyedReference!.measured)}`,
        `   ${ORDERING_KEYS} keys (x-key round robin): ${deliveredLine(orderedKeys.measured)}; ${keysShare.toFixed(2)} of unordered with the same headers`,
        `   order at the receiver (first arrivals in each key's stored order, ordering_seq): one key ${orderedOne.violations.length} violation(s), ${ORDERING_KEYS} keys ${orderedKeys.violations.length} (over ${new Set(orderedKeys.track.keys.values()).size} keys)`,
      ]
      : []),
    `4. events acknowledged to delivering endpoints: ${acknowledgedCount}, delivered at least once: ${acknowledgedCount - missing.length}, missing: ${missing.length}`,
    `   delivery requests received: ${deliveryRequests} for ${deliveredDistinct} distinct ids; duplicates: ${duplicateIds.length} id(s) delivered more than once (${duplicateDeliveries} extra deliveries)${duplicateIds.length > 0 ? `, e.g. ${duplicateIds.slice(0, EXAMPLES).join(', ')}` : ''}`,
    `   PostgreSQL after stop: ${storedRows} events (${Object.entries(stored.byStatus).map(([status, n]) => `${status} ${n}`).join(', ') || 'none'}), ${stored.attempts} attempts recorded, ${stored.failedAttempts} failed${stored.failureSamples.length > 0 ? ` (${stored.failureSamples.join('; ')})` : ''}`,
    ...(storedUndelivered > 0 && missing.length === 0 ? [`   (${storedUndelivered} stored event(s) not delivered were still in flight when a load run ended, so their 2xx was never read: not losses)`] : []),
    ...(relayWarnings > 0 ? [`   relay wrote ${relayWarnings} line(s) to stderr at log level warn during the runs (shown above)`] : []),
    `target: deliveries/s ÷ the ceiling's deliveries/s >= ${TARGET_CEILING_SHARE.toFixed(2)} → ${ceilingShare.toFixed(2)} ${ratioPass ? 'PASS' : 'FAIL'}`,
    `target: CPU delivering adds per event, relay + PostgreSQL <= ${TARGET_EXTRA_CPU_MS} ms → ${extraCpu ? `${(extraCpu.relay + extraCpu.postgres).toFixed(3)} ms (relay ${extraCpu.relay.toFixed(3)}, PostgreSQL ${extraCpu.postgres.toFixed(3)}) ${cpuPass ? 'PASS' : 'FAIL'}` : 'not measured (no /proc)'}`,
    `target: fan-out deliveries/s >= ${TARGET_FAN_OUT_SHARE} × one destination's → ${fanShare.toFixed(2)} ${fanPass ? 'PASS' : 'FAIL'}`,
    latencyRate === DEFAULT_LATENCY_RATE
      ? `target: end-to-end p50 < ${TARGET_LATENCY_P50_MS} ms at ${DEFAULT_LATENCY_RATE} events/s → ${latencyPass ? 'PASS' : 'FAIL'}`
      : `target: end-to-end p50 < ${TARGET_LATENCY_P50_MS} ms at ${DEFAULT_LATENCY_RATE} events/s → not judged (BENCH_LATENCY_RATE=${latencyRate})`,
    ...(measuredQueues.length > 0
      ? [`target: each queue type's deliveries/s >= ${TARGET_QUEUE_SHARE.toFixed(2)} × the HTTP reference's → ${measuredQueues.map((phase) => `${phase.type} ${httpShare(phase.measured).toFixed(2)} ${queuePass(phase.measured) ? 'PASS' : 'FAIL'}`).join(', ')}`]
      : []),
    ...(orderedOne && orderedKeys
      ? [
        `target: ordered with ${ORDERING_KEYS} keys, deliveries/s >= ${TARGET_ORDERED_KEYS_SHARE.toFixed(2)} × unordered (same headers) → ${keysShare.toFixed(2)} ${orderedKeysPass ? 'PASS' : 'FAIL'}`,
        `target: one ordered key limited only by the receiver's round trip (deliveries/s >= ${TARGET_ONE_KEY_IDEAL_SHARE.toFixed(2)} × 1/round trip) → ${oneKeyIdealShare.toFixed(3)} ${oneKeyPass ? 'PASS' : 'FAIL'}`,
      ]
      : []),
    ...resultLines(problems, `every acknowledged event delivered${duplicateIds.length > 0 ? ' (some more than once)' : ''}, no failed requests`),
  ];
  writeReport(out, () => ({
    connections: CONNECTIONS,
    body_bytes: BODY_SIZE_BYTES,
    duration_s: durationS,
    warmup_s: warmupS,
    latency_s: latencyS,
    database: serverUrl ? 'server' : 'embedded',
    code: code ?? null,
    delivery_concurrency: concurrency ?? 'default',
    separate_worker: separateWorker,
    ingest: figuresJson(ingest),
    ingest_while_delivering: figuresJson(whileDelivering),
    delivered: throughputWait.delivered,
    delivery_span_s: round(deliverySpanS, 3),
    deliveries_per_second: round(deliveriesPerSecond, 1),
    deliveries_per_second_during_ingest: round(deliveriesPerSecondDuringIngest, 1),
    drain_s: round(drainS, 3),
    throughput_wait: throughputWait.ending,
    latency_wait: latencyWait.ending,
    ratio: round(ratio, 3),
    cpu_ms_per_event_stored: storeCpu && { postgres: round(storeCpu.postgres, 4), relay: round(storeCpu.relay, 4) },
    cpu_ms_per_event_delivered: deliveryCpu && { postgres: round(deliveryCpu.postgres, 4), relay: round(deliveryCpu.relay, 4) },
    ingest_with_forwarding: figuresJson(ceilingIngest),
    forward_alone_per_second: round(forwardAloneRate, 1),
    send_cpu_ms_per_delivery: sendCpuMs === null ? null : round(sendCpuMs, 4),
    ceiling_per_second: round(ceilingRate, 1),
    ceiling_ratio: round(ceilingRatio, 3),
    ceiling_share: round(ceilingShare, 3),
    target_ceiling_share: TARGET_CEILING_SHARE,
    ratio_pass: ratioPass,
    cost: { stored: costJson(storeTable), delivered: costJson(deliveryTable), delivering_adds: costJson(deliveringAdds) },
    extra_cpu_ms_per_event: extraCpu && { postgres: round(extraCpu.postgres, 4), relay: round(extraCpu.relay, 4) },
    cpu_pass: cpuPass,
    fan_out_deliveries_per_second: round(fanDeliveriesPerSecond, 1),
    fan_out_share: round(fanShare, 3),
    fan_out_pass: fanPass,
    latency_rate: round(achievedRate, 1),
    latency: distributionJson(latency),
    ingest_answer: distributionJson(answer),
    target_latency_p50_ms: TARGET_LATENCY_P50_MS,
    latency_pass: latencyPass,
    acknowledged: acknowledgedCount,
    missing: missing.length,
    duplicate_ids: duplicateIds.length,
    duplicate_deliveries: duplicateDeliveries,
    failed_attempts: stored.failedAttempts,
    http_reference: reference ? deliveryRunJson(reference.measured, deliveriesPerSecond > 0 ? reference.measured.perSecond / deliveriesPerSecond : 0) : null,
    queues: Object.fromEntries(queuePhases.map((phase) => [
      phase.type,
      phase.skipped !== null
        ? { skipped: phase.skipped }
        : { ...deliveryRunJson(phase.measured, httpShare(phase.measured)), without_webhook_id: phase.withoutId, pass: queuePass(phase.measured) },
    ])),
    target_queue_share: TARGET_QUEUE_SHARE,
    ordered: orderedOne && orderedKeys
      ? {
        one_key: {
          ...deliveryRunJson(orderedOne.measured, httpShare(orderedOne.measured)),
          load_s: orderedOneKeyS,
          receiver_hold_ms: orderedHoldMs,
          round_trip_ms: round(oneKeyRoundTripMs, 4),
          turnaround_ms: round(oneKeyTurnaroundMs, 4),
          ideal_per_second: round(oneKeyIdealPerSecond, 1),
          ideal_share: round(oneKeyIdealShare, 4),
          order_violations: orderedOne.violations.length,
          pass: oneKeyPass,
        },
        keys: { ...deliveryRunJson(orderedKeys.measured, keysShare), key_count: ORDERING_KEYS, order_violations: orderedKeys.violations.length, pass: orderedKeysPass },
        target_keys_share: TARGET_ORDERED_KEYS_SHARE,
        target_one_key_ideal_share: TARGET_ONE_KEY_IDEAL_SHARE,
      }
      : null,
    problems,
  }));
  return problems.length === 0 ? 0 : 1;
}

await runBench(main);
