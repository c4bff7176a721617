/**
 * Tools that filter by endpoint take its id (`ep_…`) or its name, as `hook` commands do
 * (apps/cli/src/endpoint-ref.ts). Names are not unique in the API, so a name is looked up
 * in the full list and must match exactly one endpoint.
 */
import type { HookClient } from '@hook/client';
import { ToolRefusal } from './tool.ts';

/** The endpoint id `ref` names: an `ep_…` as it is (the relay judges it), a name looked up. */
export async function endpointIdOf(client: HookClient, ref: string): Promise<string> {
  if (ref.startsWith('ep_')) return ref;
  const matches: string[] = [];
  for await (const endpoint of client.endpoints.iterate()) if (endpoint.name === ref) matches.push(endpoint.id);
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    throw new ToolRefusal('endpoint_not_found', 404, 'Endpoint not found', `No endpoint named '${ref}' in this account`, 'List your endpoints with list_endpoints.');
  }
  throw new ToolRefusal('ambiguous_endpoint_name', 409, 'Ambiguous endpoint name', `${matches.length} endpoints are named '${ref}': ${matches.join(', ')}`, 'Pass the endpoint id.');
}

/** What an endpoint input says to the agent. */
export const ENDPOINT_REF_DESCRIPTION = 'The endpoint\'s id (ep_…) or its exact name';
