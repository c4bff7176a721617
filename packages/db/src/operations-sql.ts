/** What the relay's readiness probe and metrics read from the database (docs/deployment.md#operations). */
import { sql } from 'kysely';
import { MIGRATIONS } from './migrations/index.ts';
import { MIGRATIONS_TABLE, type Orm } from './orm.ts';
import { DELIVERY_OPEN, LEASE_FREE } from './queue/statements/claimed-columns.ts';

/**
 * Names of the migrations this code ships that the database has not applied, oldest
 * first (empty: the schema is current). Reads the table the MikroORM migrator keeps;
 * a database without that table has none applied.
 */
export async function pendingMigrations(orm: Orm): Promise<string[]> {
  const db = orm.em.getKysely();
  const { rows: [table] } = await sql<{ name: string | null }>`select to_regclass(${MIGRATIONS_TABLE}::text)::text as name`.execute(db);
  if (!table?.name) return MIGRATIONS.map((migration) => migration.name);
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(MIGRATIONS_TABLE)}`.execute(db);
  const applied = new Set(rows.map((row) => row.name));
  return MIGRATIONS.map((migration) => migration.name).filter((name) => !applied.has(name));
}

export interface QueueStatus {
  /** URL deliveries due for an automatic attempt (or a queued replay) that no worker holds a live lease on. */
  due: number;
  /** Seconds the longest-waiting of those has been due (0 when none is). */
  oldestDueSeconds: number;
}

/**
 * The delivery queue's backlog to URL destinations, for the metrics endpoint. Only rows
 * with a next_attempt_at are in the queue, and delivery_due_idx is partial on exactly
 * those, so the scan reads the backlog (a bitmap or index scan of that index), never the
 * stored history. Paused destinations' due deliveries count: they are the backlog a
 * resume releases. (`cli` deliveries wait for a listener, so they are not a backlog.)
 */
export async function readQueueStatus(orm: Orm): Promise<QueueStatus> {
  const { rows: [row] } = await sql<{ due: string; oldest_due_seconds: number | null }>`${sql.raw(QUEUE_STATUS_SQL)}`.execute(orm.em.getKysely());
  return { due: Number(row?.due ?? 0), oldestDueSeconds: Math.max(0, row?.oldest_due_seconds ?? 0) };
}

/** readQueueStatus's statement, without parameters (text, exported for the test that checks its plan). */
export const QUEUE_STATUS_SQL = `
    select count(*) as due, extract(epoch from now() - min(l.next_attempt_at))::float8 as oldest_due_seconds
    from delivery l join destination d on d.id = l.destination_id and d.type = 'url'
    where l.next_attempt_at is not null and l.next_attempt_at <= now()
      and ${DELIVERY_OPEN}
      and ${LEASE_FREE}`;
