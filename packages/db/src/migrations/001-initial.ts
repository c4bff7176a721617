import { Migration } from '@mikro-orm/migrations';

/**
 * Accounts, keys, endpoints, events and attempts. Foreign keys are declared here
 * rather than as ORM relations (the hot paths read and write plain ids), so the unit
 * of work cannot order inserts by them: they are checked at commit (deferred).
 *
 * `event` has no foreign keys on purpose: checking one locks the parent row (FOR KEY
 * SHARE), and every concurrent ingest batch of an endpoint would contend on that one
 * row. Events are written only with ids read from their endpoint, endpoints are never
 * hard-deleted (deleted_at), and accounts are never deleted, so nothing can dangle.
 */
export class InitialSchema extends Migration {
  override name = '001-initial';

  override up(): void {
    this.addSql(`
      create table account (
        id text primary key,
        plan text not null,
        created_at timestamptz not null
      );`);
    this.addSql(`
      create table api_key (
        id text primary key,
        account_id text not null references account (id) on delete cascade deferrable initially deferred,
        name text null,
        prefix text not null,
        key_hash text not null unique,
        created_at timestamptz not null
      );`);
    this.addSql('create index api_key_account_idx on api_key (account_id, id);');
    this.addSql(`
      create table endpoint (
        id text primary key,
        account_id text not null references account (id) on delete cascade deferrable initially deferred,
        name text not null,
        ingest_id text not null unique,
        status text not null check (status in ('active', 'paused', 'disabled')),
        destination_type text not null check (destination_type in ('cli', 'url')),
        destination_url text null,
        secret text not null,
        previous_secret text null,
        previous_secret_expires_at timestamptz null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        deleted_at timestamptz null
      );`);
    this.addSql('create index endpoint_account_idx on endpoint (account_id, id) where deleted_at is null;');
    this.addSql(`
      create table event (
        id text primary key,
        account_id text not null,
        endpoint_id text not null,
        type text null,
        method text not null,
        path text not null,
        query text not null,
        headers jsonb not null,
        body bytea not null,
        content_type text null,
        size integer not null,
        received_at timestamptz not null,
        status text not null check (status in ('pending', 'delivered', 'retrying', 'failed')),
        attempt_count integer not null default 0,
        next_attempt_at timestamptz null,
        locked_until timestamptz null
      );`);
    this.addSql('create index event_account_idx on event (account_id, id);');
    this.addSql('create index event_endpoint_idx on event (endpoint_id, id);');
    this.addSql(`
      create table attempt (
        id text primary key,
        event_id text not null references event (id) on delete cascade deferrable initially deferred,
        account_id text not null references account (id) on delete cascade deferrable initially deferred,
        n integer not null,
        trigger text not null check (trigger in ('auto', 'replay', 'listen')),
        started_at timestamptz not null,
        duration_ms integer not null,
        response_status integer null,
        response_body text null,
        error text null
      );`);
    this.addSql('create index attempt_event_idx on attempt (event_id, n);');
  }
}
