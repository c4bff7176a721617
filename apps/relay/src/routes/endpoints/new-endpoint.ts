import { generateSigningSecret, newId, newIngestId } from '@hook/core';
import { sealSigningSecret, type SecretBoxOwner } from '@hook/db';

/** Where a new endpoint's events go, as the API takes it. */
export type DestinationInput = { type: 'url'; url?: string } | { type: 'cli'; url?: string } | { type: string; url?: string };

export function destinationColumns(destination: DestinationInput): { destinationType: 'cli' | 'url'; destinationUrl: string | null } {
  return destination.type === 'url' ? { destinationType: 'url', destinationUrl: destination.url! } : { destinationType: 'cli', destinationUrl: null };
}

/** The columns of a new, active endpoint: a fresh ingest id and signing secret (sealed with `em`'s key), no rotation yet. */
export function newEndpointColumns(fields: { id?: string; accountId: string; name: string; destination: DestinationInput }, now: Date, em: SecretBoxOwner) {
  return {
    id: fields.id ?? newId('endpoint'),
    accountId: fields.accountId,
    name: fields.name,
    ingestId: newIngestId(),
    status: 'active' as const,
    ...destinationColumns(fields.destination),
    secret: sealSigningSecret(em, generateSigningSecret()),
    previousSecret: null,
    previousSecretExpiresAt: null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
}
