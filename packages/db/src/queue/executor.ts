/**
 * The one way the delivery queue's statements run: each is a named statement (one file
 * per statement under ./statements, with its reason), run as a prepared statement, so
 * PostgreSQL plans it once per connection and reuses the plan. The executor travels with
 * the ORM as a MikroORM extension, like the secret box (signing-secrets.ts): no
 * module-level state.
 *
 * Statements that store what was accepted (ingest's events, a replay asked for, a
 * destination made due) run on the ORM's own pool, committed durably. Those that only
 * move deliveries along (claims, results, leases given back: `movesDeliveries`) run on a
 * pool of their own (same server and credentials; its size is the queue's share of the
 * process's connections, orm.ts poolShares), whose sessions are set up for them
 * (QUEUE_SESSION_SETTINGS):
 *
 * - Index plans only. Each of them reaches its rows through an index, and a plan that
 *   scans a table instead costs in proportion to the table. A prepared statement's plan
 *   is kept for the life of its connection, so one made while a table was small (a new
 *   database, or before the statistics caught up with a burst) would otherwise keep
 *   scanning as the table grows: recording results took 3–6 ms a statement at 8,000
 *   deliveries this way, 0.28 ms of PostgreSQL time per delivered event. Settings for
 *   the session cost nothing per statement, where SET LOCAL needed a transaction of its
 *   own (begin, set, statement, commit: four round trips) around each claim.
 * - One plan per statement and connection (plan_cache_mode force_generic_plan): left to
 *   itself PostgreSQL planned the workers' claim again on 84 % of its calls, 3.9 ms of
 *   planning a call, as much as running it (bench:delivery's cost model); the plans above
 *   do not depend on the values.
 * - Commits that do not wait for the WAL flush (synchronous_commit off). What they write
 *   is never the only copy of anything accepted: if the database server itself crashes,
 *   the last fraction of a second of claims and results can be lost, and those deliveries
 *   are then made again (same `webhook-id`), as after a lease runs out; nothing is lost.
 *   A relay process that dies loses nothing this way: the server still writes them.
 */
import type { RawBuilder } from 'kysely';
import pg from 'pg';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { Orm } from '../orm.ts';

/** How the connections of statements that move deliveries along are set up (see above). */
export const QUEUE_SESSION_SETTINGS: Readonly<Record<string, string>> = {
  enable_seqscan: 'off',
  enable_bitmapscan: 'off',
  enable_hashjoin: 'off',
  enable_mergejoin: 'off',
  synchronous_commit: 'off',
  plan_cache_mode: 'force_generic_plan',
};

/** A statement of the queue: its name (the prepared statement's) and its text. */
export interface NamedStatement {
  name: string;
  text: string;
  /** It only moves deliveries along (claims, results, leases): it runs on the queue's own connections (see above). */
  movesDeliveries?: boolean;
}

const EXTENSION = '@hook/queue-executor';

const NAMED_TEXTS = new WeakMap<NamedStatement, string>();

/**
 * The statement's text as sent, with its name in a comment after the first word (a
 * comment before it is not part of the statement PostgreSQL keeps): its statistics
 * (pg_stat_statements, pg_stat_activity) then say which statement a line is, and the
 * benchmarks' cost model (test/bench/cost-model.ts) adds up each one's time by name.
 */
function namedText(statement: NamedStatement): string {
  let text = NAMED_TEXTS.get(statement);
  if (text === undefined) {
    text = statement.text.replace(/^\s*\w+/, (first) => `${first} /* ${statement.name} */`);
    NAMED_TEXTS.set(statement, text);
  }
  return text;
}

/** How many times a statement runs before a row moved meanwhile is its caller's error. */
const MOVED_ROW_TRIES = 5;

/**
 * A row this statement was about to lock or change was moved to another partition by a
 * statement that committed meanwhile: a delivery that finished (from the queue to its
 * history leaf) or was replayed (back), migration 021. PostgreSQL cannot follow a moved row
 * as it follows an updated one, and says so with serialization_failure, which in READ
 * COMMITTED (the only level used here) has no other cause.
 */
function movedMeanwhile(error: unknown): boolean {
  return (error as { code?: string }).code === '40001';
}

export class QueueExecutor {
  readonly #orm: Orm;
  readonly #poolMax: number | undefined;
  #ormPool: Promise<Pool> | undefined;
  #pool: Promise<Pool> | undefined;
  #closed = false;

