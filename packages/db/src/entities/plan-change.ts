import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { Plan } from '@hook/core';

/** One change of an account's plan, kept for its plan history. */
export const PlanChange = defineEntity({
  name: 'PlanChange',
  tableName: 'plan_change',
  properties: {
    id: p.string().primary(),
    accountId: p.string(),
    fromPlan: p.string().$type<Plan>(),
    toPlan: p.string().$type<Plan>(),
    changedAt: p.datetime(),
  },
});

export type PlanChangeEntity = InferEntity<typeof PlanChange>;
