import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { Plan } from '@hook/core';

export const Account = defineEntity({
  name: 'Account',
  tableName: 'account',
  properties: {
    id: p.string().primary(),
    plan: p.string().$type<Plan>(),
    email: p.string().nullable(),
    createdAt: p.datetime(),
  },
});

export type AccountEntity = InferEntity<typeof Account>;
