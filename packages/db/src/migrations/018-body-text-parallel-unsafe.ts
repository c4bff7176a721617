import { Migration } from '@mikro-orm/migrations';

/**
 * `hook_body_text` (migration 010) was declared `parallel safe`, but its exception block
 * starts a subtransaction, which no process may do while a parallel query runs (the
 * leader included, so `parallel restricted` is not enough): once `event` was large
 * enough for PostgreSQL to plan a payload search (`GET /v1/events?q=`) in parallel, the
 * search failed with "cannot start subtransactions during a parallel operation" (a 500).
 * A query that calls it is now never planned in parallel; a search reads at most
 * EVENT_SEARCH_WINDOW events anyway.
 */
export class BodyTextParallelUnsafe extends Migration {
  override name = '018-body-text-parallel-unsafe';

  override up(): void {
    this.addSql('alter function hook_body_text(bytea) parallel unsafe;');
  }
}
