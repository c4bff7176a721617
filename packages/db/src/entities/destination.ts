import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { DestinationType, EndpointStatus } from '@hook/core';

/**
 * Where an endpoint's events go: a URL, or `cli` (served by `hook listen`). An endpoint
 * has one or more; the first (position 0) is the one the v1 endpoint fields read and
 * write. Each has its own signing secret, status, transformation, filter, limits and
 * health (docs/delivery.md#destinations).
 */
export const Destination = defineEntity({
  name: 'Destination',
  tableName: 'destination',
  properties: {
    id: p.string().primary(),
    accountId: p.string(),
    endpointId: p.string(),
    position: p.integer(),
    type: p.string().$type<DestinationType>(),
    url: p.string().nullable(),
    secret: p.string(),
    previousSecret: p.string().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    status: p.string().$type<EndpointStatus>(),
    /** JavaScript run before each delivery (docs/transformations.md); null: the stored bytes go as they are. */
    transformationCode: p.text().nullable(),
    /** Which requests are delivered (docs/filters.md); null: all. */
    filter: p.json<Record<string, unknown>>().nullable(),
    /** Most deliveries started per second; null: no limit. */
    ratePerSecond: p.integer().nullable(),
    /** Most deliveries in flight at once; null: the relay's per-destination share. */
    maxInFlight: p.integer().nullable(),
    /** The current one-second window of `ratePerSecond`: when it began and how many deliveries it started (claim-due.ts). */
    rateWindowStart: p.datetime().nullable(),
    rateWindowCount: p.integer().default(0),
    /** Attempts that failed in a row (reset by any 2xx). */
    consecutiveFailures: p.integer().default(0),
    /** When the current run of failures began; null while the destination succeeds. */
    failingSince: p.datetime().nullable(),
    /** Why it was disabled: `gone_410`, `failing` or `user`. */
    disabledReason: p.string().nullable(),
    /** When a `hook listen` session serving it last said it was there (docs/listen.md); null: none lately. */
    listenerSeenAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});

export type DestinationEntity = InferEntity<typeof Destination>;
