import { Migration } from '@mikro-orm/migrations';

/**
 * The delivery queue lives in `event`: automatic attempts counted apart from replays,
 * the trigger of the next attempt, a lease token fencing a claimed delivery, and the
 * indexes the claim statement probes (each endpoint's due events; its leased ones).
 */
export class DeliveryQueue extends Migration {
  override name = '002-delivery-queue';

  override up(): void {
    this.addSql(`alter table event add column auto_attempts integer not null default 0;`);
    this.addSql(`alter table event add column next_trigger text not null default 'auto' check (next_trigger in ('auto', 'replay'));`);
    this.addSql(`alter table event add column lease_id text null;`);
    this.addSql('create index event_due_idx on event (endpoint_id, next_attempt_at, id) where next_attempt_at is not null;');
    this.addSql('create index event_leased_idx on event (endpoint_id) where lease_id is not null;');
  }
}
