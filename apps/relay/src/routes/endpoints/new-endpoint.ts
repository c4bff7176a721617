import type { EntityManager } from '@mikro-orm/postgresql';
import { generateSigningSecret, newId, newIngestId, type DestinationType, type VerificationSettings, type EndpointResponse, type HandshakeSettings, type DedupeSettings } from '@hook/core';
import { Destination, Endpoint, sealSigningSecret, type DestinationEntity, type EndpointEntity } from '@hook/db';

/** Where events go, as the API takes it. */
export type DestinationInput = { type: 'url'; url?: string } | { type: 'cli'; url?: string } | { type: string; url?: string };

export function destinationColumns(destination: DestinationInput): { type: DestinationType; url: string | null } {
  return destination.type === 'url' ? { type: 'url', url: destination.url! } : { type: 'cli', url: null };
}

/** What a new destination can be given. */
export interface NewDestinationFields {
  destination: DestinationInput;
  transformationCode?: string | null;
  filter?: Record<string, unknown> | null;
  ratePerSecond?: number | null;
  maxInFlight?: number | null;
}

/**
 * Creates (in `em`, to flush) a new active destination of an endpoint at `position`, with
 * a fresh signing secret sealed with `em`'s key. An endpoint's first destination takes
 * the endpoint's ULID under `dst_`, as migrated ones do.
 */
export function createDestination(em: EntityManager, endpoint: Pick<EndpointEntity, 'id' | 'accountId'>, position: number, fields: NewDestinationFields, now: Date): DestinationEntity {
  return em.create(Destination, {
    id: position === 0 ? `dst_${endpoint.id.slice('ep_'.length)}` : newId('destination'),
    accountId: endpoint.accountId,
    endpointId: endpoint.id,
    position,
    ...destinationColumns(fields.destination),
    secret: sealSigningSecret(em, generateSigningSecret()),
    previousSecret: null,
    previousSecretExpiresAt: null,
    status: 'active',
    transformationCode: fields.transformationCode ?? null,
    filter: fields.filter ?? null,
    ratePerSecond: fields.ratePerSecond ?? null,
    maxInFlight: fields.maxInFlight ?? null,
    rateWindowStart: null,
    rateWindowCount: 0,
    consecutiveFailures: 0,
    failingSince: null,
    disabledReason: null,
    listenerSeenAt: null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  });
}

/** Creates (in `em`, to flush) a new, active endpoint with a fresh ingest id and its first destination. */
export function createEndpoint(
  em: EntityManager,
  fields: { id?: string; accountId: string; name: string; verification?: { verification: VerificationSettings; verificationSecret: string } | null; response?: EndpointResponse | null; handshake?: { handshake: HandshakeSettings; handshakeSecret: string | null } | null; dedupe?: DedupeSettings | null } & NewDestinationFields,
  now: Date,
): { endpoint: EndpointEntity; destinations: DestinationEntity[] } {
  const endpoint = em.create(Endpoint, {
    id: fields.id ?? newId('endpoint'),
    accountId: fields.accountId,
    kind: 'user',
    name: fields.name,
    ingestId: newIngestId(),
    status: 'active',
    verification: fields.verification?.verification ?? null,
    verificationSecret: fields.verification?.verificationSecret ?? null,
    response: fields.response ?? null,
    handshake: fields.handshake?.handshake ?? null,
    handshakeSecret: fields.handshake?.handshakeSecret ?? null,
    dedupe: fields.dedupe ?? null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  });
  return { endpoint, destinations: [createDestination(em, endpoint, 0, fields, now)] };
}
