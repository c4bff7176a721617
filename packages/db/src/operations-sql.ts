/** What the relay's readiness probe and metrics read from the database (docs/deployment.md#operations). */
import { CompiledQuery } from 'kysely';
import { MIGRATIONS } from './migrations/index.ts';
import { MIGRATIONS_TABLE, type Orm } from './orm.ts';

async function run<Row>(orm: Orm, text: string, params: readonly unknown[] = []): Promise<Row[]> {
  const result = await orm.em.getKysely().executeQuery<Row>(CompiledQuery.raw(text, [...params]));
  return [...result.rows];
}

/**
 * Names of the migrations this code ships that the database has not applied, oldest
 * first (empty: the schema is current). Reads the table the MikroORM migrator keeps;
 * a database without that table has none applied.
 */
export async function pendingMigrations(orm: Orm): Promise<string[]> {
  const [table] = await run<{ name: string | null }>(orm, 'select to_regclass($1)::text as name', [MIGRATIONS_TABLE]);
  if (!table?.name) return MIGRATIONS.map((migration) => migration.name);
  const rows = await run<{ name: string }>(orm, `select name from ${MIGRATIONS_TABLE}`);
  const applied = new Set(rows.map((row) => row.name));
  return MIGRATIONS.map((migration) => migration.name).filter((name) => !applied.has(name));
}

export interface QueueStatus {
  /** Events due for an automatic delivery (or a queued replay) that no worker holds a live lease on. */
  due: number;
  /** Seconds the longest-waiting of those has been due (0 when none is). */
  oldestDueSeconds: number;
}

/**
 * The delivery queue's backlog, for the metrics endpoint. Only rows with a
 * next_attempt_at are in the queue, and event_due_idx is partial on exactly those, so
 * the scan reads the backlog (a bitmap or index scan of that index), never the stored
 * history. Paused endpoints' due events count: they are the backlog a resume releases.
 */
export async function readQueueStatus(orm: Orm): Promise<QueueStatus> {
  const [row] = await run<{ due: string; oldest_due_seconds: number | null }>(orm, QUEUE_STATUS_SQL);
  return { due: Number(row?.due ?? 0), oldestDueSeconds: Math.max(0, row?.oldest_due_seconds ?? 0) };
}

/** readQueueStatus's statement (exported for the test that checks its plan). */
export const QUEUE_STATUS_SQL = `
    select count(*) as due, extract(epoch from now() - min(e.next_attempt_at))::float8 as oldest_due_seconds
    from event e
    where e.next_attempt_at is not null and e.next_attempt_at <= now()
      and (e.status in ('pending', 'retrying') or e.next_trigger = 'replay')
      and (e.lease_id is null or e.locked_until < now())`;
