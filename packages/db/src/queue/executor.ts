/**
 * The one way the delivery queue's statements run: each is a named statement (one file
 * per statement under ./statements, with its reason), run as a prepared statement on the
 * ORM's own connection pool, so PostgreSQL plans it once per connection and reuses the
 * plan. The executor travels with the ORM as a MikroORM extension, like the secret box
 * (signing-secrets.ts): no module-level state.
 */
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { Orm } from '../orm.ts';

/** PostgreSQL planner settings a statement runs with (SET LOCAL, in a transaction of its own). */
export type PlannerSettings = Partial<Record<'enable_bitmapscan' | 'enable_seqscan', 'off'>>;

/** A statement of the queue: its name (the prepared statement's), its text, and any planner settings it needs. */
export interface NamedStatement {
  name: string;
  text: string;
  planner?: PlannerSettings;
}

const EXTENSION = '@hook/queue-executor';

export class QueueExecutor {
  readonly #orm: Orm;
  #pool: Promise<Pool> | undefined;

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  #nativePool(): Promise<Pool> {
    this.#pool ??= this.#orm.em.getConnection().getNativeClient();
    return this.#pool;
  }

  /** Runs a named statement with its parameters; returns its rows. */
  async run<Row>(statement: NamedStatement, params: readonly unknown[]): Promise<Row[]> {
    const pool = await this.#nativePool();
    const query = { name: statement.name, text: statement.text, values: [...params] };
    if (!statement.planner) return (await pool.query<Row & QueryResultRow>(query)).rows;
    // SET LOCAL lasts until the end of the transaction, so the statement gets one of its own.
    return this.transaction(async (client) => {
      await client.query(Object.entries(statement.planner!).map(([setting, value]) => `set local ${setting} = ${value}`).join('; '));
      return (await client.query<Row & QueryResultRow>(query)).rows;
    });
  }

  /** Runs `work` in a transaction on one connection of the pool. */
  async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await (await this.#nativePool()).connect();
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
}

/** The ORM's queue executor (made on first use, then kept with the ORM). */
export function queueExecutor(orm: Orm): QueueExecutor {
  let executor = orm.config.getExtension<QueueExecutor>(EXTENSION);
  if (!executor) {
    const created = new QueueExecutor(orm);
    orm.config.registerExtension(EXTENSION, () => created);
    executor = created;
  }
  return executor;
}

/** Runs a named statement of the queue on the ORM's pool. */
export function runStatement<Row>(orm: Orm, statement: NamedStatement, params: readonly unknown[]): Promise<Row[]> {
  return queueExecutor(orm).run<Row>(statement, params);
}
