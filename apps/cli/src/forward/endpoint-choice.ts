/**
 * Which endpoint `hook listen` forwards (docs/listen.md#which-endpoint):
 *
 * 1. `--endpoint <id|name>`: that one (a name no endpoint has is created, destination cli);
 * 2. the profile's default endpoint (set by the first `hook endpoints create`, changed by
 *    `hook endpoints use`); one that was deleted is reported and skipped;
 * 3. the account's only endpoint;
 * 4. no endpoint at all: one is created (`cli-<hostname>`), saying that it counts against
 *    the plan's endpoints, and becomes the profile's default.
 *
 * Several endpoints and no default is an error that says how to choose: guessing would
 * forward (and decide the status of) another endpoint's events.
 */
import { hostname } from 'node:os';
import type { Endpoint, HookClient } from '@hook/client';
import type { CommandContext } from '../command.ts';
import { resolveEndpoint } from '../endpoint-ref.ts';
import { ENDPOINT_NOT_CHOSEN, UserError } from '../errors.ts';

/** How the endpoint was chosen: `flag` (--endpoint), `default` (the profile's), `only` (the account's only one) or `created`. */
export type EndpointChoice = 'flag' | 'default' | 'only' | 'created';

export interface ChosenEndpoint {
  endpoint: Endpoint;
  choice: EndpointChoice;
  /** Whether this run created the endpoint. */
  created: boolean;
  /** What a person should know about the choice (a deleted default, an endpoint spent on the plan); stderr lines. */
  notices: string[];
}

/** Endpoint names listed in the "which one?" error before it says "and N more". */
const NAMES_LISTED_MAX = 5;

/** The endpoint `hook listen` creates when the account has none: one per machine, so two laptops on one account do not share events. */
export function defaultEndpointName(host: string = hostname()): string {
  return `cli-${host.toLowerCase().split('.')[0] || 'local'}`.slice(0, 200);
}

function isNotFound(error: unknown): boolean {
  return error instanceof UserError && error.code === 'endpoint_not_found';
}

/** Makes the endpoint the profile's default when the profile has none (the first endpoint one creates). */
export function adoptAsDefault(context: CommandContext, endpoint: Endpoint): boolean {
  if (context.settings.defaultEndpoint !== undefined) return false;
  context.config.setDefaultEndpoint(context.settings.profile, { id: endpoint.id, name: endpoint.name });
  return true;
}

async function planNotice(client: HookClient): Promise<string> {
  const { account, limits, usage } = await client.account.get();
  return limits.endpoints === null
    ? `It is one of your plan's endpoints (${account.plan}: no limit).`
    : `It counts against your plan's endpoints: ${usage.endpoints} of ${limits.endpoints} on the ${account.plan} plan.`;
}

/**
 * Chooses the endpoint as above. `ref` is --endpoint; `listenArgs` is how the user called
 * `hook listen` (`3000`), for the commands the "which one?" error suggests.
 */
export async function chooseListenEndpoint(context: CommandContext, client: HookClient, ref: string | undefined, listenArgs: string): Promise<ChosenEndpoint> {
  const notices: string[] = [];
  if (ref !== undefined) {
    try {
      return { endpoint: await resolveEndpoint(client, ref), choice: 'flag', created: false, notices };
    } catch (error) {
      if (ref.startsWith('ep_') || !isNotFound(error)) throw error;
    }
    const endpoint = await client.endpoints.create({ name: ref, destination: { type: 'cli' } });
    notices.push(`Created endpoint ${endpoint.name} (${endpoint.id}). ${await planNotice(client)}`);
    if (adoptAsDefault(context, endpoint)) notices.push(`It is now the default endpoint of \`hook listen\` (profile '${context.settings.profile}').`);
    return { endpoint, choice: 'flag', created: true, notices };
  }

  const chosen = context.settings.defaultEndpoint;
  if (chosen !== undefined) {
    try {
      return { endpoint: await resolveEndpoint(client, chosen.id), choice: 'default', created: false, notices };
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    // Only a default saved with this profile's own key is known to be this account's: one
    // from another key (HOOK_API_KEY, --api-key) may be another account's, so it stays.
    const ours = context.settings.apiKeySource === 'profile';
    if (ours) context.config.setDefaultEndpoint(context.settings.profile, null);
    notices.push(
      `The default endpoint ${chosen.name} (${chosen.id}) no longer exists in this account${ours ? `; removed it from profile '${context.settings.profile}'` : ''}.`,
    );
  }

  const endpoints: Endpoint[] = [];
  for await (const endpoint of client.endpoints.iterate()) endpoints.push(endpoint);
  if (endpoints.length === 1) return { endpoint: endpoints[0]!, choice: 'only', created: false, notices };
  if (endpoints.length > 1) {
    const names = endpoints.slice(0, NAMES_LISTED_MAX).map((endpoint) => endpoint.name);
    const more = endpoints.length > NAMES_LISTED_MAX ? ` and ${endpoints.length - NAMES_LISTED_MAX} more` : '';
    const example = endpoints[0]!.name;
    const quoted = /^[\w.@:/-]+$/.test(example) ? example : `'${example.replaceAll("'", "'\\''")}'`;
    throw new UserError(
      ENDPOINT_NOT_CHOSEN,
      `${notices.length > 0 ? `${notices.join(' ')} ` : ''}No default endpoint, and this account has ${endpoints.length}: ${names.join(', ')}${more}`,
      `Pass one for this run (\`hook listen ${listenArgs} --endpoint ${quoted}\`), or make one the default (\`hook endpoints use ${quoted}\`); \`hook endpoints list\` shows them all.`,
    );
  }
  const endpoint = await client.endpoints.create({ name: defaultEndpointName(), destination: { type: 'cli' } });
  notices.push(`This account had no endpoint: created ${endpoint.name} (${endpoint.id}) for \`hook listen\`. ${await planNotice(client)}`);
  context.config.setDefaultEndpoint(context.settings.profile, { id: endpoint.id, name: endpoint.name });
  return { endpoint, choice: 'created', created: true, notices };
}
