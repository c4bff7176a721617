import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { EndpointStatus } from '@hook/core';

/**
 * An endpoint: an ingest URL plus where its events go. Deleting one sets `deletedAt`
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
    destinationType: p.string().$type<'cli' | 'url'>(),
    destinationUrl: p.string().nullable(),
    secret: p.string(),
    previousSecret: p.string().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    /** JavaScript run before each delivery (docs/transformations.md); null: the stored bytes go as they are. */
    transformationCode: p.text().nullable(),
    /** Which requests are delivered (docs/filters.md); null: all. */
    filter: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});

export type EndpointEntity = InferEntity<typeof Endpoint>;
