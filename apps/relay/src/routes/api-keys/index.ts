import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { API_KEY_NOT_FOUND, HookError, LAST_API_KEY } from '@hook/core';
import { createApiKey } from '../accounts/new-account.ts';
import { ApiKey, Member } from '@hook/db';
import { requireAdmin } from '../../plugins/auth.ts';
import { lockAccount } from '../members/index.ts';
import { ApiKeyCreateSchema, ApiKeySchema, CreatedApiKeySchema, errorResponses, IdParams, Page, PageQuery } from '../../schemas.ts';
import { afterCursor, fetchSize, toPage } from '../pagination.ts';

type ApiKeyRow = { id: string; memberId: string; name?: string | null; prefix: string; createdAt: Date };

function presentApiKey(key: ApiKeyRow) {
  return { id: key.id, name: key.name ?? null, prefix: key.prefix, member_id: key.memberId, created_at: key.createdAt.toISOString() };
}

const security = [{ bearerAuth: [] }];

export async function apiKeyRoutes(app: FastifyInstance): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post('/v1/api-keys', {
    schema: {
      tags: ['api-keys'],
      summary: 'Create an API key of the calling member (shown once)',
      security,
      body: ApiKeyCreateSchema,
      response: { 201: CreatedApiKeySchema, ...errorResponses },
    },
  }, async (request, reply) => {
    const { key, secret } = createApiKey(request.em, { accountId: request.accountId, memberId: request.memberId, name: request.body?.name ?? null, now: new Date() });
    await request.em.flush();
    return reply.code(201).send({ ...presentApiKey(key), api_key: secret });
  });

  api.get('/v1/api-keys', {
    schema: {
      tags: ['api-keys'],
      summary: "List the account's API keys (prefixes only) with the member each belongs to, newest first",
      security,
      querystring: Type.Object(PageQuery, { additionalProperties: false }),
      response: { 200: Page(ApiKeySchema), ...errorResponses },
    },
  }, async (request) => {
    const { limit, cursor } = request.query;
    const rows = await request.em.find(
      ApiKey,
      { accountId: request.accountId, ...afterCursor(cursor) },
      { orderBy: { id: 'desc' }, limit: fetchSize(limit) },
    );
    return toPage(rows, limit, presentApiKey);
  });

  api.delete('/v1/api-keys/:id', {
    schema: {
      tags: ['api-keys'],
      summary: "Revoke an API key; it stops working at once. Members may revoke their own keys, admins anyone's",
      security,
      params: IdParams('apiKey', 'Key id'),
      response: { 204: Type.Null(), ...errorResponses },
    },
  }, async (request, reply) => {
    const { id } = request.params;
    // The account lock (taken by every team change) makes concurrent revocations take
    // turns, so two of them can never remove the last two admin keys together.
    await request.em.transactional(async (em) => {
      await lockAccount(em, request.accountId);
      const key = await em.findOne(ApiKey, { id, accountId: request.accountId });
      if (!key) throw new HookError(API_KEY_NOT_FOUND, [id]);
      if (key.memberId !== request.memberId) requireAdmin(request, "revoke other members' API keys");
      // The account must keep a key of an admin, or nobody could manage it again.
      const owner = await em.findOneOrFail(Member, { id: key.memberId });
      if (owner.role === 'admin') {
        const [adminKeys] = await em.execute<{ n: number }[]>(
          `select count(*)::int as n from api_key k join member m on m.id = k.member_id where k.account_id = ? and m.role = 'admin'`,
          [request.accountId],
        );
        if ((adminKeys?.n ?? 0) <= 1) throw new HookError(LAST_API_KEY, [id]);
      }
      await em.nativeDelete(ApiKey, { id, accountId: request.accountId });
    });
    return reply.code(204).send(null);
  });
}
