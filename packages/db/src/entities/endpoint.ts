import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { EndpointStatus } from '@hook/core';

/**
 * An endpoint: an ingest URL; where its events go are its destinations (Destination). Deleting one sets `deletedAt`
 * so its events stay in the history for the retention period.
 */
export const Endpoint = defineEntity({
  name: 'Endpoint',
  tableName: 'endpoint',
  properties: {
    id: p.string().primary(),
    accountId: p.string(),
    /** `notifications`: the hidden endpoint that delivers the account's own notifications. */
    kind: p.string().$type<'user' | 'notifications'>().default('user'),
    name: p.string(),
    ingestId: p.string().unique(),
    status: p.string().$type<EndpointStatus>(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});

export type EndpointEntity = InferEntity<typeof Endpoint>;
