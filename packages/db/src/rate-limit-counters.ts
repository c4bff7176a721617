/**
 * Rate-limit counters shared by every relay process on one database (migration
 * 015-rate-limit-counters): the relay's per-API-key and per-address limits count here, so a
 * key gets its limit once however many processes answer it. Plain SQL, one statement per
 * function: nothing but these functions reads or writes the table.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** A key's count in its current window, once this request is counted. */
export interface RateLimitCount {
  /** Requests counted in the window, this one included. */
  count: number;
  /** Milliseconds until the window ends and the count starts again. */
  ttlMs: number;
}

/**
 * Counts one request of `key` and returns the window's count: one statement, one round
 * trip, one row lock. The window starts at the key's first request and lasts `windowMs`;
 * the first request after it ends starts a new one (count 1), so a row left behind by an
 * idle key is simply reused. Concurrent requests of one key queue on the row's lock for
 * the moment of the update, so no count is lost between processes. The database's clock
 * decides when windows end, so processes whose clocks differ still agree.
 */
export async function countRateLimitedRequest(em: EntityManager, key: string, windowMs: number): Promise<RateLimitCount> {
  const rows = await em.getConnection().execute<{ count: number; ttl_ms: number }[]>(
    `insert into rate_limit_counter as c (key, count, expires_at)
     values (?, 1, now() + make_interval(secs => ?))
     on conflict (key) do update set
       count = case when c.expires_at <= now() then 1 else c.count + 1 end,
       expires_at = case when c.expires_at <= now() then excluded.expires_at else c.expires_at end
     returning count, ceil(extract(epoch from expires_at - now()) * 1000)::integer as ttl_ms`,
    [key, windowMs / 1000],
  );
  const row = rows[0]!;
  return { count: row.count, ttlMs: row.ttl_ms };
}

/**
 * Removes the rows whose window has ended. Correctness never depends on it (an expired
 * row is reset by the next request of its key); it keeps the table to the keys seen within
 * the last window. The table holds one row per such key, so a sequential scan is cheap and
 * the counters need no index on `expires_at` (which would cost every increment an index write).
 */
export async function pruneRateLimitCounters(em: EntityManager): Promise<number> {
  const rows = await em.getConnection().execute<{ removed: number }[]>(
    'with gone as (delete from rate_limit_counter where expires_at <= now() returning 1) select count(*)::integer as removed from gone',
  );
  return rows[0]?.removed ?? 0;
}
