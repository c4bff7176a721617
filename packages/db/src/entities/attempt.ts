import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { AttemptTrigger } from '@hook/core';

/** One try at delivering an event, kept for the event's history. */
export const Attempt = defineEntity({
  name: 'Attempt',
  tableName: 'attempt',
  properties: {
    id: p.string().primary(),
    eventId: p.string(),
    destinationId: p.string().nullable(),
    accountId: p.string(),
    /** Its event's retention class: with the event id, the partition that holds it (docs/retention.md#partitions). */
    retentionClass: p.smallint(),
    n: p.integer(),
    trigger: p.string().$type<AttemptTrigger>(),
    startedAt: p.datetime(),
    durationMs: p.integer(),
    responseStatus: p.integer().nullable(),
    responseBody: p.text().nullable(),
    error: p.string().nullable(),
  },
});

export type AttemptEntity = InferEntity<typeof Attempt>;
