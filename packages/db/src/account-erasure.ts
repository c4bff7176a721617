/**
 * Erasing an account (`DELETE /v1/account`, docs/api.md#delete-the-account): the account
 * and every row kept for it, in three steps, so a large account never holds a long lock:
 *
 * 1. `closeAccountEndpoints`: one short transaction marks every endpoint and destination
 *    deleted. Ingest stops taking events for them (each relay process's target cache
 *    forgets them within its TTL; the caller tells its own at once), no claim takes their
 *    deliveries any more, and the notifier drops the account's notifications.
 * 2. `removeAccountEventBatch`, repeated: the events with their attempts and deliveries, a
 *    bounded batch per statement like retention (retention-sql.ts), row locks only. An
 *    event with a delivery in flight (a live lease) is left for a later pass: its result
 *    records an attempt when it ends, and removing the event first would leave that
 *    attempt behind. Leases end when the result is recorded or, at the latest, when they
 *    expire, so the passes finish.
 * 3. `removeAccountRow`: one transaction deletes the account row, which cascades to its
 *    keys (and their console sessions), members, endpoints, destinations, plan history,
 *    usage rows and playground session (migrations 001–010), then sweeps what has no
 *    foreign key: events stored meanwhile by an ingest request that had looked its
 *    endpoint up before step 1, their attempts and deliveries, the endpoints' dedupe keys
 *    (migration 022), the notification and alert outboxes (alert channels cascade), and
 *    its issues and the events they cover (migration 025); its keys' rate-limit counters (migration 015)
 *    go just before it. The account row goes first: deleting its usage
 *    rows waits for any ingest statement of the account in flight to commit, and once
 *    they are gone no ingest statement can store anything for it (it meters every event
 *    against them, and cannot make new ones for an account that is gone).
 *
 * Every step is idempotent: an erasure cut short (a crash) is finished by running it again.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import type { Orm } from './orm.ts';
import { DELIVERY_OPEN } from './queue/statements/claimed-columns.ts';
import { removeEventsCtes } from './retention-sql.ts';

/** Events removed by one statement at the most: a short statement, short row locks. */
export const ERASURE_BATCH_SIZE = 1000;
/** Pause between two batches, so an erasure leaves the database to ingest most of the time. */
export const ERASURE_BATCH_PAUSE_MS = 10;
/** How often a pass looks again at events whose deliveries are still in flight. */
const IN_FLIGHT_RECHECK_MS = 200;

/** What an erasure removed, counted before it went. */
export interface AccountErasure {
  endpoints: number;
  destinations: number;
  events: number;
  apiKeys: number;
  members: number;
}

/**
 * Step 1 (see above): marks the account's live endpoints and destinations deleted, under
 * the account's row lock (so an endpoint being created meanwhile is either closed here or
 * created after, and swept with the account row). Returns the ingest ids of all its
 * endpoints, for the caller's ingest caches, and its custom domain; null when there is no
 * such account.
 */
export async function closeAccountEndpoints(orm: Orm, accountId: string, now: Date): Promise<{ ingestIds: string[]; customDomain: string | null } | null> {
  return orm.em.fork().transactional(async (em) => {
    const db = em.getKysely();
    const { rows: [account] } = await sql<{ custom_domain: string | null }>`select custom_domain from account where id = ${accountId} for update`.execute(db);
    if (!account) return null;
    await sql`update destination set deleted_at = ${now}, updated_at = ${now} where account_id = ${accountId} and deleted_at is null`.execute(db);
    await sql`update endpoint set deleted_at = ${now}, updated_at = ${now} where account_id = ${accountId} and deleted_at is null`.execute(db);
    const { rows: endpoints } = await sql<{ ingest_id: string }>`select ingest_id from endpoint where account_id = ${accountId}`.execute(db);
    return { ingestIds: endpoints.map((row) => row.ingest_id), customDomain: account.custom_domain };
  });
}

/**
 * Step 2 (see above): removes at most `limit` of the account's events after `afterId`,
 * with their attempts and deliveries, in one statement. The candidates come from one
 * bounded range scan of `(account_id, id)` (ordered by both columns so that index is
 * used); an event whose delivery holds a live lease is skipped, as is a row another
 * statement holds (`SKIP LOCKED`), and both are taken by a later pass. Returns how many
 * were removed and the last id looked at (null: nothing after `afterId`).
 */
export async function removeAccountEventBatch(em: EntityManager, accountId: string, afterId: string, limit: number): Promise<{ removed: number; lastId: string | null }> {
  const { rows } = await sql<{ removed: number; last_id: string | null }>`
     with candidates as (
       select id from event where account_id = ${accountId} and id > ${afterId} order by account_id, id limit ${limit}
     ), doomed as (
       select e.id from event e
       where e.id in (select id from candidates)
         and not exists (select 1 from delivery l where l.event_id = e.id and l.lease_id is not null and l.locked_until > now() and ${sql.raw(DELIVERY_OPEN)})
       for update skip locked
     ), ${removeEventsCtes('doomed')}
     select (select count(*)::int from removed_events) as removed, (select max(id) from candidates) as last_id`.execute(em.getKysely());
  return { removed: rows[0]?.removed ?? 0, lastId: rows[0]?.last_id ?? null };
}

