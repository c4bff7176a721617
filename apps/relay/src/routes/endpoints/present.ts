import type { FastifyRequest } from 'fastify';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Destination, type DestinationEntity, type EndpointEntity } from '@hook/db';
import { presentVerification } from './verification.ts';
import { presentHandshake } from './handshake.ts';
import { presentDestinationOptions, presentDestinationTarget } from '../destinations/options.ts';

/**
 * The base URL clients reach the relay at: HOOK_PUBLIC_URL when set, else what this
 * request used (its scheme and Host), so URLs work however the relay was reached. When
 * the caller's account has a verified custom_domain, that host takes the place of the relay's.
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

/** The live destinations of some endpoints, each endpoint's in position order. */
export async function destinationsOf(em: EntityManager, endpointIds: readonly string[]): Promise<Map<string, DestinationEntity[]>> {
  const byEndpoint = new Map<string, DestinationEntity[]>(endpointIds.map((id) => [id, []]));
  if (endpointIds.length === 0) return byEndpoint;
  const rows = await em.find(Destination, { endpointId: { $in: [...endpointIds] }, deletedAt: null }, { orderBy: { endpointId: 'asc', position: 'asc' } });
  for (const row of rows) byEndpoint.get(row.endpointId)?.push(row);
  return byEndpoint;
}

export { presentDestinationTarget };

export function presentDestination(destination: DestinationEntity) {
  return {
    id: destination.id,
    endpoint_id: destination.endpointId,
    position: destination.position,
    destination: presentDestinationTarget(destination),
    status: destination.status,
    disabled_reason: (destination.disabledReason ?? null) as 'gone_410' | 'failing' | 'user' | null,
    transformation: destination.transformationCode ? { code: destination.transformationCode } : null,
    filter: destination.filter ?? null,
    rate_per_second: destination.ratePerSecond ?? null,
    max_in_flight: destination.maxInFlight ?? null,
    ...presentDestinationOptions(destination),
    health: { consecutive_failures: destination.consecutiveFailures, failing_since: destination.failingSince?.toISOString() ?? null },
    created_at: destination.createdAt.toISOString(),
    updated_at: destination.updatedAt.toISOString(),
  };
}

/** An endpoint as the API shows it: its own fields, its first destination's as the v1 fields, and every destination. */
export function presentEndpoint(endpoint: EndpointEntity, destinations: readonly DestinationEntity[], baseUrl: string) {
  const first = destinations[0]!;
  return {
    id: endpoint.id,
    name: endpoint.name,
    url: `${baseUrl}/v1/ingest/${endpoint.ingestId}`,
    status: endpoint.status,
    destination: presentDestinationTarget(first),
    transformation: first.transformationCode ? { code: first.transformationCode } : null,
    filter: first.filter ?? null,
    destinations: destinations.map(presentDestination),
    verification: presentVerification(endpoint.verification),
    response: endpoint.response ?? null,
    handshake: presentHandshake(endpoint.handshake),
    dedupe: endpoint.dedupe ?? null,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}
