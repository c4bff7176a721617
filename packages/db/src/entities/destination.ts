import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { DestinationType, EndpointStatus, OrderingSettings, QueueTarget, SignatureScheme } from '@hook/core';

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
    /** A queue destination's target on its broker (its URL is `url`); null for url and cli. */
    target: p.json<QueueTarget>().nullable(),
    /** How it signs in, as shown (no secret): `{type, username?, header_names?, token_url?, client_id?, scope?, audience?}`. */
    auth: p.json<StoredAuth>().nullable(),
    /** Its TLS settings as shown: the client certificate and CA (PEM); the key is in `credentials`. */
    tls: p.json<StoredTls>().nullable(),
    /** The secret parts of auth and tls (password, token, header values, client secret, client key) as sealed JSON (destination-credentials.ts). */
    credentials: p.text().nullable(),
    /** v1 (HMAC, whsec_ secrets) or v1a (ed25519, whsk_ keys). */
    signatureScheme: p.string().$type<SignatureScheme>().default('v1'),
    /** v1a: the whpk_ public key of `secret`; null for v1. */
    publicKey: p.string().nullable(),
    /** Ordered delivery (docs/delivery.md#ordered-delivery); null: unordered. */
    ordering: p.json<OrderingSettings>().nullable(),
    /** Seconds each event waits before its first attempt; null: none. */
    delaySeconds: p.integer().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});

/** A destination's auth as stored in the clear: everything but its secret. */
export interface StoredAuth {
  type: 'basic' | 'bearer' | 'headers' | 'oauth2';
  username?: string;
  header_names?: string[];
  token_url?: string;
  client_id?: string;
  scope?: string | null;
  audience?: string | null;
}

/** A destination's TLS settings as stored in the clear: the certificates, not the key. */
export interface StoredTls {
  client_certificate: string | null;
  ca: string | null;
  client_key_set: boolean;
}

export type DestinationEntity = InferEntity<typeof Destination>;