  /** `poolMax`: most connections of the queue's pool (default: as many as the ORM's). */
  constructor(orm: Orm, poolMax?: number) {
    this.#orm = orm;
    this.#poolMax = poolMax;
  }

  /** The ORM's own pool (for durable statements). */
  #durablePool(): Promise<Pool> {
    this.#ormPool ??= this.#orm.em.getConnection().getNativeClient();
    return this.#ormPool;
  }

  /** The pool of statements that move deliveries along: the ORM's connection settings, with QUEUE_SESSION_SETTINGS. */
  #queuePool(): Promise<Pool> {
    if (this.#closed) return Promise.reject(new Error('the queue executor is closed (its ORM was closed)'));
    this.#pool ??= this.#durablePool().then((ormPool) => {
      const settings = Object.entries(QUEUE_SESSION_SETTINGS).map(([name, value]) => `-c ${name}=${value}`).join(' ');
      const pool = new pg.Pool({
        ...ormPool.options,
        password: ormPool.options.password, // pg-pool keeps it out of the enumerable options
        max: this.#poolMax ?? ormPool.options.max,
        options: [ormPool.options.options, settings].filter(Boolean).join(' '),
      });
      // An idle connection the server dropped must not crash the process; the next query gets a new one.
      pool.on('error', () => undefined);
      return pool;
    });
    return this.#pool;
  }

  /**
   * Runs a named statement with its parameters; returns its rows. A statement that met a
   * delivery another moved to another partition meanwhile (see movedMeanwhile) is run again:
   * it ran alone in its transaction, so it changed nothing.
   */
  async run<Row>(statement: NamedStatement, params: readonly unknown[]): Promise<Row[]> {
    const pool = await (statement.movesDeliveries ? this.#queuePool() : this.#durablePool());
    const text = namedText(statement);
    for (let attempt = 1; ; attempt++) {
      try {
        return (await pool.query<Row & QueryResultRow>({ name: statement.name, text, values: [...params] })).rows;
      } catch (error) {
        if (attempt >= MOVED_ROW_TRIES || !movedMeanwhile(error)) throw error;
      }
    }
  }

  /** Runs `work` in a transaction on one connection of the queue's own pool. */
  async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await (await this.#queuePool()).connect();
    let broken: Error | undefined;
    try {
      await client.query('begin');
      const result = await work(client);
      await client.query('commit');
      return result;
    } catch (error) {
      await client.query('rollback').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /** Closes the queue's pool (with the ORM: see QueueAwareDriver). */
  async close(): Promise<void> {
    this.#closed = true;
    const pool = await this.#pool?.catch(() => undefined);
    this.#pool = undefined;
    await pool?.end();
  }
}

/** Gives the ORM its queue executor, with a pool of at most `poolMax` connections (createOrm does; default: as many as the ORM's). */
export function attachQueueExecutor(orm: Orm, poolMax?: number): QueueExecutor {
  const executor = new QueueExecutor(orm, poolMax);
  orm.config.registerExtension(EXTENSION, () => executor);
  return executor;
}

/** The ORM's queue executor (attached by createOrm; made on first use otherwise). */
export function queueExecutor(orm: Orm): QueueExecutor {
  return orm.config.getExtension<QueueExecutor>(EXTENSION) ?? attachQueueExecutor(orm);
}

/** Closes the ORM's queue executor, if it made one. */
export async function closeQueueExecutor(owner: { config: { getExtension<T>(name: string): T | undefined } }): Promise<void> {
  await owner.config.getExtension<QueueExecutor>(EXTENSION)?.close();
}

/** Runs a named statement of the queue (see QueueExecutor). */
export function runStatement<Row>(orm: Orm, statement: NamedStatement, params: readonly unknown[]): Promise<Row[]> {
  return queueExecutor(orm).run<Row>(statement, params);
}

/**
 * A statement put together with kysely's `sql` template, as the named statement `name` and
 * its parameters, to run with runStatement: for a statement whose text is assembled from
 * its options (ingest's, insert-events.ts), where kysely numbers the parameters. Its text
 * must depend only on `name`, as every named statement's does.
 */
export function composedStatement(orm: Orm, name: string, query: RawBuilder<unknown>): { statement: NamedStatement; params: readonly unknown[] } {
  const compiled = query.compile(orm.em.getKysely());
  return { statement: { name, text: compiled.sql }, params: compiled.parameters };
}
