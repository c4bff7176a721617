/**
 * Read replicas (docs/deployment.md#read-replicas): reads that tolerate a little lag
 * (event lists and search, usage) may go to PostgreSQL streaming replicas; everything
 * else stays on the primary.
 *
 * Every check (a fifth of the lag bound, between 100 ms and 1 s) reads the primary's
 * WAL position and then each replica's replayed position. A replica that has replayed
 * the position the primary had at moment T holds every commit made before T, so each
 * replica carries `caughtUpToMs`: the latest such moment known. From it follow both
 * rules a replica must pass to serve a read:
 *
 * - bounded staleness: it holds every commit older than the lag bound
 *   (`caughtUpToMs >= now - maxLagMs`); a replica further behind, or not answering, is
 *   skipped and the read goes to the primary;
 * - read-your-writes: it holds the account's last write made through this process
 *   (`caughtUpToMs > writtenAtMs`). Writes are noted when their answer is sent, after
 *   they committed, so a check that began later has a primary position past them.
 *
 * Nothing is asked of the database per request: a read costs a map lookup.
 */
import { MikroORM, type EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { ormConfig, poolShares, type Orm } from './orm.ts';
import { attachSecretBox } from './signing-secrets.ts';

/** A WAL position (`pg_lsn` text such as `16/B374D848`) as a number that orders like the position. */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(text);
  if (!match) throw new Error(`not a WAL position: ${JSON.stringify(text)}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** The primary's WAL position, read by a query sent at `atMs` (this process's monotonic clock): it is past every commit made before `atMs`. */
export interface PrimaryPosition {
  atMs: number;
  lsn: bigint;
}

export interface ReplicaProgress {
  /** The latest moment before which the replica holds every commit, or null when it holds none of the positions known. */
  caughtUpToMs: number | null;
  /** How far behind it is: 0 once it has replayed the newest position, else the time since `caughtUpToMs` (a bound from above). */
  lagMs: number;
}

/**
 * Where a replica stands, from the primary's recent positions (oldest first), the WAL
 * position the replica reported at `measuredAtMs`, and what was known before (replay
 * only moves forward).
 */
export function replicaProgress(positions: readonly PrimaryPosition[], replayLsn: bigint, measuredAtMs: number, previousCaughtUpToMs: number | null): ReplicaProgress {
  let caughtUpToMs = previousCaughtUpToMs;
  for (const position of positions) {
    if (position.lsn <= replayLsn && (caughtUpToMs === null || position.atMs > caughtUpToMs)) caughtUpToMs = position.atMs;
  }
  const newest = positions.at(-1);
  if (newest !== undefined && replayLsn >= newest.lsn) return { caughtUpToMs, lagMs: 0 };
  return { caughtUpToMs, lagMs: Math.max(0, measuredAtMs - (caughtUpToMs ?? positions[0]?.atMs ?? measuredAtMs)) };
}

/** Why a lag-tolerant read went to the primary: the account wrote lately, every replica is too far behind, none answers, or the chosen one failed during the read. */
export type PrimaryReadReason = 'own_write' | 'lagging' | 'down' | 'replica_failed';

export interface ReplicaView {
  up: boolean;
  caughtUpToMs: number | null;
}

/**
 * The replica that may serve a lag-tolerant read: one that answered its last check,
 * holds every commit older than `maxLagMs`, and holds the account's last write
 * (`writtenAtMs`, when this process saw one). Replicas are tried from `start` on, so
 * reads spread over them. Otherwise the most telling reason to read the primary.
 */
export function chooseReplica(
  replicas: readonly ReplicaView[],
  options: { nowMs: number; maxLagMs: number; writtenAtMs: number | undefined; start: number },
): { index: number } | { reason: Exclude<PrimaryReadReason, 'replica_failed'> } {
  let reason: Exclude<PrimaryReadReason, 'replica_failed'> = 'down';
  for (let offset = 0; offset < replicas.length; offset++) {
    const index = (options.start + offset) % replicas.length;
    const { up, caughtUpToMs } = replicas[index]!;
    if (!up || caughtUpToMs === null) continue;
    if (caughtUpToMs < options.nowMs - options.maxLagMs) {
      if (reason === 'down') reason = 'lagging';
      continue;
    }
    if (options.writtenAtMs !== undefined && caughtUpToMs <= options.writtenAtMs) {
      reason = 'own_write';
      continue;
    }
    return { index };
  }
  return { reason };
}

/** The check interval for a lag bound: a fifth of it, between 100 ms and 1 s, so a caught-up replica never looks older than the bound between two checks. */
export function replicaCheckIntervalMs(maxLagMs: number): number {
  return Math.min(1000, Math.max(100, Math.floor(maxLagMs / 5)));
}

/** `host:port/database` of a connection URL: how a replica is named in logs and metrics (never its credentials). */
export function replicaName(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
}

export interface ReadReplicasOptions {
  /** The replicas' PostgreSQL URLs (HOOK_DATABASE_READ_URL). */
  urls: readonly string[];
  /** The primary's ORM: replicas are measured against its WAL position. */
  primary: Orm;
  /** A replica that lacks commits older than this (ms) is skipped (HOOK_DATABASE_READ_MAX_LAG_MS). */
  maxLagMs: number;
  /** Time between two checks, in ms. Default replicaCheckIntervalMs(maxLagMs). */
  checkIntervalMs?: number;
  /** Connections to each replica, as createOrm's poolMax: the ORM's share of it (default 10 → 5). */
  poolMax?: number;
  /** HOOK_SECRET_KEY's bytes, so a replica's EntityManager reads what the primary's does. */
  secretKey?: Buffer;
  /** Told when a replica starts or stops being usable (its first check included), with the error that stopped it. */
  onReplicaChange?: (change: { replica: string; up: boolean; error?: unknown }) => void;
  /** This process's monotonic clock in ms (tests pass their own). Default performance.now. */
  now?: () => number;
}

/** One replica as metrics show it. */
export interface ReplicaStatus {
  replica: string;
  /** Its last check answered, as a standby. */
  up: boolean;
  /** Its lag at its last check, in seconds; null while it does not answer. */
  lagSeconds: number | null;
}

/** Where one lag-tolerant read goes: a replica's EntityManager, or the primary and why. */
export type ReadTarget = { replica: string; em: EntityManager } | { replica: null; reason: PrimaryReadReason };

interface Replica {
  readonly name: string;
  readonly orm: Orm;
  up: boolean;
  caughtUpToMs: number | null;
  lagMs: number;
  /** Whether onReplicaChange has heard of it yet: its first check is reported whatever it found. */
  reported: boolean;
}

class NotAStandbyError extends Error {
  constructor(replica: string) {
    super(`${replica} is not a standby (pg_is_in_recovery() is false): a promoted replica or the primary itself; reads stay off it until it replays WAL again`);
    this.name = 'NotAStandbyError';
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The replicas of one process: their ORMs, their measured progress, and the accounts' last writes. Close it on shutdown. */
export class ReadReplicas {
  readonly #replicas: Replica[];
  readonly #primary: Orm;
  readonly #maxLagMs: number;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #onReplicaChange: NonNullable<ReadReplicasOptions['onReplicaChange']>;
  /** The primary's positions, oldest first, as far back as the lag bound (and two checks) reaches. */
  #positions: PrimaryPosition[] = [];
  /** Account id → when this process last answered a write of it (monotonic ms); forgotten past the lag bound. */
  readonly #writes = new Map<string, number>();
  #next = 0;
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;
  #closed = false;

  private constructor(options: ReadReplicasOptions, replicas: Replica[]) {
    this.#replicas = replicas;
    this.#primary = options.primary;
    this.#maxLagMs = options.maxLagMs;
    this.#intervalMs = options.checkIntervalMs ?? replicaCheckIntervalMs(options.maxLagMs);
    this.#now = options.now ?? (() => performance.now());
    this.#onReplicaChange = options.onReplicaChange ?? (() => undefined);
  }

  /**
   * Makes an ORM per replica and checks them once; replicas that do not answer yet are
   * skipped until a check finds them. Never fails for a replica being down.
   */
  static async connect(options: ReadReplicasOptions): Promise<ReadReplicas> {
    const names = options.urls.map(replicaName);
    const replicas = await Promise.all(options.urls.map(async (url, index): Promise<Replica> => {
      const config = ormConfig({ databaseUrl: url });
      const orm = await MikroORM.init({ ...config, pool: { min: 0, max: poolShares(options.poolMax).orm } });
      if (options.secretKey) attachSecretBox(orm, options.secretKey);
      // The same server named twice gets an index, so its metrics stay apart.
      const name = names.indexOf(names[index]!) === index ? names[index]! : `${names[index]}#${index + 1}`;
      return { name, orm, up: false, caughtUpToMs: null, lagMs: 0, reported: false };
    }));
    const reads = new ReadReplicas(options, replicas);
    await reads.check();
    reads.#schedule();
    return reads;
  }

  /** Where a lag-tolerant read for `accountId` goes now. */
  route(accountId: string | undefined): ReadTarget {
    const choice = chooseReplica(this.#replicas, {
      nowMs: this.#now(),
      maxLagMs: this.#maxLagMs,
      writtenAtMs: accountId === undefined ? undefined : this.#writes.get(accountId),
      start: this.#next,
    });
    this.#next = (this.#next + 1) % Math.max(1, this.#replicas.length);
    if ('reason' in choice) return { replica: null, reason: choice.reason };
    const replica = this.#replicas[choice.index]!;
    return { replica: replica.name, em: replica.orm.em.fork() as EntityManager };
  }

  /** The account's write has committed (its answer is about to be sent): its reads stay on the primary until a replica holds it. */
  noteWrite(accountId: string): void {
    this.#writes.set(accountId, this.#now());
  }

  /** A read failed on `replica`: it serves no more reads until a check finds it answering again. */
  readFailed(replica: string, error: unknown): void {
    const found = this.#replicas.find((candidate) => candidate.name === replica);
    if (found) this.#setUp(found, false, error);
  }

  /** Each replica's state at its last check. */
  status(): ReplicaStatus[] {
    return this.#replicas.map((replica) => ({ replica: replica.name, up: replica.up, lagSeconds: replica.up ? replica.lagMs / 1000 : null }));
  }

  /** Measures every replica against the primary's position now (the timer does this every interval). */
  check(): Promise<void> {
    this.#checking ??= this.#measure().finally(() => (this.#checking = undefined));
    return this.#checking;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#checking;
    await Promise.all(this.#replicas.map((replica) => replica.orm.close()));
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.check().finally(() => this.#schedule());
    }, this.#intervalMs);
    this.#timer.unref();
  }

  async #measure(): Promise<void> {
    const timeoutMs = Math.max(1000, 2 * this.#intervalMs);
    const atMs = this.#now();
    try {
      const { rows: [row] } = await withTimeout(sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(this.#primary.em.fork().getKysely()), timeoutMs, 'the primary');
      this.#positions.push({ atMs, lsn: parseLsn(row!.lsn) });
    } catch {
      // Without the primary's position the replicas are measured against the last ones
      // known: their caughtUpToMs stops moving, so they age past the bound.
    }
    const oldestKept = atMs - this.#maxLagMs - 2 * this.#intervalMs;
    while (this.#positions.length > 1 && this.#positions[0]!.atMs < oldestKept) this.#positions.shift();
    await Promise.all(this.#replicas.map(async (replica) => {
      try {
        const { rows: [row] } = await withTimeout(
          sql<{ standby: boolean; lsn: string | null }>`select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as lsn`.execute(replica.orm.em.fork().getKysely()),
          timeoutMs,
          replica.name,
        );
        if (!row?.standby || row.lsn === null) throw new NotAStandbyError(replica.name);
        const progress = replicaProgress(this.#positions, parseLsn(row.lsn), this.#now(), replica.caughtUpToMs);
        replica.caughtUpToMs = progress.caughtUpToMs;
        replica.lagMs = progress.lagMs;
        this.#setUp(replica, true);
      } catch (error) {
        this.#setUp(replica, false, error);
      }
    }));
    // A write older than the bound is held by every replica that may serve a read.
    const forgetBefore = this.#now() - this.#maxLagMs;
    for (const [accountId, writtenAtMs] of this.#writes) {
      if (writtenAtMs < forgetBefore) this.#writes.delete(accountId);
    }
  }

  #setUp(replica: Replica, up: boolean, error?: unknown): void {
    const changed = replica.up !== up || !replica.reported;
    replica.up = up;
    replica.reported = true;
    if (changed) this.#onReplicaChange({ replica: replica.name, up, ...(error === undefined ? {} : { error }) });
  }
}
