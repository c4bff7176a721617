import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { DedupeSettings, EndpointResponse, EndpointStatus, HandshakeSettings, VerificationSettings } from '@hook/core';

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
    /** Signature verification at ingest (docs/sources.md); null: every request is taken as it is. */
    verification: p.json<VerificationSettings>().nullable(),
    /** The verification secret, sealed (signing-secrets.ts); never shown. */
    verificationSecret: p.text().nullable().lazy(),
    /** The answer to a stored request (docs/sources.md, Custom responses); null: the default `{"id","status"}` JSON. */
    response: p.json<EndpointResponse>().nullable(),
    /** The handshake answered at the ingest URL (docs/sources.md, Handshakes); null: none. */
    handshake: p.json<HandshakeSettings>().nullable(),
    /** Meta's verify token, Zoom's secret token or X's consumer secret, sealed (signing-secrets.ts); never shown. */
    handshakeSecret: p.text().nullable().lazy(),
    /** Where a request's dedupe key is (docs/sources.md, Duplicates); null: every request is stored. */
    dedupe: p.json<DedupeSettings>().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});

export type EndpointEntity = InferEntity<typeof Endpoint>;
