/**
 * A database as the release before partitioned history (migrations up to 018) leaves it,
 * for the online upgrade to 019 (packages/db/test/online-upgrade.test.ts, npm run
 * bench:upgrade): accounts with an endpoint and its destination each, a history written
 * straight into the unpartitioned `event`, `delivery` and `attempt` tables with the columns
 * they have at 018 (INSERT … SELECT generate_series, in chunks), and that release's ingest
 * statement (an event and its delivery, without `retention_class`).
 */
import { newId } from '@hook/core';
import type pg from 'pg';

/** The last migration of the release before partitioned history. */
export const PREVIOUS_RELEASE_MIGRATION = '018-body-text-parallel-unsafe';

export interface LegacyAccount {
  accountId: string;
  endpointId: string;
  destinationId: string;
  plan: 'free' | 'pro' | 'enterprise';
}

/** One account per plan given, each with one active endpoint and its URL destination. */
export async function createLegacyAccounts(client: pg.ClientBase, plans: readonly LegacyAccount['plan'][]): Promise<LegacyAccount[]> {
  const accounts: LegacyAccount[] = [];
  for (const plan of plans) {
    const accountId = newId('account');
    const endpointId = newId('endpoint');
    const destinationId = `dst_${endpointId.slice(3)}`;
    await client.query(`insert into account (id, plan, created_at) values ($1, $2, now() - interval '400 days')`, [accountId, plan]);
    await client.query(
      `insert into endpoint (id, account_id, name, ingest_id, status, created_at, updated_at) values ($1, $2, 'legacy', $3, 'active', now(), now())`,
      [endpointId, accountId, `ingest-${endpointId}`],
    );
    await client.query(
      `insert into destination (id, account_id, endpoint_id, position, type, url, secret, status, created_at, updated_at)
       values ($1, $2, $3, 0, 'url', 'http://127.0.0.1:9/legacy', 'whsec_AAAA', 'active', now(), now())`,
      [destinationId, accountId, endpointId],
    );
    accounts.push({ accountId, endpointId, destinationId, plan });
  }
  return accounts;
}

/** Crockford base32 of `n` in `len` characters, as ids are made (pg_temp: per connection). */
const BASE32_FUNCTION = `
  create or replace function pg_temp.base32(n bigint, len int) returns text language sql immutable as $$
    select string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((n >> (5 * (len - 1 - i))) & 31)::int + 1, 1), '' order by i)
    from generate_series(0, len - 1) as i
  $$`;

export interface LegacyHistoryOptions {
  /** Events to write. */
  events: number;
  /** Their receive times are spread evenly over [fromMs, toMs). */
  fromMs: number;
  toMs: number;
  /** Body size in bytes (JSON; default 1024). */
  bodyBytes?: number;
  /** Events per INSERT (default 100,000). */
  chunk?: number;
  /** Told after each chunk. */
  onChunk?: (written: number) => void;
}

/**
 * Writes a history of `events` events over `accounts` (event g goes to account g mod n),
 * as the previous release stored it: each event has one delivery to its endpoint's
 * destination and one attempt; one in 50 failed (3 attempts), one in 200 is retrying (2
 * attempts, due in an hour), the rest delivered; one in 10 has a dedupe key (`key-<g>`).
 * Ids carry the receive time (`evt_<time><g>`), so they sort by it as real ones do.
 */
