import { Migration } from '@mikro-orm/migrations';

/**
 * One delivery engine for every destination (issue 16, docs/delivery.md):
 * - `destination`: where an endpoint's events go, one or more per endpoint, each with its
 *   own URL or `cli`, signing secret, status, transformation, filter, limits and health.
 *   Each endpoint's destination, secret, transformation and filter move to its first
 *   destination (position 0), whose id is the endpoint's ULID under `dst_`;
 * - `delivery`: the queue, one row per (event, destination), with its own status,
 *   attempts, due time, trigger and lease. Each event's queue state moves to its delivery
 *   to the first destination; an event that waited for `hook listen` (no due time) is
 *   due from when it was received, so the next listener claims it;
 * - `event` keeps the request and how many deliveries it has; its status, attempt count
 *   and due time are its deliveries' (event-summaries.ts, docs/delivery.md#event-status),
 *   so recording a result never rewrites the wide event row. Its queue columns and
 *   their indexes go;
 * - `attempt.destination_id`: which destination the attempt went to.
 *
 * `delivery` has no foreign keys, like `event` (see 001-initial): checking one would lock
 * the parent row on every ingest; `attempt` loses its own for the same reason (below).
 * Destinations cascade from their account.
 */
export class Destinations extends Migration {
  override name = '009-destinations';

  override up(): void {
    this.addSql(`
      create table destination (
        id text primary key,
        account_id text not null references account (id) on delete cascade deferrable initially deferred,
        endpoint_id text not null,
        position integer not null,
        type text not null check (type in ('cli', 'url')),
        url text null,
        secret text not null,
        previous_secret text null,
        previous_secret_expires_at timestamptz null,
        status text not null check (status in ('active', 'paused', 'disabled')),
        transformation_code text null,
        filter jsonb null,
        rate_per_second integer null,
        max_in_flight integer null,
        rate_window_start timestamptz null,
        rate_window_count integer not null default 0,
        consecutive_failures integer not null default 0,
        failing_since timestamptz null,
        disabled_reason text null,
        listener_seen_at timestamptz null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        deleted_at timestamptz null
      );`);
    this.addSql('create unique index destination_position_idx on destination (endpoint_id, position) where deleted_at is null;');
    this.addSql('create index destination_endpoint_idx on destination (endpoint_id, id);');
    this.addSql(`
      insert into destination (id, account_id, endpoint_id, position, type, url, secret, previous_secret, previous_secret_expires_at,
                               status, transformation_code, filter, created_at, updated_at, deleted_at)
      select 'dst_' || substr(id, 4), account_id, id, 0, destination_type, destination_url, secret, previous_secret, previous_secret_expires_at,
             case when status = 'disabled' then 'disabled' else 'active' end, transformation_code, filter, created_at, updated_at, deleted_at
      from endpoint;`);
    this.addSql(`update destination set disabled_reason = 'gone_410' where status = 'disabled';`);

    this.addSql(`
      create table delivery (
        event_id text not null,
        destination_id text not null,
        account_id text not null,
        endpoint_id text not null,
        status text not null check (status in ('pending', 'delivered', 'retrying', 'failed', 'filtered')),
        attempt_count integer not null default 0,
        auto_attempts integer not null default 0,
        next_attempt_at timestamptz null,
        next_trigger text not null default 'auto' check (next_trigger in ('auto', 'replay')),
        lease_id text null,
        locked_until timestamptz null,
        primary key (event_id, destination_id)
      );`);
    this.addSql(`
      insert into delivery (event_id, destination_id, account_id, endpoint_id, status, attempt_count, auto_attempts,
                            next_attempt_at, next_trigger, lease_id, locked_until)
      select e.id, 'dst_' || substr(e.endpoint_id, 4), e.account_id, e.endpoint_id, e.status, e.attempt_count, e.auto_attempts,
             coalesce(e.next_attempt_at, case when e.status in ('pending', 'retrying') then e.received_at end),
             e.next_trigger, e.lease_id, e.locked_until
      from event e;`);
    this.addSql('create index delivery_due_idx on delivery (destination_id, next_attempt_at, event_id) where next_attempt_at is not null;');
    this.addSql('create index delivery_leased_idx on delivery (destination_id, locked_until) where lease_id is not null;');

    this.addSql('alter table attempt add column destination_id text null;');
    // Attempts lose their foreign keys, like events and deliveries: checking them locked
    // the event's row and the account's (FOR KEY SHARE) on every recorded attempt, every
    // result contending on one account row. Retention and account removal delete an
    // event's attempts and deliveries explicitly.
    this.addSql('alter table attempt drop constraint attempt_event_id_fkey, drop constraint attempt_account_id_fkey;');
    this.addSql(`update attempt a set destination_id = 'dst_' || substr(e.endpoint_id, 4) from event e where e.id = a.event_id;`);

    this.addSql('drop index event_due_idx;');
    this.addSql('drop index event_leased_idx;');
    this.addSql(`alter table event drop column status, drop column attempt_count, drop column next_attempt_at, drop column auto_attempts,
                   drop column next_trigger, drop column lease_id, drop column locked_until;`);
    this.addSql('alter table event add column delivery_count integer not null default 1;');

    this.addSql(`
      alter table endpoint drop column destination_type, drop column destination_url, drop column secret,
        drop column previous_secret, drop column previous_secret_expires_at, drop column transformation_code, drop column filter;`);
  }
}
