import type { EntityManager } from '@mikro-orm/postgresql';
import { newId, newIngestId, type VerificationSettings, type EndpointResponse, type HandshakeSettings, type DedupeSettings, type SignatureScheme } from '@hook/core';
import { Destination, Endpoint, sealSigningSecret, type DestinationEntity, type EndpointEntity } from '@hook/db';
import { destinationColumns, newSigningSecret, type DestinationInput } from '../destinations/options.ts';

export { destinationColumns, type DestinationInput };

/** What a new destination can be given. */
export interface NewDestinationFields {
  destination: DestinationInput;
  transformationCode?: string | null;
  filter?: Record<string, unknown> | null;
  ratePerSecond?: number | null;
  maxInFlight?: number | null;
  /** v1 (the default) or v1a: the kind of secret it is made with. */
  signatureScheme?: SignatureScheme;
}

/**
 * Creates (in `em`, to flush) a new active destination of an endpoint at `position`, with
 * a fresh signing secret sealed with `em`'s key. An endpoint's first destination takes
 * the endpoint's ULID under `dst_`, as migrated ones do.
 */
export function createDestination(em: EntityManager, endpoint: Pick<EndpointEntity, 'id' | 'accountId'>, position: number, fields: NewDestinationFields, now: Date): DestinationEntity {
  const signing = newSigningSecret(fields.signatureScheme ?? 'v1');
  return em.create(Destination, {
    id: position === 0 ? `dst_${endpoint.id.slice('ep_'.length)}` : newId('destination'),
    accountId: endpoint.accountId,
    endpointId: endpoint.id,
    position,
    ...destinationColumns(fields.destination),
    secret: sealSigningSecret(em, signing.secret),
    signatureScheme: fields.signatureScheme ?? 'v1',
    publicKey: signing.publicKey,
    auth: null,
    tls: null,
    credentials: null,
    ordering: null,
    delaySeconds: null,
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
