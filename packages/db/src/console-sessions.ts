/**
 * Web console sessions (migration 010-console-sessions, docs/console.md#how-it-works):
 * a browser signed in with an API key holds a random token in an HttpOnly cookie; only
 * the token's hash is stored, beside the key it stands for. Plain SQL, one statement per
 * function: nothing but these functions reads or writes the table.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';

/** A session ends this long after its last use (sliding). */
export const CONSOLE_SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** A session ends this long after sign-in however busy it is (absolute). */
export const CONSOLE_SESSION_MAX_MS = 7 * 24 * 60 * 60 * 1000;
/** Uses closer together than this do not move `last_used_at` (a write per request would be waste). */
const CONSOLE_SESSION_TOUCH_MS = 60 * 1000;

/** Opens a session for a key; also removes every expired session (an index range, usually empty). */
export async function insertConsoleSession(em: EntityManager, session: { tokenHash: string; keyId: string; accountId: string; now: Date }): Promise<Date> {
  const expiresAt = new Date(session.now.getTime() + CONSOLE_SESSION_IDLE_MS);
  const db = em.getKysely();
  await sql`delete from console_session where expires_at <= ${session.now}`.execute(db);
  await sql`insert into console_session (token_hash, key_id, account_id, created_at, last_used_at, expires_at)
            values (${session.tokenHash}, ${session.keyId}, ${session.accountId}, ${session.now}, ${session.now}, ${expiresAt})`.execute(db);
  return expiresAt;
}

/** The key id of the live session behind a token hash, or null when unknown, expired or its key is gone. */
export async function findConsoleSessionKey(em: EntityManager, tokenHash: string, now: Date): Promise<string | null> {
  const { rows } = await sql<{ key_id: string }>`select key_id from console_session where token_hash = ${tokenHash} and expires_at > ${now}`.execute(em.getKysely());
  return rows[0]?.key_id ?? null;
}

/**
 * Slides a session's expiry: 12 hours from now, capped at 7 days from sign-in. Skipped
 * (no write) when the session was used within the last minute.
 */
export async function touchConsoleSession(em: EntityManager, tokenHash: string, now: Date): Promise<void> {
  await sql`
    update console_session
    set last_used_at = ${now},
        expires_at = least(created_at + make_interval(secs => ${CONSOLE_SESSION_MAX_MS / 1000}), ${now}::timestamptz + make_interval(secs => ${CONSOLE_SESSION_IDLE_MS / 1000}))
    where token_hash = ${tokenHash} and last_used_at < ${new Date(now.getTime() - CONSOLE_SESSION_TOUCH_MS)}`.execute(em.getKysely());
}

/** Ends a session (signing out). */
export async function deleteConsoleSession(em: EntityManager, tokenHash: string): Promise<void> {
  await sql`delete from console_session where token_hash = ${tokenHash}`.execute(em.getKysely());
}
