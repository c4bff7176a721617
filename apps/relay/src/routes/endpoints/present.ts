import type { FastifyRequest } from 'fastify';
import type { EndpointStatus } from '@hook/core';

export interface EndpointRow {
  id: string;
  name: string;
  ingestId: string;
  status: EndpointStatus;
  destinationType: 'cli' | 'url';
  destinationUrl?: string | null;
  transformationCode?: string | null;
  filter?: Record<string, unknown> | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The base URL clients reach the relay at: HOOK_PUBLIC_URL when set, else what this
 * request used (its scheme and Host), so URLs work however the relay was reached. When
 * the caller's account has a custom_domain, that host takes the place of the relay's.
 */
export function publicBaseUrl(request: FastifyRequest, configured: string | undefined): string {
  const base = configured ?? `${request.protocol}://${request.host}`;
  const customDomain = request.caller?.customDomain;
  return customDomain ? onCustomDomain(base, customDomain) : base;
}

/** `base` with its host swapped for `domain`, keeping scheme, port and path: http://127.0.0.1:3000 → http://hooks.acme.test:3000. */
export function onCustomDomain(base: string, domain: string): string {
  const url = new URL(base);
  url.hostname = domain;
  return url.href.replace(/\/+$/, '');
}

export function presentEndpoint(endpoint: EndpointRow, baseUrl: string) {
  return {
    id: endpoint.id,
    name: endpoint.name,
    url: `${baseUrl}/v1/ingest/${endpoint.ingestId}`,
    status: endpoint.status,
    destination:
      endpoint.destinationType === 'url' ? { type: 'url' as const, url: endpoint.destinationUrl! } : { type: 'cli' as const },
    transformation: endpoint.transformationCode ? { code: endpoint.transformationCode } : null,
    filter: endpoint.filter ?? null,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}
