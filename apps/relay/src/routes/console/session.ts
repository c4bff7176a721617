import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CONSOLE_SESSION_INVALID, HookError, INVALID_API_KEY, looksLikeApiKey } from '@hook/core';
import { CONSOLE_SESSION_MAX_MS, deleteConsoleSession, insertConsoleSession } from '@hook/db';
import { CONSOLE_COOKIE, consoleTokenOf, findCaller, findConsoleCaller, hashConsoleToken } from '../../plugins/auth.ts';
import { errorResponses, IdOf } from '../../schemas.ts';

/** Bytes of randomness in a console session token. */
const CONSOLE_TOKEN_BYTES = 32;

/**
 * The session cookie: HttpOnly (page scripts cannot read it), SameSite=Strict (other
 * sites' requests do not carry it), Secure when the request came over https (directly, or
 * through a proxy the relay trusts: HOOK_TRUST_PROXY and x-forwarded-proto).
 */
function sessionCookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${CONSOLE_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSeconds}${secure}`;
}

const SessionSchema = Type.Object({
  account_id: IdOf('account', 'The account signed in'),
  member_id: IdOf('member', 'The member the key belongs to'),
  role: Type.Enum(['admin', 'member']),
  key_prefix: Type.String({ description: 'The first characters of the API key the session was opened with' }),
});

/**
 * `/console/session`: signing the web console in and out with an API key
 * (docs/console.md#how-it-works). The key is checked once and never kept by the browser:
 * it gets a random token in an HttpOnly cookie, stored here only as a hash beside the key,
 * so revoking the key ends the session at once.
 */
export async function consoleSessionRoutes(app: FastifyInstance): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post('/console/session', {
    schema: {
      tags: ['console'],
      summary: 'Sign the web console in with an API key: sets the HttpOnly session cookie hook_console (no auth header; the key goes in the body)',
      body: Type.Object({ api_key: Type.String({ maxLength: 200, description: 'hk_…: the API key to sign in with' }) }, { additionalProperties: false }),
      response: { 204: Type.Null({ description: 'Signed in; the cookie is set' }), ...errorResponses },
    },
  }, async (request, reply) => {
    const key = request.body.api_key.trim();
    const caller = looksLikeApiKey(key) ? await findCaller(request, key) : null;
    if (!caller) throw new HookError(INVALID_API_KEY);
    const token = randomBytes(CONSOLE_TOKEN_BYTES).toString('base64url');
    await insertConsoleSession(request.em, { tokenHash: hashConsoleToken(token), keyId: caller.keyId, accountId: caller.accountId, now: new Date() });
    return reply.code(204).header('set-cookie', sessionCookie(request, token, CONSOLE_SESSION_MAX_MS / 1000)).header('cache-control', 'no-store').send(null);
  });

  api.get('/console/session', {
    schema: {
      tags: ['console'],
      summary: 'Who the console is signed in as (the hook_console cookie), or 401 console_session_invalid',
      response: { 200: SessionSchema, ...errorResponses },
    },
  }, async (request, reply) => {
    const token = consoleTokenOf(request);
    const caller = token === undefined ? null : await findConsoleCaller(request, token);
    if (!caller) throw new HookError(CONSOLE_SESSION_INVALID);
    const [key] = await request.em.getConnection().execute<{ prefix: string }[]>('select prefix from api_key where id = ?', [caller.keyId]);
    reply.header('cache-control', 'no-store');
    return { account_id: caller.accountId, member_id: caller.memberId, role: caller.role, key_prefix: key!.prefix };
  });

  api.delete('/console/session', {
    schema: {
      tags: ['console'],
      summary: 'Sign the console out: ends the session and clears the cookie (204 even when there was none)',
      response: { 204: Type.Null({ description: 'Signed out' }), ...errorResponses },
    },
  }, async (request, reply) => {
    const token = consoleTokenOf(request);
    if (token !== undefined) await deleteConsoleSession(request.em, hashConsoleToken(token));
    return reply.code(204).header('set-cookie', sessionCookie(request, '', 0)).send(null);
  });
}
