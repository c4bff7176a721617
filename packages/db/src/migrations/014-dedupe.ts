import { Migration } from '@mikro-orm/migrations';

/**
 * Duplicates dropped at ingest (docs/sources.md, Duplicates). `endpoint.dedupe` names where
 * a request's key is (a header or a JSON field); `event.dedupe_key` is the key an event was
 * stored under. `event_dedupe` holds one row per (endpoint, key) stored: its primary key is
 * what makes "stored once" exact when relay processes store the same key at the same time
 * (insert-events.ts claims a key with INSERT … ON CONFLICT DO NOTHING in the statement that
 * stores the event). A row lives as long as its event: retention and account deletion
 * remove both. `account_id` lets an account's rows be found without its events.
 */
export class Dedupe extends Migration {
  override name = '014-dedupe';

  override up(): void {
    this.addSql('alter table endpoint add column dedupe jsonb;');
    this.addSql('alter table event add column dedupe_key text;');
    this.addSql(`create table event_dedupe (
      endpoint_id text not null,
      key text not null,
      event_id text not null,
      account_id text not null,
      primary key (endpoint_id, key)
    );`);
    this.addSql('create index event_dedupe_account_idx on event_dedupe (account_id);');
  }
}
