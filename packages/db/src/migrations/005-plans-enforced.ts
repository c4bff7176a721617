import { Migration } from '@mikro-orm/migrations';

/**
 * Plans become enforced (issue 6):
 * - the top plan is `enterprise` (it was `business`), history included;
 * - `account_usage`: events accepted per account per calendar month (UTC), updated by
 *   the ingest statement itself, so the count is exact;
 * - `member`: team members; every API key now belongs to one. Each existing account
 *   gets one admin member (its email, if any) owning its existing keys;
 * - account settings: `allowed_ips` (CIDRs; empty = any), `custom_domain` (unique),
 *   `retention_days` (enterprise's own retention; null = the plan's);
 * - `endpoint.kind`: `notifications` marks the one hidden endpoint per account that
 *   carries account notifications through the delivery engine;
 * - `notification_outbox`: account notifications decided inside another statement's
 *   transaction (usage thresholds, failures, plan changes), turned into events by a job.
 */
export class PlansEnforced extends Migration {
  override name = '005-plans-enforced';

  override up(): void {
    this.addSql(`update account set plan = 'enterprise' where plan = 'business';`);
    this.addSql(`update plan_change set from_plan = 'enterprise' where from_plan = 'business';`);
    this.addSql(`update plan_change set to_plan = 'enterprise' where to_plan = 'business';`);

    this.addSql(`alter table account add column allowed_ips text[] not null default '{}';`);
    this.addSql(`alter table account add column custom_domain text null;`);
    this.addSql(`alter table account add column retention_days integer null;`);
    this.addSql('create unique index account_custom_domain_idx on account (custom_domain) where custom_domain is not null;');

    this.addSql(`
      create table account_usage (
        account_id text not null references account (id) on delete cascade deferrable initially deferred,
        month date not null,
        events_accepted bigint not null default 0,
        primary key (account_id, month)
      );`);

    this.addSql(`
      create table member (
        id text primary key,
        account_id text not null references account (id) on delete cascade deferrable initially deferred,
        email text null,
        role text not null check (role in ('admin', 'member')),
        created_at timestamptz not null
      );`);
    this.addSql('create index member_account_idx on member (account_id, id);');
    this.addSql('create unique index member_email_idx on member (account_id, lower(email)) where email is not null;');
    // One admin per existing account, owning the account's existing keys. The id is a
    // valid mem_ id built from the account's own ULID (same time, same randomness).
    this.addSql(`insert into member (id, account_id, email, role, created_at)
                 select 'mem_' || substr(id, 6), id, email, 'admin', created_at from account;`);
    this.addSql('alter table api_key add column member_id text null references member (id) on delete cascade deferrable initially deferred;');
    this.addSql(`update api_key set member_id = 'mem_' || substr(account_id, 6);`);
    this.addSql('alter table api_key alter column member_id set not null;');
    this.addSql('create index api_key_member_idx on api_key (member_id);');

    this.addSql(`alter table endpoint add column kind text not null default 'user' check (kind in ('user', 'notifications'));`);
    this.addSql(`create unique index endpoint_notifications_idx on endpoint (account_id) where kind = 'notifications' and deleted_at is null;`);

    this.addSql(`
      create table notification_outbox (
        id bigserial primary key,
        account_id text not null,
        type text not null,
        data jsonb not null,
        created_at timestamptz not null default now()
      );`);
  }
}
