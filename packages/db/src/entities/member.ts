import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export type MemberRole = 'admin' | 'member';

/** A team member of an account. Every API key belongs to one; admins manage members and the plan. */
export const Member = defineEntity({
  name: 'Member',
  tableName: 'member',
  properties: {
    id: p.string().primary(),
    accountId: p.string(),
    email: p.string().nullable(),
    role: p.string().$type<MemberRole>(),
    createdAt: p.datetime(),
  },
});

export type MemberEntity = InferEntity<typeof Member>;
