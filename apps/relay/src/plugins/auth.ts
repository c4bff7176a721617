import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ADMIN_REQUIRED, AUTHENTICATION_REQUIRED, hashApiKey, HookError, INVALID_API_KEY, looksLikeApiKey, type Plan } from '@hook/core';
import type { MemberRole } from '@hook/db';

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
  /** The account's custom_domain (endpoint URLs use it), or null. */
  customDomain: string | null;
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

/** Resolves an API key to its caller in one query; null when the key is unknown or revoked. */
export async function findCaller(request: FastifyRequest, key: string): Promise<Caller | null> {
  const rows = await request.em.getConnection().execute<CallerRow[]>(
    `select k.id as key_id, k.account_id, k.member_id, m.role, a.plan, a.allowed_ips, a.custom_domain
     from api_key k join member m on m.id = k.member_id join account a on a.id = k.account_id
     where k.key_hash = ?`,
    [hashApiKey(key)],
  );
  const row = rows[0];
  if (!row) return null;
  return { accountId: row.account_id, memberId: row.member_id, keyId: row.key_id, role: row.role, plan: row.plan, allowedIps: row.allowed_ips, customDomain: row.custom_domain };
}

/** Reads `Authorization: Bearer hk_…` and resolves the key's caller; revoked keys fail at once (no cache). */
async function authenticate(request: FastifyRequest): Promise<void> {
  const header = request.headers.authorization;
  if (!header?.trim()) throw new HookError(AUTHENTICATION_REQUIRED);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const key = match?.[1];
  if (!key || !looksLikeApiKey(key)) throw new HookError(INVALID_API_KEY);
  const caller = await findCaller(request, key);
  if (!caller) throw new HookError(INVALID_API_KEY);
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
