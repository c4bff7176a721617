import { Migration } from '@mikro-orm/migrations';

/**
 * Rate-limit counters shared by every relay process on the database (rate-limit-counters.ts):
 * one row per limited key (an API key's per-minute budget, a client address's signups or
 * playground sessions per hour) holding the requests counted in its current window and
 * when that window ends.
 *
 * UNLOGGED: the counters are written on every API request and are worth nothing after a
 * crash (PostgreSQL empties an unlogged table in crash recovery, so every window starts
 * again, as it did when counts lived in each process's memory), so they skip the WAL.
 * fillfactor 50 leaves room on each page for the next version of its rows: an increment
 * touches no indexed column, so it is a HOT update that needs no index write.
 */
export class RateLimitCounters extends Migration {
  override name = '015-rate-limit-counters';

  override up(): void {
    this.addSql(`
      create unlogged table rate_limit_counter (
        key text primary key,
        count integer not null,
        expires_at timestamptz not null
      ) with (fillfactor = 50);`);
  }
}
