import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { VerificationResult } from '@hook/core';

/** One request received at an ingest URL; `body` holds its exact bytes. */
export const Event = defineEntity({
  name: 'Event',
  tableName: 'event',
  properties: {
    id: p.string().primary(),
    accountId: p.string(),
    endpointId: p.string(),
    type: p.string().nullable(),
    method: p.string(),
    path: p.string(),
    query: p.string(),
    headers: p.json<Record<string, string>>(),
    body: p.blob().lazy(),
    contentType: p.string().nullable(),
    size: p.integer(),
    receivedAt: p.datetime(),
    /** What signature verification found; null when the endpoint verified nothing. */
    verification: p.json<VerificationResult>().nullable(),
    /** The provider whose handshake this request was (answered at ingest, not delivered); null otherwise. */
    handshake: p.string().nullable(),
    /** The key the event was stored under when its endpoint drops duplicates (docs/sources.md, Duplicates); null otherwise. */
    dedupeKey: p.string().nullable(),
    /** The W3C traceparent of the ingest span that stored it (docs/deployment.md#tracing); null when the relay was not tracing. */
    traceParent: p.string().nullable(),
    /** How many deliveries (destinations) the event has; its status is theirs (event-summaries.ts). */
    deliveryCount: p.integer(),
  },
});

export type EventEntity = InferEntity<typeof Event>;
