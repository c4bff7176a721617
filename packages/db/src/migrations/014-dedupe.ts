import { Migration } from '@mikro-orm/migrations';

/**
 * Duplicates dropped at ingest (docs/sources.md, Duplicates). `endpoint.dedupe` names where
 * a request's key is (a header or a JSON field); `event.dedupe_key` is the key an event was
 * stored under. A unique index over (endpoint, key), partial so events without a key cost
 * it nothing, is what makes "stored once" exact when relay processes store the same key at
 * the same time: the ingest statement inserts with ON CONFLICT DO NOTHING against it
 * (insert-events.ts). A key lives exactly as long as its event.
 *
 * (Before release this migration made a separate `event_dedupe` table of claims; the index
 * on the event itself does the same with one index entry per keyed event instead of a row
 * and two index entries, and nothing to clean up.)
 */
export class Dedupe extends Migration {
  override name = '014-dedupe';

  override up(): void {
    this.addSql('alter table endpoint add column dedupe jsonb;');
    this.addSql('alter table event add column dedupe_key text;');
    this.addSql('create unique index event_dedupe_key_idx on event (endpoint_id, dedupe_key) where dedupe_key is not null;');
  }
}
