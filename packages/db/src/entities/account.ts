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
    /** A hostname the account claimed for its endpoint URLs; it takes effect only once verified. */
    customDomain: p.string().nullable(),
    /** The random token the claim's DNS TXT record must hold (`_hook-challenge.<domain>`). */
    customDomainToken: p.string().nullable(),
    /** When the TXT record was found; null while the claim is pending. */
    customDomainVerifiedAt: p.datetime().nullable(),
    /** The account's own retention (enterprise only); null keeps the plan's. */
    retentionDays: p.integer().nullable(),
    createdAt: p.datetime(),
  },
});

export type AccountEntity = InferEntity<typeof Account>;
