/**
 * Which endpoint a command that sends an event (`hook send`, `hook trigger`) sends to:
 * the one named (id or name), else the profile's default endpoint (`hook endpoints use`,
 * the same one `hook listen` forwards), else the account's only endpoint. Unlike
 * `hook listen`, sending never creates an endpoint: several and no default is an error
 * that says how to choose.
 */
import type { Endpoint, HookClient } from '@hook/client';
import type { CommandContext } from './command.ts';
import { resolveEndpoint } from './endpoint-ref.ts';
import { ENDPOINT_NOT_CHOSEN, ENDPOINT_NOT_FOUND, UserError } from './errors.ts';

/** Endpoint names listed in the "which one?" error before it says "and N more". */
const NAMES_LISTED_MAX = 5;

/** A name as a shell word for a command line in a fix. */
function shellWord(text: string): string {
  return /^[\w.@:/-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * The endpoint to send to. `ref` is the endpoint the command line names; `commandLine`
 * is how the user ran the command (`hook trigger github push`), for the fix that says
 * how to name one.
 */
export async function endpointToSendTo(context: CommandContext, client: HookClient, ref: string | undefined, commandLine: string): Promise<Endpoint> {
  if (ref !== undefined) return resolveEndpoint(client, ref);
  const chosen = context.settings.defaultEndpoint;
  if (chosen !== undefined) {
    try {
      return await resolveEndpoint(client, chosen.id);
    } catch (error) {
      if (!(error instanceof UserError && error.code === ENDPOINT_NOT_FOUND.code)) throw error;
      throw new UserError(
        ENDPOINT_NOT_FOUND,
        `The default endpoint ${chosen.name} (${chosen.id}) of profile '${context.settings.profile}' no longer exists in this account`,
        `Pass one for this run (\`${commandLine} --endpoint <endpoint>\`), or make another the default (\`hook endpoints use <endpoint>\`); \`hook endpoints list\` shows them.`,
      );
    }
  }
  const endpoints: Endpoint[] = [];
  for await (const endpoint of client.endpoints.iterate()) endpoints.push(endpoint);
  if (endpoints.length === 1) return endpoints[0]!;
  if (endpoints.length === 0) {
    throw new UserError(ENDPOINT_NOT_FOUND, 'This account has no endpoint to send to', 'Create one with `hook endpoints create <name>`, then run the command again.');
  }
  const names = endpoints.slice(0, NAMES_LISTED_MAX).map((endpoint) => endpoint.name);
  const more = endpoints.length > NAMES_LISTED_MAX ? ` and ${endpoints.length - NAMES_LISTED_MAX} more` : '';
  const example = shellWord(endpoints[0]!.name);
  throw new UserError(
    ENDPOINT_NOT_CHOSEN,
    `No default endpoint, and this account has ${endpoints.length}: ${names.join(', ')}${more}`,
    `Pass one for this run (\`${commandLine} --endpoint ${example}\`), or make one the default (\`hook endpoints use ${example}\`); \`hook endpoints list\` shows them all.`,
  );
}
