import type { FastifyRequest } from 'fastify';
import type { EndpointStatus } from '@hook/core';

export interface EndpointRow {
  id: string;
  name: string;
  ingestId: string;
  status: EndpointStatus;
  destinationType: 'cli' | 'url';
  destinationUrl?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The base URL clients reach the relay at: HOOK_PUBLIC_URL when set, else what this
 * request used (its scheme and Host), so URLs work however the relay was reached.
 */
export function publicBaseUrl(request: FastifyRequest, configured: string | undefined): string {
  return configured ?? `${request.protocol}://${request.host}`;
}

export function presentEndpoint(endpoint: EndpointRow, baseUrl: string) {
  return {
    id: endpoint.id,
    name: endpoint.name,
    url: `${baseUrl}/v1/ingest/${endpoint.ingestId}`,
    status: endpoint.status,
    destination:
      endpoint.destinationType === 'url' ? { type: 'url' as const, url: endpoint.destinationUrl! } : { type: 'cli' as const },
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}
