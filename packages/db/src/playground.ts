/**
 * Playground sessions (/playground): a temporary account with one endpoint, reached
 * through a token whose hash is kept in `playground_session` (see migration
 * 004-playground). Plain SQL, one statement per function, since the table has
 * no entity: nothing but these functions reads or writes it.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import type { Orm } from './orm.ts';

/** What a playground token opens: one account and the endpoint made for it. */
export interface PlaygroundSession {
  accountId: string;
  endpointId: string;
  createdAt: Date;
  /** When the account and everything in it is removed; null once claimed. */
  expiresAt: Date | null;
  claimedAt: Date | null;
}

interface SessionRow {
  account_id: string;
  endpoint_id: string;
  created_at: Date | string;
  expires_at: Date | string | null;
  claimed_at: Date | string | null;
}

const toDate = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

function toSession(row: SessionRow): PlaygroundSession {
  return {
    accountId: row.account_id,
    endpointId: row.endpoint_id,
    createdAt: new Date(row.created_at),
    expiresAt: toDate(row.expires_at),
    claimedAt: toDate(row.claimed_at),
  };
}

/**
 * Records the session of a temporary account. Takes the EntityManager of the
 * transaction that creates the account and endpoint, so all three commit together.
 */
export async function insertPlaygroundSession(
  em: EntityManager,
  session: { accountId: string; endpointId: string; tokenHash: string; createdAt: Date; expiresAt: Date },
): Promise<void> {
  await sql`insert into playground_session (account_id, endpoint_id, token_hash, created_at, expires_at)
            values (${session.accountId}, ${session.endpointId}, ${session.tokenHash}, ${session.createdAt}, ${session.expiresAt})`.execute(em.getKysely());
}

/** The live session behind a token hash: none when unknown or expired (even before the expiry job removes it). */
export async function findPlaygroundSession(em: EntityManager, tokenHash: string, now: Date): Promise<PlaygroundSession | null> {
  const { rows } = await sql<SessionRow>`
    select account_id, endpoint_id, created_at, expires_at, claimed_at from playground_session
    where token_hash = ${tokenHash} and (expires_at is null or expires_at > ${now})`.execute(em.getKysely());
  return rows[0] ? toSession(rows[0]) : null;
}

/**
 * Makes a temporary account permanent: clears its expiry. One conditional UPDATE, so a
 * claim racing the expiry job (or a second claim) either wins whole or gets nothing.
 */
export async function claimPlaygroundSession(em: EntityManager, tokenHash: string, now: Date): Promise<PlaygroundSession | null> {
  const { rows } = await sql<SessionRow>`
    update playground_session set expires_at = null, claimed_at = ${now}
    where token_hash = ${tokenHash} and expires_at > ${now}
    returning account_id, endpoint_id, created_at, expires_at, claimed_at`.execute(em.getKysely());
  return rows[0] ? toSession(rows[0]) : null;
}

/** How long an expired playground's endpoint refuses events before its data is deleted: longer than any ingest target cache holds. */
export const PLAYGROUND_REMOVAL_GRACE_MS = 60_000;

/**
 * Removes expired temporary accounts with everything in them; returns how many. Two
 * statements: first the expired endpoints are disabled (ingest refuses them once its
 * short target cache catches up), then accounts expired for longer than `graceMs` are
 * deleted with their events, deliveries and attempts (which have no foreign keys, so they go explicitly; keys,
 * endpoints, destinations and the session row cascade from the account). The grace means no
 * ingest request still holding an old view of the endpoint can store an event after its
 * account is gone.
 */
export async function removeExpiredPlaygrounds(orm: Orm, now: Date = new Date(), graceMs = PLAYGROUND_REMOVAL_GRACE_MS): Promise<number> {
  const db = orm.em.fork().getKysely();
  await sql`
    update endpoint set status = 'disabled', updated_at = ${now}
    where status <> 'disabled' and account_id in (select account_id from playground_session where expires_at <= ${now})`.execute(db);
  const { rows: removed } = await sql<{ removed: number }>`
     with expired as (
       select account_id from playground_session where expires_at <= ${new Date(now.getTime() - graceMs)} for update
     ), removed_deliveries as (
       delete from delivery where event_id in (select id from event where account_id in (select account_id from expired))
     ), removed_attempts as (
       delete from attempt where event_id in (select id from event where account_id in (select account_id from expired))
     ), removed_events as (
       delete from event where account_id in (select account_id from expired)
     ), removed_keys as (
       delete from event_dedupe_key where endpoint_id in (select id from endpoint where account_id in (select account_id from expired))
     ), removed_accounts as (
       delete from account where id in (select account_id from expired) returning id
     )
     select count(*)::int as removed from removed_accounts`.execute(db);
  return removed[0]?.removed ?? 0;
}
