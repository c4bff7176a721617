import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** An API key, kept only as a SHA-256 hash; `prefix` is what listings show. */
export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_key',
  properties: {
    id: p.string().primary(),
    accountId: p.string(),
    /** The member the key belongs to; removing the member revokes its keys. */
    memberId: p.string(),
    name: p.string().nullable(),
    prefix: p.string(),
    keyHash: p.string().unique(),
    createdAt: p.datetime(),
  },
});

export type ApiKeyEntity = InferEntity<typeof ApiKey>;
