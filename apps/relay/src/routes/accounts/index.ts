import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { apiKeyPrefix, DEFAULT_PLAN, generateApiKey, hashApiKey, newId } from '@hook/core';
import { Account, ApiKey } from '@hook/db';
import { AccountSchema, errorResponses } from '../../schemas.ts';

type AccountRow = { id: string; plan: string; createdAt: Date };

export function presentAccount(account: AccountRow) {
  return { id: account.id, plan: account.plan as typeof DEFAULT_PLAN, created_at: account.createdAt.toISOString() };
}

export interface AccountSignupOptions {
  /** Most accounts one client address may create per hour; 0 for no limit (HOOK_SIGNUP_RATE_LIMIT). */
  signupsPerAddressPerHour: number;
}

/** `POST /v1/accounts`: self-provisioning, no auth, rate-limited per client address. */
export async function accountSignupRoutes(app: FastifyInstance, { signupsPerAddressPerHour }: AccountSignupOptions): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post('/v1/accounts', {
    config: signupsPerAddressPerHour > 0 ? { rateLimit: { max: signupsPerAddressPerHour, timeWindow: '1 hour' } } : {},
    schema: {
      tags: ['accounts'],
      summary: 'Create an account and its first API key (no auth)',
      body: Type.Object({}, { additionalProperties: false }),
      response: {
        201: Type.Object({ account: AccountSchema, api_key: Type.String({ description: 'hk_…, shown only here' }) }),
        ...errorResponses,
      },
    },
  }, async (request, reply) => {
    const now = new Date();
    const apiKey = generateApiKey();
    const account = request.em.create(Account, { id: newId('account'), plan: DEFAULT_PLAN, createdAt: now });
    request.em.create(ApiKey, { id: newId('apiKey'), accountId: account.id, name: 'default', prefix: apiKeyPrefix(apiKey), keyHash: hashApiKey(apiKey), createdAt: now });
    await request.em.flush();
    return reply.code(201).send({ account: presentAccount(account), api_key: apiKey });
  });
}

/** `GET /v1/account`: the caller's account. */
export async function accountRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/v1/account', {
    schema: {
      tags: ['accounts'],
      summary: 'The account of the API key',
      security: [{ bearerAuth: [] }],
      response: { 200: Type.Object({ account: AccountSchema }), ...errorResponses },
    },
  }, async (request) => {
    const account = await request.em.findOneOrFail(Account, { id: request.accountId });
    return { account: presentAccount(account) };
  });
}
