import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { customDomainChallenge, HookError, newId, nextUsageMonthStart, PLAN_CHANGE_BLOCKED, PLAN_LIMITS, retentionDaysOf, type Plan } from '@hook/core';
import { Account, enqueueNotification, ensureClassPartitions, PlanChange, readAccountUsage, type AccountUsage } from '@hook/db';
import { createAccount, createApiKey } from './new-account.ts';
import { requireAdmin } from '../../plugins/auth.ts';
import { accountCreationRateLimit } from '../../plugins/rate-limit.ts';
import { AccountDetailsSchema, errorResponses, Plan as PlanSchema, SignupRequestSchema, SignupSchema } from '../../schemas.ts';

type AccountRow = {
  id: string; plan: Plan; email?: string | null; allowedIps?: string[]; retentionDays?: number | null; createdAt: Date;
  customDomain?: string | null; customDomainToken?: string | null; customDomainVerifiedAt?: Date | null;
};
type PlanChangeRow = { id: string; fromPlan: Plan; toPlan: Plan; changedAt: Date };

export function presentAccount(account: AccountRow) {
  return {
    id: account.id,
    plan: account.plan,
    email: account.email ?? null,
    allowed_ips: account.allowedIps ?? [],
    custom_domain: account.customDomain ?? null,
    custom_domain_status: account.customDomain ? (account.customDomainVerifiedAt ? 'verified' as const : 'pending' as const) : null,
    // Shown only while pending: once verified, the record may be removed.
    custom_domain_verification: account.customDomain && !account.customDomainVerifiedAt ? customDomainChallenge(account.customDomain, account.customDomainToken ?? '') : null,
    retention_days: account.retentionDays ?? null,
    created_at: account.createdAt.toISOString(),
  };
}

function presentLimits(plan: Plan, accountRetentionDays: number | null = null) {
  const limits = PLAN_LIMITS[plan];
  return {
    events_per_month: limits.eventsPerMonth,
    endpoints: limits.endpoints,
    members: limits.members,
    retention_days: retentionDaysOf(plan, accountRetentionDays),
    api_requests_per_minute: limits.apiRequestsPerMinute,
    transformation_cpu_ms_per_minute: limits.transformationCpuMsPerMinute,
    ip_allowlist: limits.ipAllowlist,
    custom_domain: limits.customDomain,
    custom_retention: limits.customRetention,
    price_usd_per_month: limits.priceUsdPerMonth,
    support: limits.support,
  };
}

function presentUsage(plan: Plan, usage: AccountUsage, now: Date) {
  const allowance = PLAN_LIMITS[plan].eventsPerMonth;
  return {
    month: usage.month,
    events_accepted: usage.eventsAccepted,
    events_remaining: allowance === null ? null : Math.max(0, allowance - usage.eventsAccepted),
    resets_at: nextUsageMonthStart(now).toISOString(),
    endpoints: usage.endpoints,
    members: usage.members,
    transformation_cpu_ms: usage.transformationCpuMs,
  };
}

function presentPlanChange(change: PlanChangeRow) {
  return { id: change.id, from_plan: change.fromPlan, to_plan: change.toPlan, changed_at: change.changedAt.toISOString() };
}

/** The account with its plan's limits, this month's usage and its whole plan history, newest first. */
export async function accountDetails(em: EntityManager, account: AccountRow) {
  const now = new Date();
  // Ids are time-sortable, so id order is change order even within one millisecond.
  const [history, usage] = await Promise.all([
    em.find(PlanChange, { accountId: account.id }, { orderBy: { id: 'desc' } }),
    readAccountUsage(em, account.id, now),
  ]);
  return {
    account: presentAccount(account),
    limits: presentLimits(account.plan, account.retentionDays ?? null),
    usage: presentUsage(account.plan, usage, now),
    plan_history: history.map(presentPlanChange),
  };
}

/** Why the account does not fit `plan` (one sentence per excess), or none when it does. */
async function excessOver(em: EntityManager, account: AccountRow, plan: Plan): Promise<string[]> {
  const limits = PLAN_LIMITS[plan];
  const usage = await readAccountUsage(em, account.id, new Date());
  const excess: string[] = [];
  if (limits.endpoints !== null && usage.endpoints > limits.endpoints) {
    excess.push(`it has ${usage.endpoints} endpoints and ${plan} allows ${limits.endpoints}`);
  }
  if (limits.members !== null && usage.members > limits.members) {
    excess.push(`it has ${usage.members} members and ${plan} allows ${limits.members}`);
  }
  if (!limits.ipAllowlist && (account.allowedIps?.length ?? 0) > 0) excess.push(`allowed_ips is set and ${plan} has no IP allowlisting`);
  if (!limits.customDomain && account.customDomain) excess.push(`custom_domain is set and ${plan} has no custom domains`);
  return excess;
}

export interface AccountSignupOptions {
  /** Most accounts one client address (an IPv6 client's /64) may create per hour, playground claims included; 0 for no limit (HOOK_SIGNUP_RATE_LIMIT). */
  signupsPerAddressPerHour: number;
}

/** `POST /v1/accounts`: self-provisioning, no auth, rate-limited per client address. */
export async function accountSignupRoutes(app: FastifyInstance, { signupsPerAddressPerHour }: AccountSignupOptions): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post('/v1/accounts', {
    config: accountCreationRateLimit(signupsPerAddressPerHour),
    schema: {
      tags: ['accounts'],
      summary: 'Create an account and its first API key (no auth; rate-limited per client address)',
      body: SignupRequestSchema,
      response: { 201: SignupSchema, ...errorResponses },
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
      // Endpoints and members are added under this same lock, so the check holds at commit.
      const excess = await excessOver(em, current, plan);
      if (excess.length > 0) throw new HookError(PLAN_CHANGE_BLOCKED, [plan, excess.join('; ')]);
      const change = em.create(PlanChange, { id: newId('planChange'), accountId: current.id, fromPlan: current.plan, toPlan: plan, changedAt: new Date() });
      await enqueueNotification(em, {
        accountId: current.id,
        type: 'plan.changed',
        data: { from_plan: change.fromPlan, to_plan: change.toPlan, changed_at: change.changedAt.toISOString() },
      });
      current.plan = plan;
      return current;
    });
    // its events are stored in its new retention's partitions from now on (docs/retention.md#partitions)
    await ensureClassPartitions(request.em, retentionDaysOf(account.plan, account.retentionDays ?? null));
    return accountDetails(request.em, account);
  });
}
