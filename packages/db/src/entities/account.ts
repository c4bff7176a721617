import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { Plan } from '@hook/core';

export const Account = defineEntity({
  name: 'Account',
  tableName: 'account',
  properties: {
    id: p.string().primary(),
    plan: p.string().$type<Plan>(),
    email: p.string().nullable(),
    /** CIDRs API calls must come from; empty allows any address. */
    allowedIps: p.array().$type<string[]>().default([]),
    customDomain: p.string().nullable(),
    /** The account's own retention (enterprise only); null keeps the plan's. */
    retentionDays: p.integer().nullable(),
    createdAt: p.datetime(),
  },
});

export type AccountEntity = InferEntity<typeof Account>;
