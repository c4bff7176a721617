/**
 * What to do about a relay error, in `hook` words. The relay's problem documents carry a
 * `fix` written for HTTP callers (`POST /v1/api-keys`); the CLI shows this table's
 * instead, keyed by the relay's error code (packages/core's registry; a test checks every
 * code has an entry, and that no entry names an HTTP route or a command that does not
 * exist). An entry is a sentence, or a function of the problem and of where the URL and
 * key of this run came from, for the errors whose fix depends on them.
 */
import { HTTP_ROUTE } from '@hook/core';
import type { Problem } from '@hook/client';
import { DEFAULT_PROFILE } from './config.ts';
import type { SettingSource } from './settings.ts';

/** What the fix of a failed run may refer to: the settings it ran with. */
export interface FixContext {
  profile: string;
  /** The config file's path. */
  configPath: string;
  apiUrl?: { value: string; source: SettingSource };
  /** The key's first characters (never the whole key) and where it came from. */
  apiKey?: { prefix: string; source: SettingSource };
}

type RelayFix = string | ((problem: Problem, context: FixContext) => string);

/** An HTTP route in a sentence: what a CLI fix must never name (one pattern with MCP's, in core). */
export { HTTP_ROUTE };

/** ` --profile x` when the run used another profile than the default, so a suggested command acts on the same one. */
function profileFlag(context: FixContext): string {
  return context.profile === DEFAULT_PROFILE ? '' : ` --profile ${context.profile}`;
}

/** The first `'prefix…'` id quoted in a problem's detail (`Event 'evt_…' is …`), or a placeholder. */
function quotedId(problem: Problem, prefix: string, placeholder: string): string {
  const match = new RegExp(`'(${prefix}[A-Za-z0-9_-]+)'`).exec(problem.detail);
  return match?.[1] ?? placeholder;
}

/** Where the relay URL came from, and how to change it there. */
function urlSource(context: FixContext): string {
  const url = context.apiUrl;
  if (!url) return 'Check --api-url (or HOOK_API_URL, or the profile\'s URL; `hook whoami` shows which is used)';
  switch (url.source) {
    case 'flag':
      return `${url.value} came from --api-url: check it`;
    case 'env':
      return `${url.value} came from HOOK_API_URL: check it, or unset it to use profile '${context.profile}'`;
    case 'profile':
      return `${url.value} is saved in profile '${context.profile}' (${context.configPath}): pass --api-url to use another, or save one with \`hook login --api-url <url> --api-key hk_…${profileFlag(context)}\``;
    case 'default':
      return `${url.value} is the default: pass --api-url (or set HOOK_API_URL) for another relay`;
  }
}

/** `invalid_api_key`: which key was refused, where it came from, and how to replace it there. */
function invalidKeyFix(_problem: Problem, context: FixContext): string {
  const key = context.apiKey;
  const saved = `\`hook login --api-key hk_…${profileFlag(context)}\` checks a working key and saves it`;
  if (!key) return `Check the key (it starts with hk_); ${saved}, and \`hook signup\` makes a new account.`;
  const which = `The key ${key.prefix}…`;
  switch (key.source) {
    case 'env':
      return `${which} came from the environment variable HOOK_API_KEY, which overrides the profile: unset it (\`unset HOOK_API_KEY\`) to use the key saved in profile '${context.profile}', or set it to a working key. ${saved[0]!.toUpperCase()}${saved.slice(1)}.`;
    case 'flag':
      return `${which} came from --api-key: check it (copy it whole, as \`hook signup\` or \`hook members add\` printed it), or leave --api-key out to use the key saved in profile '${context.profile}'.`;
    default:
      return `${which} is the one saved in profile '${context.profile}' (${context.configPath}); it may have been revoked. ${saved[0]!.toUpperCase()}${saved.slice(1)}, or \`hook signup --force${profileFlag(context)}\` makes a new account.`;
  }
}

/** The web console's session codes: hook authenticates with its key and never sends the console's cookie. */
const CONSOLE_ONLY = 'hook authenticates with its API key, never with the web console\'s cookie: this is a bug in hook; please report it with the request id.';

const RETRY_SAFE = 'the relay stored nothing, so running it again cannot duplicate anything';

