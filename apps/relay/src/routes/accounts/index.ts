import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LockMode, type EntityManager } from '@mikro-orm/core';
import { newId, PLAN_LIMITS, type Plan } from '@hook/core';
import { Account, PlanChange } from '@hook/db';
import { createAccount, createApiKey } from './new-account.ts';
import { requireAdmin } from '../../plugins/auth.ts';
import { AccountDetailsSchema, AccountSchema, errorResponses, Plan as PlanSchema } from '../../schemas.ts';

type AccountRow = { id: string; plan: Plan; email?: string | null; createdAt: Date };
type PlanChangeRow = { id: string; fromPlan: Plan; toPlan: Plan; changedAt: Date };

export function presentAccount(account: AccountRow) {
  return { id: account.id, plan: account.plan, email: account.email ?? null, created_at: account.createdAt.toISOString() };
}

function presentLimits(plan: Plan) {
  const limits = PLAN_LIMITS[plan];
  return { events_per_month: limits.eventsPerMonth, endpoints: limits.endpoints, retention_days: limits.retentionDays };
}

function presentPlanChange(change: PlanChangeRow) {
  return { id: change.id, from_plan: change.fromPlan, to_plan: change.toPlan, changed_at: change.changedAt.toISOString() };
}

/** The account with its plan's limits and its whole plan history, newest first. */
async function accountDetails(em: EntityManager, account: AccountRow) {
  // Ids are time-sortable, so id order is change order even within one millisecond.
  const history = await em.find(PlanChange, { accountId: account.id }, { orderBy: { id: 'desc' } });
  return { account: presentAccount(account), limits: presentLimits(account.plan), plan_history: history.map(presentPlanChange) };
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
      summary: 'Create an account and its first API key (no auth; rate-limited per client address)',
      body: Type.Object({
        email: Type.Optional(Type.String({ format: 'email', maxLength: 254, description: 'A contact address for the account; stored and shown, never verified or mailed' })),
      }, { additionalProperties: false }),
      response: {
        201: Type.Object({ account: AccountSchema, api_key: Type.String({ description: 'hk_…, shown only here' }) }),
        ...errorResponses,
      },
    },
  }, async (request, reply) => {
    const now = new Date();
    const { account, admin } = createAccount(request.em, { email: request.body.email ?? null, now });
    const { secret } = createApiKey(request.em, { accountId: account.id, memberId: admin.id, name: 'default', now });
    await request.em.flush();
    return reply.code(201).send({ account: presentAccount(account), api_key: secret });
  });
}

const security = [{ bearerAuth: [] }];

/** `GET /v1/account` and `POST /v1/account/plan`: the caller's account and its plan. */
export async function accountRoutes(app: FastifyInstance): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get('/v1/account', {
    schema: {
      tags: ['accounts'],
      summary: "The account of the API key, its plan's limits and its plan history",
      security,
      response: { 200: AccountDetailsSchema, ...errorResponses },
    },
  }, async (request) => {
    const account = await request.em.findOneOrFail(Account, { id: request.accountId });
    return accountDetails(request.em, account);
  });

  api.post('/v1/account/plan', {
    schema: {
      tags: ['accounts'],
      summary: 'Change the plan at once (no payment step); each change is recorded in plan_history',
      security,
      body: Type.Object({ plan: PlanSchema }, { additionalProperties: false }),
      response: { 200: AccountDetailsSchema, ...errorResponses },
    },
  }, async (request) => {
    requireAdmin(request, 'change the plan');
    const { plan } = request.body;
    // The account row is locked so concurrent changes take turns and each history row's
    // from_plan is the plan that was really replaced.
    const account = await request.em.transactional(async (em) => {
      const current = await em.findOneOrFail(Account, { id: request.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (current.plan === plan) return current; // already on it: nothing changes, nothing is recorded
      em.create(PlanChange, { id: newId('planChange'), accountId: current.id, fromPlan: current.plan, toPlan: plan, changedAt: new Date() });
      current.plan = plan;
      return current;
    });
    return accountDetails(request.em, account);
  });
}