/**
 * Step 3 (see above): deletes the account row (its cascades) and sweeps the rows without
 * foreign keys, in one transaction. Returns what it removed, counted first (events: only
 * those swept here).
 */
export async function removeAccountRow(orm: Orm, accountId: string): Promise<AccountErasure> {
  return orm.em.fork().transactional(async (em) => {
    const db = em.getKysely();
    const { rows: [counts] } = await sql<{ endpoints: number; destinations: number; api_keys: number; members: number }>`
      select (select count(*)::int from endpoint where account_id = ${accountId} and kind = 'user') as endpoints,
             (select count(*)::int from destination d join endpoint p on p.id = d.endpoint_id where d.account_id = ${accountId} and p.kind = 'user') as destinations,
             (select count(*)::int from api_key where account_id = ${accountId}) as api_keys,
             (select count(*)::int from member where account_id = ${accountId}) as members`.execute(db);
    // Rate-limit counters are keyed by what they limit (migration 015): its keys' and its own go with them.
    await sql`
      delete from rate_limit_counter
      where key in (select 'api-key ' || id from api_key where account_id = ${accountId} union all select 'api-account ' || ${accountId}::text)`.execute(db);
    const { rows: endpoints } = await sql<{ id: string }>`select id from endpoint where account_id = ${accountId}`.execute(db);
    await sql`delete from account where id = ${accountId}`.execute(db);
    // Dedupe keys are rows of their own (migration 022), found by endpoint; after the account
    // row, so that a key an ingest statement in flight claimed goes too.
    await sql`delete from event_dedupe_key where endpoint_id = any(${endpoints.map((row) => row.id)}::text[])`.execute(db);
    const { rows: [swept] } = await sql<{ events: number }>`
       with stray as (
         select id from event where account_id = ${accountId}
       ), ${removeEventsCtes('stray')}, removed_notifications as (
         delete from notification_outbox where account_id = ${accountId}
       ), removed_alerts as (
         delete from alert_outbox where account_id = ${accountId}
       ), removed_issue_events as (
         delete from issue_event where issue_id in (select id from issue where account_id = ${accountId}) and account_id = ${accountId}
       ), removed_issues as (
         delete from issue where account_id = ${accountId}
       )
       select count(*)::int as events from removed_events`.execute(db);
    return {
      endpoints: counts?.endpoints ?? 0,
      destinations: counts?.destinations ?? 0,
      events: swept?.events ?? 0,
      apiKeys: counts?.api_keys ?? 0,
      members: counts?.members ?? 0,
    };
  });
}

export interface EraseAccountOptions {
  /** The time endpoints are marked deleted. Default: now. */
  now?: Date;
  /** Events per statement at the most. Default ERASURE_BATCH_SIZE. */
  batchSize?: number;
  /** Pause between batches, ms. Default ERASURE_BATCH_PAUSE_MS. */
  pauseMs?: number;
  /**
   * Least time between closing the endpoints and deleting the account row, ms: longer
   * than any relay process trusts a cached ingest target, so none still stores events for
   * the account when its row goes (one that did would fail rather than store them).
   */
  settleMs?: number;
  /**
   * Longest wait for the account's deliveries in flight, ms (a lease's length is enough:
   * a lease ends at the latest when it expires). Past it, events are removed anyway.
   */
  inFlightWaitMs?: number;
  /** Told the endpoints' ingest ids and custom domain once they are closed, so the caller's caches forget them at once. */
  onEndpointsClosed?(closed: { ingestIds: string[]; customDomain: string | null }): void;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Erases an account and everything kept for it (the three steps above). Resolves with
 * what was removed, or null when there is no such account (already erased).
 */
export async function eraseAccount(orm: Orm, accountId: string, options: EraseAccountOptions = {}): Promise<AccountErasure | null> {
  const batchSize = options.batchSize ?? ERASURE_BATCH_SIZE;
  const pauseMs = options.pauseMs ?? ERASURE_BATCH_PAUSE_MS;
  const closedAtMs = Date.now();
  const closed = await closeAccountEndpoints(orm, accountId, options.now ?? new Date());
  if (!closed) return null;
  options.onEndpointsClosed?.(closed);

  const em = orm.em.fork();
  let events = 0;
  const waitUntilMs = Date.now() + (options.inFlightWaitMs ?? 0);
  for (;;) {
    let after = '';
    for (;;) {
      const batch = await removeAccountEventBatch(em, accountId, after, batchSize);
      events += batch.removed;
      if (batch.lastId === null) break;
      after = batch.lastId;
      if (pauseMs > 0) await pause(pauseMs);
    }
    const { rows: [left] } = await sql<{ exists: boolean }>`select exists (select 1 from event where account_id = ${accountId}) as exists`.execute(em.getKysely());
    // What is left has deliveries in flight (or was locked): look again shortly; past the wait, step 3 takes it.
    if (!left?.exists || Date.now() >= waitUntilMs) break;
    await pause(IN_FLIGHT_RECHECK_MS);
  }

  const settleLeftMs = closedAtMs + (options.settleMs ?? 0) - Date.now();
  if (settleLeftMs > 0) await pause(settleLeftMs);
  const removed = await removeAccountRow(orm, accountId);
  return { ...removed, events: removed.events + events };
}