export const RELAY_ERROR_FIXES: Readonly<Record<string, RelayFix>> = {
  validation_failed: 'Correct the values listed above and run the command again; the command\'s --help describes each argument and option.',
  malformed_json: 'hook sent a body the relay could not read: this is a bug in hook; please report it with the request id.',
  unsupported_media_type: 'hook sent a body the relay does not take: this is a bug in hook; please report it with the request id.',
  invalid_cursor: 'Pass --cursor exactly as the last "More: …" hint (or next_cursor in --json) gave it, or leave --cursor out to start from the first page.',
  authentication_required: (_problem, context) =>
    `Run \`hook login --api-key hk_…${profileFlag(context)}\` with a key you have, or \`hook signup${profileFlag(context)}\` to create an account.`,
  invalid_api_key: invalidKeyFix,
  route_not_found: (_problem, context) =>
    `The relay URL should be the relay's base URL, such as http://127.0.0.1:8080 or https://hooks.example.com; ${urlSource(context)}. A relay older than this hook may not have this command yet.`,
  bad_request: 'Run the command again; if it fails the same way, please report it as a bug in hook with the request id.',
  url_too_long: 'Check the ids and names given: copy them as `hook endpoints list` and `hook events list` print them (they are short).',
  headers_too_large: 'Send fewer or smaller headers (hook send -H); ids, keys and names are short, so the rest of the request fits.',
  destination_not_allowed:
    'Use a public http(s) URL; for a server on this machine, use `hook listen <port>` (`hook destinations add <endpoint> --cli` holds events for it), or have the relay operator set HOOK_ALLOW_PRIVATE_DESTINATIONS=true.',
  destination_url_invalid:
    'Give an http(s) URL such as https://example.com/hooks, with a plain host name or IP address (no spaces, tabs or percent signs in the host); percent-encode special characters in the path and query only.',
  event_in_flight: (problem) => {
    const event = quotedId(problem, 'evt_', '<event>');
    return `Wait for the attempt in progress to finish (\`hook events get ${event}\` shows it when it has), then run \`hook events replay ${event}\` again if needed.`;
  },
  replay_nowhere:
    'Give the endpoint a destination: `hook destinations add <endpoint> --url https://…`, or --cli to hold events for `hook listen`. New events go there; past events stay with the destinations they had.',
  destination_not_found: 'Run `hook destinations list <endpoint>` to see an endpoint\'s destinations and their ids (dst_…).',
  last_destination: (problem) => {
    const destination = quotedId(problem, 'dst_', '<destination>');
    const endpoint = quotedId(problem, 'ep_', '<endpoint>');
    return `Add another destination first (\`hook destinations add ${endpoint} --url https://…\`), change this one (\`hook destinations update ${destination} --url https://…\`), or delete the endpoint (\`hook endpoints delete ${endpoint}\`).`;
  },
  key_not_blocked: (problem) => {
    const destination = quotedId(problem, 'dst_', '<destination>');
    return `Run \`hook destinations blocked ${destination}\` to see its blocked keys, and pass one of them exactly to --key.`;
  },
  destination_limit_reached: (problem) => {
    const endpoint = quotedId(problem, 'ep_', '<endpoint>');
    return `Delete a destination you no longer need (\`hook destinations list ${endpoint}\` shows them; \`hook destinations delete <destination>\`), or use another endpoint.`;
  },
  last_api_key: 'Create another admin key first (`hook api-keys create` with an admin\'s key), or make another member an admin (`hook members role <member> admin`), then try again.',
  endpoint_not_found: 'Run `hook endpoints list` to see your endpoints, with their names and ids (ep_…).',
  event_not_found: 'Run `hook events list` to see your events and their ids (evt_…); `hook events list --endpoint <endpoint>` narrows it to one endpoint.',
  issue_not_found: 'Run `hook issues list` to see what is failing now and the issues\' ids (iss_…); `hook issues list --status all` includes resolved ones.',
  api_key_not_found: 'Run `hook api-keys list` to see the account\'s keys and their ids (key_…).',
  console_header_required: CONSOLE_ONLY,
  console_origin_refused: CONSOLE_ONLY,
  console_session_invalid: CONSOLE_ONLY,
  mcp_origin_refused: 'hook sends no Origin header, so this came from a web page calling the relay\'s MCP endpoint: the relay\'s operator can allow that page\'s origin with HOOK_MCP_ALLOWED_ORIGINS (docs/configuration.md).',
  playground_token_invalid: 'The playground lives in a browser: open /playground on the relay again to start a new session. From hook, `hook signup` makes a lasting account.',
  event_type_empty: 'Give the event a type, such as `hook send <endpoint> --type order.created`.',
  payload_not_json: 'Send a JSON document, such as `hook send <endpoint> --data \'{"id": 1}\'`.',
  playground_already_claimed: (_problem, context) =>
    `Use the API key shown when you claimed it (\`hook login --api-key hk_…${profileFlag(context)}\`), or make a new account with \`hook signup\`.`,
  ingest_host_only: 'That host receives events only: point hook at the relay\'s own URL (`hook login --api-url <url>`, or HOOK_API_URL), not its ingest host.',
  ingest_host_required: 'Send to the endpoint\'s url exactly as `hook endpoints get <endpoint>` shows it (`hook send <endpoint>` does).',
  transformation_throttled: 'Wait the seconds the message gives, then test again (`hook transform test`); make the transformation cheaper, or upgrade with `hook account plan pro` for more CPU a minute.',
  ingest_not_found: 'Send to an endpoint by name or id (`hook send <endpoint>`); `hook endpoints list` shows each endpoint\'s receiving URL.',
  endpoint_disabled: (problem) => {
    const endpoint = quotedId(problem, 'ep_', '<endpoint>');
    return `Re-enable it with \`hook endpoints update ${endpoint} --resume\`, or send to another endpoint (\`hook endpoints list\`).`;
  },
  handshake_refused: 'The endpoint answers Meta\'s handshake and the request\'s hub.verify_token is not the one it holds: give Meta the same verify token, or set it again with `hook endpoints update <endpoint> --handshake meta --handshake-secret-file <path>` (docs/sources.md).',
  signature_invalid: (problem) =>
    // The relay checks the signature before the timestamp: an old timestamp means the signature itself matched.
    problem.detail.includes('timestamp outside tolerance')
      ? 'The request is signed with the endpoint\'s secret, but its signed timestamp is further from the relay\'s clock than the endpoint\'s tolerance (300 s unless set): a captured request sent again later, or a sender whose clock is off. ' +
        'Sign it again with a fresh timestamp: `hook events export <event> --fixture <file>` saves a captured event, `hook send --fixture <file> --resign <provider> --secret-file <path>` sends it signed now with the body unchanged (`hook trigger <provider> <event> --secret <secret>` sends a new signed sample); or widen the window with `hook endpoints update <endpoint> --verify <provider> --verify-tolerance <seconds>`.'
      : 'The endpoint checks senders\' signatures (`hook endpoints get <endpoint>` shows which provider) and this request was not signed with its secret: send it signed as the provider signs (docs/sources.md), set the secret again with `hook endpoints update <endpoint> --verify <provider> --verify-secret-file <path>`, or store such requests marked instead with `--verify-mode flag`.',
  stream_needs_websocket: 'Use `hook events tail` or `hook listen <port>`, which speak the relay\'s live stream.',
  stream_needs_endpoint: 'Name the endpoint to listen on: `hook listen <port> --endpoint <endpoint>`.',
  endpoint_gone: 'The endpoint was deleted or disabled: `hook endpoints list` shows what is left. Re-enable it (`hook endpoints update <endpoint> --resume`) or create one (`hook endpoints create <name>`), then run `hook listen` again.',
  stream_protocol_error: 'The relay did not understand a message hook sent on the live stream: this is a bug in hook; please report it with the output above.',
  stream_too_slow: 'Narrow what you watch (`hook events tail --endpoint <endpoint> --status failed`) or read the output faster (a pipe that is not read fills up); it resumes at the live edge when it reconnects.',
  rate_limited: 'Wait the seconds the message gives, then run the command again.',
  quota_exceeded:
    'Upgrade with `hook account plan pro` (the new allowance applies at once), or wait for the allowance to reset at the start of next month (UTC). Events already accepted are kept and delivered.',
  plan_limit_reached: (problem) => {
    const upgrade = 'upgrade with `hook account plan pro` (it applies at once); `hook account get` shows what each plan allows and what the account uses.';
    if (/\d+ endpoints\b/.test(problem.detail)) return `Delete an endpoint you no longer need with \`hook endpoints delete <endpoint>\` (\`hook endpoints list\` shows them), or ${upgrade}`;
    if (/\d+ members\b/.test(problem.detail)) return `Remove a member with \`hook members remove <member>\` (\`hook members list\` shows them), or ${upgrade}`;
    return `Upgrade with \`hook account plan pro\` (it applies at once); \`hook account get\` shows what each plan allows and what the account uses.`;
  },
  plan_change_blocked:
    'Bring the account within that plan first (`hook endpoints delete <endpoint>`, `hook members remove <member>`, `hook account update --clear-allowed-ips` or `--clear-custom-domain`), then run `hook account plan` again.',
  ip_not_allowed: 'Run the command from an address in the account\'s allowed IPs, or have an admin widen them from an allowed address (`hook account update --allowed-ip <cidr>`). Ingest URLs are not affected.',
  allowlist_excludes_caller: 'Include the address this machine calls the relay from (or its network) as one more --allowed-ip in `hook account update`, or run it from an address the list includes.',
  custom_domain_taken: 'Use a domain (or subdomain) that you control and no other account uses (`hook account update --custom-domain <host>`), or clear it from the account that has it (`hook account update --clear-custom-domain` with that account\'s key).',
  custom_domain_not_claimed: 'Claim a domain first with `hook account update --custom-domain <host>`, add the DNS record it shows, then run `hook account verify-domain`.',
  custom_domain_unverified:
    'Add the TXT record named above at the DNS provider of the domain (`hook account get` shows it again), check that it is served (`dig TXT <name>`), then run `hook account verify-domain` again.',
  admin_required:
    'Save an admin member\'s key in its own profile (`hook login --api-key hk_… --profile admin`) and run the command with --profile admin, or ask an admin to run `hook members role <member> admin` for you.',
  member_not_found: 'Run `hook members list` to see the members and their ids (mem_…).',
  member_exists: 'Run `hook members list` to see the members; remove this one first (`hook members remove <member>`) to add them again with a new key.',
  last_admin: 'Make another member an admin first (`hook members role <member> admin`), then try again.',
  confirmation_required: (problem) => {
    const account = /\bacct_[A-Za-z0-9]+/.exec(problem.detail)?.[0] ?? '<account id>';
    return `If you mean to erase the account for good, run \`hook account delete --confirm ${account}\` (\`hook account get\` shows its id).`;
  },
  notifications_not_configured: 'Set a notification URL with `hook notifications set <url>`.',
  alert_email_unavailable: 'This relay sends no email: post alerts to Slack instead with `hook alerts set --slack <url>`, or ask the relay operator to set HOOK_SMTP_URL and HOOK_ALERT_EMAIL_FROM.',
  metrics_token_required: 'The relay\'s /metrics is for Prometheus, not hook: its scrape config sends the token the operator set in HOOK_METRICS_TOKEN.',
  payload_too_large: 'Send a smaller body: `hook send --data` up to the relay\'s HOOK_MAX_PAYLOAD (default 10 MiB); the code for `hook transform test --file` and other command input up to 1 MiB.',
  request_timeout: 'Run the command again; on a slow network, send a smaller --data body.',
  service_unavailable: `The relay is shutting down: run the command again in a few seconds (another relay process, or this one once it restarts); ${RETRY_SAFE}.`,
  storage_unavailable: `The relay cannot reach its database: run the command again in a little while; ${RETRY_SAFE}. The relay reconnects by itself when the database is back.`,
  internal_error: 'Run the command again later; if it keeps failing, report it to the relay\'s operator with the request id.',
  // Made by @hook/client, not the relay: an answer that is not the Hook API.
  unexpected_response: (_problem, context) =>
    `The answer did not come from a Hook relay (a proxy or another service?); ${urlSource(context)}.`,
};

/** A relay problem's fix in `hook` words: the table's, else the relay's own when it names no HTTP route, else a general one. */
export function cliFixFor(problem: Problem, context: FixContext): string {
  const fix = RELAY_ERROR_FIXES[problem.code];
  if (typeof fix === 'function') return fix(problem, context);
  if (fix !== undefined) return fix;
  if (typeof problem.fix === 'string' && problem.fix !== '' && !HTTP_ROUTE.test(problem.fix)) return problem.fix;
  return `The relay answered with ${problem.code}, which this hook does not know yet (docs/errors.md lists the codes); run the command with --help to check its arguments, or update hook.`;
}
