import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { EventStatus } from '@hook/core';

/**
 * One event on its way to one destination: the delivery queue's row. Its status,
 * attempts, due time and lease are its own; the event's status summarises its
 * deliveries (docs/delivery.md#event-status).
 */
export const Delivery = defineEntity({
  name: 'Delivery',
  tableName: 'delivery',
  properties: {
    eventId: p.string().primary(),
    destinationId: p.string().primary(),
    accountId: p.string(),
    endpointId: p.string(),
    status: p.string().$type<EventStatus>(),
    attemptCount: p.integer(),
    autoAttempts: p.integer(),
    nextAttemptAt: p.datetime().nullable(),
    nextTrigger: p.string().$type<'auto' | 'replay'>(),
    leaseId: p.string().nullable(),
    lockedUntil: p.datetime().nullable(),
  },
});

export type DeliveryEntity = InferEntity<typeof Delivery>;
