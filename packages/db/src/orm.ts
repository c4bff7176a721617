import { MikroORM, PostgreSqlDriver, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { ENTITIES } from './entities/index.ts';
import { MIGRATIONS } from './migrations/index.ts';
import { attachQueueExecutor, closeQueueExecutor } from './queue/executor.ts';
import { attachSecretBox } from './signing-secrets.ts';

export interface CreateOrmOptions {
  /** A PostgreSQL connection URL, e.g. `postgres://postgres@127.0.0.1:5432/hook`. */
  databaseUrl: string;
  /** Most connections this process holds open for queries (default 10), shared between the ORM's pool and the delivery queue's (poolShares). */
  poolMax?: number;
  /** Log every SQL statement through `logger`. */
  debug?: boolean;
  logger?: (message: string) => void;
  /**
   * HOOK_SECRET_KEY's 32 bytes: endpoint signing secrets are stored encrypted under it
   * (signing-secrets.ts). Without it, secrets stored in plaintext are still read, but
   * none can be stored or decrypted.
   */
  secretKey?: Buffer;
}

export type Orm = MikroORM;

/** The table where the MikroORM migrator records each applied migration by name. */
export const MIGRATIONS_TABLE = 'hook_migrations';

/** PostgreSQL's driver, closing the queue's own pool (queue/executor.ts) with the ORM's. */
class QueueAwareDriver extends PostgreSqlDriver {
  override async close(force?: boolean): Promise<void> {
    await closeQueueExecutor(this);
    await super.close(force);
  }
}

/**
 * How a process's connections are shared: half (rounded up) for the statements that
 * move deliveries along (queue/executor.ts: claims, results, leases), the rest for the
 * ORM's pool (the API's queries and ingest's inserts); at least one each.
 */
export function poolShares(poolMax = 10): { orm: number; queue: number } {
  const queue = Math.max(1, Math.ceil(poolMax / 2));
  return { orm: Math.max(1, poolMax - queue), queue };
}

/** The ORM configuration shared by the app and its tests. */
export function ormConfig(options: CreateOrmOptions): Options {
  return {
    driver: QueueAwareDriver,
    clientUrl: options.databaseUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    migrations: {
      migrationsList: MIGRATIONS,
      tableName: MIGRATIONS_TABLE,
      snapshot: false,
      snapshotOnMigrate: false,
      silent: true,
      // Each migration in its own transaction, not all in one: 019 runs outside any
      // transaction (concurrent index builds, a short swap it retries on lock timeouts).
      allOrNothing: false,
    },
    pool: { min: 0, max: poolShares(options.poolMax).orm },
    // node-postgres waits forever for a connection by default: a database host that drops
    // packets (rather than refusing) would hang requests instead of answering 503. TCP
    // keep-alive also notices connections that died silently.
    driverOptions: { connectionTimeoutMillis: 5000, keepAlive: true, keepAliveInitialDelayMillis: 10_000 },
    debug: options.debug ?? false,
    logger: options.logger ?? (() => undefined),
    // Every timestamp is UTC; the API renders them with a trailing Z.
    timezone: '+00:00',
    forceUtcTimezone: true,
    ensureDatabase: false,
    allowGlobalContext: false,
  };
}

/**
 * Connects the ORM. The caller owns the result and must `close()` it on shutdown; there
 * is no module-level instance.
 */
export async function createOrm(options: CreateOrmOptions): Promise<Orm> {
  const orm = await MikroORM.init(ormConfig(options));
  attachQueueExecutor(orm, poolShares(options.poolMax).queue);
  if (options.secretKey) attachSecretBox(orm, options.secretKey);
  return orm;
}

/** Applies every pending migration, each in its own transaction. Returns the names applied. */
export async function migrateToLatest(orm: Orm): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((migration) => migration.name);
}
