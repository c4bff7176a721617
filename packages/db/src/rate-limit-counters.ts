/**
 * Rate-limit counters shared by every relay process on one database (migration
 * 015-rate-limit-counters): the relay's per-API-key and per-address limits count here, so a
 * key gets its limit once however many processes answer it. Plain SQL, one statement per
 * function: nothing but these functions reads or writes the table.
 */
import { sql } from 'kysely';
import type { Orm } from './orm.ts';
import { runStatement, type NamedStatement } from './queue/executor.ts';

/** A key's count in its current window, once this request is counted. */
export interface RateLimitCount {
  /** Requests counted in the window, this one included. */
  count: number;
  /** Milliseconds until the window ends and the count starts again. */
  ttlMs: number;
}

/**
 * Counts one request of `key` (the statement below): one statement, one round trip, one
 * row lock. The window starts at the key's first request and lasts `$2` seconds; the
 * first request after it ends starts a new one (count 1), so a row left behind by an idle
 * key is simply reused. Concurrent requests of one key queue on the row's lock for the
 * moment of the update, so no count is lost between processes. The database's clock
 * decides when windows end, so processes whose clocks differ still agree.
 * What is left of the window is measured from the moment of the answer (clock_timestamp()),
 * not from the transaction's start (now()): a request that waited on the row's lock behind
 * one that started the window would otherwise be told a little more than the whole window.
 *
 * It runs on every limited API request, so it goes through the named-statement executor
 * (queue/executor.ts) on the ORM's pool: prepared once per connection, no ORM layer per
 * call. The table is unlogged, so the commit waits for no WAL flush.
 */
const COUNT_REQUEST: NamedStatement = {
  name: 'rate_limit_count',
  text: `insert into rate_limit_counter as c (key, count, expires_at)
     values ($1, 1, now() + make_interval(secs => $2))
     on conflict (key) do update set
       count = case when c.expires_at <= now() then 1 else c.count + 1 end,
       expires_at = case when c.expires_at <= now() then excluded.expires_at else c.expires_at end
     returning count, greatest(1, round(extract(epoch from expires_at - clock_timestamp()) * 1000))::integer as ttl_ms`,
};

/** Counts one request of `key` in its window of `windowMs` (COUNT_REQUEST) and returns the window's count. */
export async function countRateLimitedRequest(orm: Orm, key: string, windowMs: number): Promise<RateLimitCount> {
  const [row] = await runStatement<{ count: number; ttl_ms: number }>(orm, COUNT_REQUEST, [key, windowMs / 1000]);
  return { count: row!.count, ttlMs: row!.ttl_ms };
}

/**
 * Removes the rows whose window has ended. Correctness never depends on it (an expired
 * row is reset by the next request of its key); it keeps the table to the keys seen within
 * the last window. The table holds one row per such key, so a sequential scan is cheap and
 * the counters need no index on `expires_at` (which would cost every increment an index write).
 */
export async function pruneRateLimitCounters(orm: Orm): Promise<number> {
  const { rows } = await sql<{ removed: number }>`
    with gone as (delete from rate_limit_counter where expires_at <= now() returning 1) select count(*)::integer as removed from gone`.execute(orm.em.fork().getKysely());
  return rows[0]?.removed ?? 0;
}
