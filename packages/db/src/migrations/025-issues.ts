import { Migration } from '@mikro-orm/migrations';
import { withShortLocks } from './short-locks.ts';

/**
 * Issues: failed deliveries grouped by (account, destination, kind) (issue 32, docs/issues.md).
 *
 * - `issue`: one row per account, destination and kind of failure, upserted by the
 *   statement that records results (record-results.ts) for every failed attempt of a user
 *   endpoint to a URL or broker destination; its counts, last failure, lifecycle (open,
 *   acknowledged, resolved, and by whom), when it last alerted (the alert throttle), and
 *   the last retry-all asked for;
 * - `issue_event`: which events an issue covers, with their first and last failure. Its
 *   rows go with their events (retention.ts deletes those older than what each class
 *   keeps), so it is bounded by retention like the history;
 * - `attempt.failure_kind`: the kind of a failed attempt (core's failureKind), and what
 *   was sent and answered (`request_headers`, `response_headers`, `request_body`), all
 *   nullable: adding them to the partitioned parent adds them to every leaf, rewriting
 *   nothing, under a lock taken with a short timeout (withShortLocks: ingest writes
 *   attempts' neighbours and must not queue behind it).
 *
 * No foreign keys, like `event` and `delivery` (001, 009): a check would lock the account
 * row on every insert; account erasure deletes these rows itself. The kinds are listed
 * here, not imported: a migration keeps the schema of its release.
 */
/**
 * The tables and columns of this migration, idempotent, so that a test of an older
 * migration whose statements are this release's can give the older schema them ahead
 * (online-upgrade.test.ts, as 023's DELIVERY_OPTIONS_COLUMNS); here they are simply added.
 */
export const ISSUES_TABLES = `
  create table if not exists issue (
    id text primary key,
    account_id text not null,
    endpoint_id text not null,
    destination_id text not null,
    kind text not null check (kind in ('http_4xx', 'http_5xx', 'http_other', 'timeout', 'connection_refused', 'dns', 'tls',
                                        'network_error', 'transformation_error', 'broker_error')),
    status text not null default 'open' check (status in ('open', 'acknowledged', 'resolved')),
    resolved_by text null check (resolved_by in ('user', 'auto')),
    first_seen_at timestamptz not null,
    last_seen_at timestamptz not null,
    opened_at timestamptz not null,
    acknowledged_at timestamptz null,
    resolved_at timestamptz null,
    failure_count bigint not null default 0,
    event_count integer not null default 0,
    reopen_count integer not null default 0,
    last_status integer null,
    last_error text null,
    last_event_id text null,
    last_alerted_at timestamptz null,
    retry_requested_at timestamptz null,
    retry_queued integer null,
    unique (account_id, destination_id, kind)
  );
  -- the list (most recently seen first, per account) and the sweep (issues not resolved)
  create index if not exists issue_account_seen_idx on issue (account_id, last_seen_at desc, id desc);
  create index if not exists issue_unresolved_idx on issue (id) where status <> 'resolved';
  create table if not exists issue_event (
    issue_id text not null,
    event_id text not null,
    account_id text not null,
    first_failed_at timestamptz not null,
    last_failed_at timestamptz not null,
    last_status integer null,
    last_error text null,
    primary key (issue_id, event_id)
  );
  -- an issue's events, newest failure first; and the rows of events retention dropped
  create index if not exists issue_event_recent_idx on issue_event (issue_id, last_failed_at desc, event_id desc);
  create index if not exists issue_event_event_idx on issue_event (event_id);`;
export const ATTEMPT_COLUMNS = `
  alter table attempt
    add column if not exists failure_kind text,
    add column if not exists request_headers jsonb,
    add column if not exists response_headers jsonb,
    add column if not exists request_body bytea`;

export class Issues extends Migration {
  override name = '025-issues';

  override up(): void {
    this.addSql(ISSUES_TABLES);
    this.addSql(withShortLocks(ATTEMPT_COLUMNS));
  }
}
