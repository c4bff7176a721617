import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  ADMIN_REQUIRED, AUTHENTICATION_REQUIRED, CONSOLE_HEADER_REQUIRED, CONSOLE_ORIGIN_REFUSED, CONSOLE_SESSION_INVALID,
  hashApiKey, HookError, INVALID_API_KEY, looksLikeApiKey, type Plan,
} from '@hook/core';
import { touchConsoleSession, type MemberRole } from '@hook/db';

/** Who is calling, as read from the request's API key (authenticated routes only). */
export interface Caller {
  accountId: string;
  memberId: string;
  keyId: string;
  role: MemberRole;
  /** The account's plan when the request arrived. */
  plan: Plan;
  /** The account's allowed_ips (CIDRs); empty allows any address. */
  allowedIps: string[];
  /** The account's custom_domain once verified (endpoint URLs use it), or null: a pending claim has no effect. */
  customDomain: string | null;
  /** The hash of the console session token when the request came with the console's cookie instead of a Bearer key. */
  consoleSession?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The account the request's API key belongs to (authenticated routes only). */
    accountId: string;
    /** The member the request's API key belongs to (authenticated routes only). */
    memberId: string;
    /** The key, its member and its account (authenticated routes only). */
    caller: Caller;
  }
}

interface CallerRow {
  key_id: string;
  account_id: string;
  member_id: string;
  role: MemberRole;
  plan: Plan;
  allowed_ips: string[];
  custom_domain: string | null;
}

const CALLER_COLUMNS = 'k.id as key_id, k.account_id, k.member_id, m.role, a.plan, a.allowed_ips, '
  + 'case when a.custom_domain_verified_at is not null then a.custom_domain end as custom_domain';

function toCaller(row: CallerRow): Caller {
  return { accountId: row.account_id, memberId: row.member_id, keyId: row.key_id, role: row.role, plan: row.plan, allowedIps: row.allowed_ips, customDomain: row.custom_domain };
}

/** Resolves an API key to its caller in one query; null when the key is unknown or revoked. */
export async function findCaller(request: FastifyRequest, key: string): Promise<Caller | null> {
  const rows = await request.em.getConnection().execute<CallerRow[]>(
    `select ${CALLER_COLUMNS}
     from api_key k join member m on m.id = k.member_id join account a on a.id = k.account_id
     where k.key_hash = ?`,
    [hashApiKey(key)],
  );
  return rows[0] ? toCaller(rows[0]) : null;
}

/** The console's session cookie (docs/console.md#how-it-works). */
export const CONSOLE_COOKIE = 'hook_console';
/** The header a cookie-authenticated API request must carry: a cross-site form cannot set it. */
export const CONSOLE_HEADER = 'x-hook-console';
/** A session in use moves its expiry at most this often (a write per request would be waste). */
const CONSOLE_SESSION_TOUCH_MS = 60 * 1000;

/** The hash a console session token is stored under: SHA-256, like API keys (256 random bits need no slow hash). */
export function hashConsoleToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The console session token from the request's Cookie header, if any. Read by hand: this
 * one cookie is all the relay reads, so a cookie plugin would parse every request's
 * cookies for nothing.
 */
export function consoleTokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === CONSOLE_COOKIE) {
      const value = part.slice(separator + 1).trim();
      return /^[A-Za-z0-9_-]{16,200}$/.test(value) ? value : undefined;
    }
  }
  return undefined;
}

/**
 * The caller behind a console session token, in one query: its key, member and account
 * as for a Bearer key; null when the session is unknown, expired or its key was revoked
 * (the session row went with the key). A session in use slides its expiry.
 */
export async function findConsoleCaller(request: FastifyRequest, token: string): Promise<Caller | null> {
  const now = new Date();
  const tokenHash = hashConsoleToken(token);
  const rows = await request.em.getConnection().execute<(CallerRow & { last_used_at: string | Date })[]>(
    `select ${CALLER_COLUMNS}, s.last_used_at
     from console_session s join api_key k on k.id = s.key_id join member m on m.id = k.member_id join account a on a.id = k.account_id
     where s.token_hash = ? and s.expires_at > ?`,
    [tokenHash, now],
  );
  const row = rows[0];
  if (!row) return null;
  if (now.getTime() - new Date(row.last_used_at).getTime() > CONSOLE_SESSION_TOUCH_MS) await touchConsoleSession(request.em, tokenHash, now);
  return { ...toCaller(row), consoleSession: tokenHash };
}

/** Whether a WebSocket upgrade comes from a page of this relay: browsers always send Origin, and pages cannot set it. */
function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (!origin) return false;
  try {
    return new URL(origin).host === request.host;
  } catch {
    return false;
  }
}

/**
 * The caller of a request carrying the console's cookie: only with `X-Hook-Console: 1`
 * (a CSRF guard on top of SameSite=Strict), or, for the WebSocket stream (browsers cannot
 * set its headers), when the upgrade's Origin is this relay.
 */
async function authenticateConsole(request: FastifyRequest, token: string): Promise<Caller> {
  if (request.headers.upgrade?.toLowerCase() === 'websocket') {
    if (!sameOrigin(request)) throw new HookError(CONSOLE_ORIGIN_REFUSED);
  } else if (request.headers[CONSOLE_HEADER] !== '1') {
    throw new HookError(CONSOLE_HEADER_REQUIRED);
  }
  const caller = await findConsoleCaller(request, token);
  if (!caller) throw new HookError(CONSOLE_SESSION_INVALID);
  return caller;
}

/**
 * Reads `Authorization: Bearer hk_…` and resolves the key's caller; revoked keys fail at
 * once (no cache). Without an Authorization header, the console's session cookie stands
 * for the key it was opened with (authenticateConsole); Bearer wins when both are sent.
 */
async function authenticate(request: FastifyRequest): Promise<void> {
  const header = request.headers.authorization;
  let caller: Caller | null;
  if (header?.trim()) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const key = match?.[1];
    if (!key || !looksLikeApiKey(key)) throw new HookError(INVALID_API_KEY);
    caller = await findCaller(request, key);
    if (!caller) throw new HookError(INVALID_API_KEY);
  } else {
    const token = consoleTokenOf(request);
    if (token === undefined) throw new HookError(AUTHENTICATION_REQUIRED);
    caller = await authenticateConsole(request, token);
  }
  request.caller = caller;
  request.accountId = caller.accountId;
  request.memberId = caller.memberId;
}

/** Refuses the request unless its key belongs to an admin member; `action` completes "Only an admin member can …". */
export function requireAdmin(request: FastifyRequest, action: string): void {
  if (request.caller.role !== 'admin') throw new HookError(ADMIN_REQUIRED, [action]);
}

/** Every route registered inside `app` after this call needs an API key. */
export function requireApiKey(app: FastifyInstance): void {
  app.decorateRequest('accountId', '');
  app.decorateRequest('memberId', '');
  app.decorateRequest('caller', null as unknown as Caller);
  app.addHook('onRequest', authenticate);
}
