/**
 * Commands take an endpoint by id (`ep_…`) or by name. Names are not unique in the API,
 * so a name is looked up in the full list and must match exactly one endpoint.
 */
import { isId } from '@hook/core';
import type { Endpoint, HookClient } from '@hook/client';
import { HookApiError } from '@hook/client/errors';
import { AMBIGUOUS_ENDPOINT_NAME, ENDPOINT_NOT_FOUND, UserError } from './errors.ts';

function looksLikeEndpointId(ref: string): boolean {
  return ref.startsWith('ep_');
}

function notFound(ref: string): UserError {
  return looksLikeEndpointId(ref)
    ? new UserError(ENDPOINT_NOT_FOUND, `No endpoint '${ref}' in this account`)
    : new UserError(ENDPOINT_NOT_FOUND, `No endpoint named '${ref}' in this account`, `Run \`hook endpoints list\` to see your endpoints, or create it with \`hook endpoints create ${ref}\`.`);
}

/** The API's "no such endpoint" (and a malformed id, which cannot exist) as the CLI's UserError. */
export function endpointErrorFor(ref: string, error: unknown): unknown {
  if (error instanceof HookApiError && (error.code === 'endpoint_not_found' || (error.code === 'validation_failed' && looksLikeEndpointId(ref)))) return notFound(ref);
  return error;
}

async function findByName(client: HookClient, name: string): Promise<Endpoint> {
  const matches: Endpoint[] = [];
  for await (const endpoint of client.endpoints.iterate()) if (endpoint.name === name) matches.push(endpoint);
  if (matches.length === 0) throw notFound(name);
  if (matches.length > 1) {
    throw new UserError(AMBIGUOUS_ENDPOINT_NAME, `${matches.length} endpoints are named '${name}': ${matches.map((endpoint) => endpoint.id).join(', ')}`);
  }
  return matches[0]!;
}

/** The endpoint an id or name refers to. */
export async function resolveEndpoint(client: HookClient, ref: string): Promise<Endpoint> {
  if (!looksLikeEndpointId(ref)) return findByName(client, ref);
  try {
    return await client.endpoints.get(ref);
  } catch (error) {
    throw endpointErrorFor(ref, error);
  }
}

/**
 * The id an id or name refers to. An id is taken as it is (the API call that uses it
 * reports an unknown one; pass its error through `endpointErrorFor`); a name is looked up.
 */
export async function endpointIdOf(client: HookClient, ref: string): Promise<string> {
  if (looksLikeEndpointId(ref)) {
    if (!isId('endpoint', ref)) throw notFound(ref);
    return ref;
  }
  return (await findByName(client, ref)).id;
}
