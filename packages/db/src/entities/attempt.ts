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
    /** The kind of failure it was (core's AttemptKind, set where the attempt failed: what an issue groups by); null for a success and for attempts made before issues. */
    failureKind: p.string().nullable(),
    /**
     * The request as sent: its headers (the destination's credentials redacted) and, when a
     * transformation changed the body, the body's first bytes (core's storedRequestBody);
     * null body: the event's own. Null headers: nothing was sent, or made before they were kept.
     */
    requestHeaders: p.json<Record<string, string>>().nullable(),
    requestBody: p.blob().nullable(),
    /** The answer's headers, bounded (core's boundHeaders); null when no answer came, or made before they were kept. */
    responseHeaders: p.json<Record<string, string>>().nullable(),
  },
});

export type AttemptEntity = InferEntity<typeof Attempt>;
