import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AUTHENTICATION_REQUIRED, hashApiKey, HookError, INVALID_API_KEY, looksLikeApiKey } from '@hook/core';
import { ApiKey } from '@hook/db';

declare module 'fastify' {
  interface FastifyRequest {
    /** The account the request's API key belongs to (authenticated routes only). */
    accountId: string;
    /** The member the request's API key belongs to (authenticated routes only). */
    memberId: string;
  }
}

/** Reads `Authorization: Bearer hk_…` and resolves the key's account; revoked keys fail at once (no cache). */
async function authenticate(request: FastifyRequest): Promise<void> {
  const header = request.headers.authorization;
  if (!header?.trim()) throw new HookError(AUTHENTICATION_REQUIRED);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const key = match?.[1];
  if (!key || !looksLikeApiKey(key)) throw new HookError(INVALID_API_KEY);
  const apiKey = await request.em.findOne(ApiKey, { keyHash: hashApiKey(key) }, { fields: ['accountId', 'memberId'] });
  if (!apiKey) throw new HookError(INVALID_API_KEY);
  request.accountId = apiKey.accountId;
  request.memberId = apiKey.memberId;
}

/** Every route registered inside `app` after this call needs an API key. */
export function requireApiKey(app: FastifyInstance): void {
  app.decorateRequest('accountId', '');
  app.decorateRequest('memberId', '');
  app.addHook('onRequest', authenticate);
}