export async function fillLegacyHistory(client: pg.ClientBase, accounts: readonly LegacyAccount[], options: LegacyHistoryOptions): Promise<void> {
  await client.query(BASE32_FUNCTION);
  const bodyBytes = options.bodyBytes ?? 1024;
  const chunk = options.chunk ?? 100_000;
  const stepMs = (options.toMs - options.fromMs) / options.events;
  // $1, $2: the chunk's first and last g; $3 on: the arrays each statement reads, by account.
  const accountIds = accounts.map((a) => a.accountId);
  const endpointIds = accounts.map((a) => a.endpointId);
  const destinationIds = accounts.map((a) => a.destinationId);
  const rows = `select g, (${Math.floor(options.fromMs)}::bigint + floor(g * ${stepMs})::bigint) as t, g % ${accounts.length} + 1 as a,
                       case when g % 50 = 7 then 'failed' when g % 200 = 3 then 'retrying' else 'delivered' end as status,
                       case when g % 50 = 7 then 3 when g % 200 = 3 then 2 else 1 end as attempts
                from generate_series($1::bigint, $2::bigint) as g`;
  const eventId = `'evt_' || pg_temp.base32(t, 10) || '000000' || pg_temp.base32(g, 10)`;
  for (let from = 0; from < options.events; from += chunk) {
    const to = Math.min(options.events, from + chunk) - 1;
    await client.query(
      `insert into event (id, account_id, endpoint_id, type, method, path, query, headers, body, content_type, size, received_at, dedupe_key)
       select ${eventId}, ($3::text[])[a], ($4::text[])[a], 'invoice.paid', 'POST', '', '',
              '{"content-type": "application/json", "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)"}'::jsonb,
              body, 'application/json', length(body), to_timestamp(t / 1000.0), case when g % 10 = 0 then 'key-' || g end
       from (select *, convert_to(head || left(repeat(md5(g::text), ${Math.ceil(bodyBytes / 32) + 1}), ${bodyBytes} - length(head) - 3) || '"}}', 'UTF8') as body
             from (select *, '{"type":"invoice.paid","id":"in_' || g || '","data":{"padding":"' as head from (${rows}) r) h) b`,
      [from, to, accountIds, endpointIds],
    );
    await client.query(
      `insert into delivery (event_id, destination_id, account_id, endpoint_id, status, attempt_count, auto_attempts, next_attempt_at)
       select ${eventId}, ($5::text[])[a], ($3::text[])[a], ($4::text[])[a], status, attempts, attempts,
              case when status = 'retrying' then now() + interval '1 hour' end
       from (${rows}) r`,
      [from, to, accountIds, endpointIds, destinationIds],
    );
    await client.query(
      `insert into attempt (id, event_id, account_id, n, trigger, started_at, duration_ms, response_status, response_body, destination_id)
       select 'att_' || pg_temp.base32(t, 10) || '00000' || n || pg_temp.base32(g, 10), ${eventId}, ($3::text[])[a], n, 'auto',
              to_timestamp(t / 1000.0) + n * interval '1 minute', 120, case when status = 'delivered' then 200 else 503 end,
              case when status = 'delivered' then '{"received":true}' else 'unavailable' end, ($4::text[])[a]
       from (${rows}) r cross join lateral generate_series(1, attempts) as n`,
      [from, to, accountIds, destinationIds],
    );
    options.onChunk?.(to + 1);
  }
}

/**
 * The previous release's ingest, one statement and one commit as it was: the event (no
 * `retention_class`: that column did not exist) and its delivery. Prepared under a name, so a
 * connection keeps its plan across the migration (PostgreSQL plans it again when a table
 * it names changes).
 */
export const LEGACY_INGEST = {
  name: 'legacy_ingest',
  text: `with e as (
           insert into event (id, account_id, endpoint_id, type, method, path, query, headers, body, content_type, size, received_at)
           values ($1, $2, $3, 'legacy.ingest', 'POST', '', '', '{"content-type":"application/json"}'::jsonb, $4, 'application/json', $5, now())
           returning id, account_id, endpoint_id, received_at
         )
         insert into delivery (event_id, destination_id, account_id, endpoint_id, status, next_attempt_at)
         select id, $6, account_id, endpoint_id, 'pending', received_at from e`,
};

/** Stores one event the previous release's way; returns its id once committed. */
export async function legacyIngest(client: pg.ClientBase, account: LegacyAccount, body: Buffer): Promise<string> {
  const id = newId('event');
  await client.query({ ...LEGACY_INGEST, values: [id, account.accountId, account.endpointId, body, body.length, account.destinationId] });
  return id;
}

/**
 * The previous release's ingest of an event with a dedupe key: against the unique index
 * on (endpoint, key) by ON CONFLICT, which names it by its columns.
 */
export const LEGACY_KEYED_INGEST = {
  name: 'legacy_keyed_ingest',
  text: `with e as (
           insert into event (id, account_id, endpoint_id, type, method, path, query, headers, body, content_type, size, received_at, dedupe_key)
           values ($1, $2, $3, 'legacy.ingest', 'POST', '', '', '{"content-type":"application/json"}'::jsonb, $4, 'application/json', $5, now(), $7)
           on conflict (endpoint_id, dedupe_key) where dedupe_key is not null do nothing
           returning id, account_id, endpoint_id, received_at
         )
         insert into delivery (event_id, destination_id, account_id, endpoint_id, status, next_attempt_at)
         select id, $6, account_id, endpoint_id, 'pending', received_at from e`,
};

/** Stores one keyed event the previous release's way; returns its id once committed. */
export async function legacyKeyedIngest(client: pg.ClientBase, account: LegacyAccount, body: Buffer): Promise<string> {
  const id = newId('event');
  await client.query({ ...LEGACY_KEYED_INGEST, values: [id, account.accountId, account.endpointId, body, body.length, account.destinationId, `legacy-${id}`] });
  return id;
}
