/**
 * The error registry: every error a client can see, with its stable snake_case code,
 * HTTP status, title, detail template and a sentence saying how to fix it. Codes are
 * never reused or renamed once shipped; docs/errors.md lists every one (a test checks).
 */
export interface ErrorDefinition {
  readonly code: string;
  readonly status: number;
  readonly title: string;
  /** Detail template; each `%s` takes one argument of `HookError`'s constructor in order. */
  readonly detail: string;
  readonly fix: string;
}

/** One field's problem in a request that failed validation. */
export interface FieldError {
  /** Where the problem is: `body.name`, `query.limit`, `params.id`, `headers.authorization`. */
  readonly field: string;
  readonly message: string;
}

const registry = new Map<string, ErrorDefinition>();

/** Adds an error to the registry. Throws on a duplicate code, so a code can never mean two things. */
export function defineError(code: string, status: number, title: string, detail: string, fix: string): ErrorDefinition {
  if (registry.has(code)) throw new Error(`error code '${code}' is defined twice`);
  if (!/^[a-z][a-z0-9_]*$/.test(code)) throw new Error(`error code '${code}' is not snake_case`);
  const definition = { code, status, title, detail, fix };
  registry.set(code, definition);
  return definition;
}

/**
 * An HTTP route in a sentence (`GET /v1/events`, `/v1/endpoints/{id}`, openapi.json). The
 * registry's fixes are written for HTTP callers and may name one; the CLI and the MCP
 * tools speak to people who cannot call a route, so their fixes must never match this.
 */
export const HTTP_ROUTE = /\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+\/|\/v1\b|openapi\.json/;

/** Every registered error, in definition order. */
export function allErrors(): ErrorDefinition[] {
  return [...registry.values()];
}

/** An error a client is meant to see: thrown by handlers, turned into problem+json at the edge. */
export class HookError extends Error {
  readonly definition: ErrorDefinition;
  readonly errors: readonly FieldError[] | undefined;

  constructor(definition: ErrorDefinition, args: readonly (string | number)[] = [], errors?: readonly FieldError[]) {
    let i = 0;
    super(definition.detail.replace(/%s/g, () => String(args[i++] ?? '')));
    this.name = 'HookError';
    this.definition = definition;
    this.errors = errors;
  }

  get code(): string {
    return this.definition.code;
  }

  get status(): number {
    return this.definition.status;
  }
}

export const VALIDATION_FAILED = defineError(
  'validation_failed', 400, 'Invalid request',
  'The request has %s invalid field(s): %s',
  'Correct the fields listed in errors[] and send the request again; GET /openapi.json describes every field.',
);
export const MALFORMED_JSON = defineError(
  'malformed_json', 400, 'Malformed JSON body',
  'The request body is not valid JSON: %s',
  'Send a valid JSON document with Content-Type: application/json.',
);
export const UNSUPPORTED_MEDIA_TYPE = defineError(
  'unsupported_media_type', 415, 'Unsupported content type',
  "This route takes application/json, not '%s'",
  'Send the body as JSON with the header Content-Type: application/json.',
);
export const INVALID_CURSOR = defineError(
  'invalid_cursor', 400, 'Invalid cursor',
  'The cursor %s was not issued by this list',
  'Pass back next_cursor exactly as a previous page returned it, or leave cursor out to start from the first page.',
);
export const AUTHENTICATION_REQUIRED = defineError(
  'authentication_required', 401, 'Authentication required',
  'This route needs an API key and the request carried none',
  'Send the header Authorization: Bearer <api key>; create an account and key with POST /v1/accounts.',
);
export const INVALID_API_KEY = defineError(
  'invalid_api_key', 401, 'Invalid API key',
  'The API key is malformed, unknown or revoked',
  'Check the key (it starts with hk_), or create a new one with POST /v1/api-keys using a key that still works, or a new account with POST /v1/accounts.',
);
export const ROUTE_NOT_FOUND = defineError(
  'route_not_found', 404, 'No such route',
  'No route %s %s',
  'Check the method and path; GET /openapi.json lists every route.',
);
export const BAD_REQUEST = defineError(
  'bad_request', 400, 'Bad request',
  'The request could not be read: %s',
  'Check the request line, headers and body framing (Content-Length or chunked encoding) and send it again.',
);
export const URL_TOO_LONG = defineError(
  'url_too_long', 414, 'URL too long',
  'A path segment of %s is longer than the relay accepts',
  "Check the URL; ingest URLs and ids are short, copy them exactly as the API returns them.",
);
export const HEADERS_TOO_LARGE = defineError(
  'headers_too_large', 431, 'Request headers too large',
  'The request line and headers together are longer than the relay reads (16 KiB)',
  'Send a shorter URL and query and smaller headers (no large cookies); API keys, ids and ingest URLs are short.',
);
export const DESTINATION_NOT_ALLOWED = defineError(
  'destination_not_allowed', 422, 'Destination not allowed',
  "The destination %s points at %s, a private, loopback, link-local or metadata address",
  'Use a public http(s) URL (or a broker at a public address); for local development use `hook listen`, or have the relay operator set HOOK_ALLOW_PRIVATE_DESTINATIONS=true.',
);
export const DESTINATION_URL_INVALID = defineError(
  'destination_url_invalid', 422, 'Destination URL not usable',
  'The destination %s is not a URL a request can be sent to: %s',
  'Send an http(s) URL such as https://example.com/hooks, with a plain host name or IP address (no spaces, tabs or percent signs in the host); percent-encode special characters in the path and query only.',
);
export const EVENT_IN_FLIGHT = defineError(
  'event_in_flight', 409, 'Delivery in progress',
  "Event '%s' is being delivered right now",
  'Wait for the attempt in progress to finish (at most HOOK_DELIVERY_TIMEOUT), then replay again if needed.',
);
export const REPLAY_NOWHERE = defineError(
  'replay_nowhere', 409, 'Nowhere to replay to',
  "Event '%s' has no live destination to replay to: %s",
  'Give the endpoint a destination (POST /v1/endpoints/{id}/destinations, or PATCH /v1/endpoints/{id} {"destination":…}); new events go there. Past events stay with the destinations they had.',
);
export const DESTINATION_NOT_FOUND = defineError(
  'destination_not_found', 404, 'Destination not found',
  "No destination '%s' in this account%s",
  'List an endpoint\'s destinations with GET /v1/endpoints/{id}/destinations; ids start with dst_.',
);
export const LAST_DESTINATION = defineError(
  'last_destination', 409, 'Cannot delete the last destination',
  "Destination '%s' is the only destination of endpoint '%s'",
  'Add another destination first (POST /v1/endpoints/{id}/destinations), change this one (PATCH /v1/destinations/{id}), or delete the endpoint.',
);
export const KEY_NOT_BLOCKED = defineError(
  'key_not_blocked', 404, 'Key not blocked',
  'The ordering key %s of destination \'%s\' is not blocked',
  'List the blocked keys with GET /v1/destinations/{id}/blocked-keys (hook destinations blocked <destination>) and pass one of their keys exactly.',
);
export const DESTINATION_LIMIT_REACHED = defineError(
  'destination_limit_reached', 409, 'Too many destinations',
  "Endpoint '%s' already has %s destinations, the most one endpoint can have",
  'Delete a destination you no longer need (DELETE /v1/destinations/{id}), or use another endpoint.',
);
export const LAST_API_KEY = defineError(
  'last_api_key', 409, 'Cannot revoke the last key',
  "Key '%s' is the last API key of any admin of the account; revoking it would leave nobody able to manage the account",
  'Create another key with POST /v1/api-keys (with an admin\'s key) first, then revoke this one.',
);
export const ENDPOINT_NOT_FOUND = defineError(
  'endpoint_not_found', 404, 'Endpoint not found',
  "No endpoint '%s' in this account",
  'List your endpoints with GET /v1/endpoints.',
);
export const EVENT_NOT_FOUND = defineError(
  'event_not_found', 404, 'Event not found',
  "No event '%s' in this account",
  'List your events with GET /v1/events.',
);
export const ISSUE_NOT_FOUND = defineError(
  'issue_not_found', 404, 'Issue not found',
  "No issue '%s' in this account",
  'List your issues with hook issues list (or GET /v1/issues); ids start with iss_.',
);
export const API_KEY_NOT_FOUND = defineError(
  'api_key_not_found', 404, 'API key not found',
  "No API key '%s' in this account",
  'List your keys with GET /v1/api-keys.',
);
export const PLAYGROUND_TOKEN_INVALID = defineError(
  'playground_token_invalid', 401, 'Playground session not found',
  'The playground token is missing, unknown, or its session expired (temporary playground accounts last 24 hours)',
  'Open /playground again to start a new session; claim it from the page to keep it.',
);
export const CONSOLE_HEADER_REQUIRED = defineError(
  'console_header_required', 401, 'Console header required',
  'The request carried a console session cookie but not the header X-Hook-Console: 1, which cookie-authenticated API requests need (it keeps other sites from using the cookie)',
  'Send X-Hook-Console: 1 with the cookie (the console does), or authenticate with Authorization: Bearer <api key>.',
);
export const CONSOLE_ORIGIN_REFUSED = defineError(
  'console_origin_refused', 403, 'Console stream from another site',
  'A WebSocket upgrade carried the console session cookie from a page of another site (its Origin header names a host other than this relay)',
  'Open the stream from the console served by this relay, or authenticate with Authorization: Bearer <api key>.',
);
export const MCP_ORIGIN_REFUSED = defineError(
  'mcp_origin_refused', 403, 'MCP request from a page of another site',
  'A request to /mcp came from a web page at %s, which is not allowed to call this relay\'s MCP endpoint (a page of another site, or one that reached the relay by DNS rebinding)',
  'If a page at that origin should call /mcp, have the relay\'s operator add the origin to HOOK_MCP_ALLOWED_ORIGINS (comma-separated, such as https://app.example.com). MCP clients that are not browsers send no Origin header and are not affected.',
);
export const CONSOLE_SESSION_INVALID = defineError(
  'console_session_invalid', 401, 'Console session ended',
  'The console session is missing, expired, or ended because you signed out or its API key was revoked',
  'Sign in again at /console with an API key (hook signup makes an account and its first key; hook members add makes a key for a member).',
);
export const EVENT_TYPE_EMPTY = defineError(
  'event_type_empty', 400, 'Event type required',
  'An event type cannot be empty',
  'Give the test event a type, such as order.created.',
);
export const PAYLOAD_NOT_JSON = defineError(
  'payload_not_json', 400, 'Payload is not JSON',
  'The test event payload is not valid JSON: %s',
  'Send a JSON document as the payload, such as {"id": 1}.',
);
export const PLAYGROUND_ALREADY_CLAIMED = defineError(
  'playground_already_claimed', 409, 'Already claimed',
  'This playground account was already claimed and its API key shown',
  'Use the API key shown when you claimed it; if it is lost, sign up again with POST /v1/accounts.',
);
export const INGEST_NOT_FOUND = defineError(
  'ingest_not_found', 404, 'Unknown ingest URL',
  "No endpoint receives at ingest id '%s'",
  "Send to an endpoint's url exactly as GET /v1/endpoints returns it.",
);
export const INGEST_HOST_ONLY = defineError(
  'ingest_host_only', 421, 'This host receives events only',
  "%s serves ingest URLs only (it is the relay's ingest host or an account's custom domain): the console, the playground and the API are served at the relay's own URL",
  "Open the console, and point hook at (hook login --api-url <url>), the relay's own URL, not the ingest host.",
);
export const INGEST_HOST_REQUIRED = defineError(
  'ingest_host_required', 421, 'Events are received on another host',
  "This relay receives events at %s, not on %s",
  "Send to the endpoint's url exactly as hook endpoints get <endpoint> shows it.",
);
export const ENDPOINT_DISABLED = defineError(
  'endpoint_disabled', 410, 'Endpoint disabled',
  "The endpoint '%s' is disabled and refuses new events",
  "Re-enable it with PATCH /v1/endpoints/{id} {\"status\":\"active\"}, or send to another endpoint's url.",
);
export const SIGNATURE_INVALID = defineError(
  'signature_invalid', 401, 'Signature not verified',
  "The request's %s signature failed verification: %s (header %s)",
  "Sign the request with the endpoint's verification secret as the provider does (docs/sources.md); to check what the relay holds, see hook endpoints get, and set the secret again with hook endpoints update <endpoint> --verify <provider> --verify-secret-file <path>.",
);
export const HANDSHAKE_REFUSED = defineError(
  'handshake_refused', 403, 'Handshake refused',
  "The %s handshake was refused: %s",
  "Give the provider the verify token the endpoint holds (docs/sources.md, Handshakes); set it again with hook endpoints update <endpoint> --handshake meta --handshake-secret-file <path>.",
);
export const STREAM_NEEDS_WEBSOCKET = defineError(
  'stream_needs_websocket', 426, 'WebSocket required',
  'GET /v1/stream is a WebSocket; this request did not ask to upgrade',
  'Connect with a WebSocket client (the hook CLI: hook events tail or hook listen), sending Authorization: Bearer <key>.',
);
export const STREAM_NEEDS_ENDPOINT = defineError(
  'stream_needs_endpoint', 400, 'Listen mode needs an endpoint',
  'mode=listen needs endpoint_id: the endpoint whose events to receive',
  'Add ?endpoint_id=ep_… (hook listen --endpoint <name> finds or creates one).',
);
export const ENDPOINT_GONE = defineError(
  'endpoint_gone', 410, 'Endpoint gone',
  "Endpoint '%s' was deleted or disabled while listening",
  'Create or re-enable an endpoint, then run hook listen again.',
);
export const STREAM_PROTOCOL_ERROR = defineError(
  'stream_protocol_error', 400, 'Stream message not understood',
  'Could not understand a message on the stream: %s',
  'Answer each delivery with {"type":"result","version":1,"delivery_id":…,"status":…,"duration_ms":…} (see docs/api.md#live-stream).',
);
export const STREAM_TOO_SLOW = defineError(
  'stream_too_slow', 429, 'Stream reader too slow',
  'The connection fell more than 8 MiB behind the events sent to it',
  'Narrow the tail with endpoint_id or status, or read faster; reconnecting resumes at the live edge.',
);
export const RATE_LIMITED = defineError(
  'rate_limited', 429, 'Too many requests',
  'This route allows %s requests %s, and they have been used; the window resets in %s seconds',
  'Wait the number of seconds in the Retry-After header, then send the request again.',
);
export const QUOTA_EXCEEDED = defineError(
  'quota_exceeded', 429, 'Monthly event allowance used up',
  "This account has accepted its %s events for %s on the '%s' plan; this event was not stored",
  'Upgrade with POST /v1/account/plan {"plan":"pro"} (hook account plan pro); the new allowance applies at once. Otherwise the allowance resets at the start of next month (UTC, see Retry-After). Events already accepted are kept and delivered.',
);
export const TRANSFORMATION_THROTTLED = defineError(
  'transformation_throttled', 429, 'Transformation CPU allowance used up',
  'This account has used its transformation CPU allowance (%s s a minute) for now; it may run again in %s seconds',
  'Wait the seconds in Retry-After, then test again (hook transform test); make the transformation cheaper, or upgrade with POST /v1/account/plan {"plan":"pro"} (hook account plan pro) for more CPU a minute.',
);
export const PLAN_LIMIT_REACHED = defineError(
  'plan_limit_reached', 403, 'Not included in the plan',
  '%s',
  'Stay within the plan (DELETE /v1/endpoints/{id}, DELETE /v1/members/{id}), or upgrade with POST /v1/account/plan {"plan":"pro"} (hook account plan pro); it applies at once. GET /v1/account shows each plan\'s limits.',
);
export const PLAN_CHANGE_BLOCKED = defineError(
  'plan_change_blocked', 409, 'The account uses more than that plan allows',
  "Cannot move to the '%s' plan: %s",
  'Bring the account within the new plan first (delete endpoints or members, clear allowed_ips or custom_domain with PATCH /v1/account), then change the plan again.',
);
export const IP_NOT_ALLOWED = defineError(
  'ip_not_allowed', 403, 'Address not allowed',
  "API requests from %s are not allowed by this account's allowed_ips",
  "Call the API from an address in the account's allowed_ips, or have an admin widen it with PATCH /v1/account from an allowed address. Ingest URLs are not affected.",
);
export const ALLOWLIST_EXCLUDES_CALLER = defineError(
  'allowlist_excludes_caller', 409, 'The allowlist would lock you out',
  'The new allowed_ips do not include the address of this request (%s), so it would lock this caller out',
  "Include this request's address (or its network) in allowed_ips, or send the change from an address the list includes.",
);
export const CUSTOM_DOMAIN_TAKEN = defineError(
  'custom_domain_taken', 409, 'Custom domain already in use',
  "The custom domain '%s' is already verified by another account",
  'Use a domain (or subdomain) that you control and no other account uses, or clear it from the account that has it (PATCH /v1/account {"custom_domain":null}).',
);
export const CUSTOM_DOMAIN_NOT_CLAIMED = defineError(
  'custom_domain_not_claimed', 409, 'No custom domain to verify',
  'This account has no custom_domain, so there is nothing to verify',
  'Claim one first with PATCH /v1/account {"custom_domain":"hooks.example.com"}, add the TXT record its answer shows, then verify.',
);
export const CUSTOM_DOMAIN_UNVERIFIED = defineError(
  'custom_domain_unverified', 422, 'Custom domain not verified',
  "The TXT record %s does not hold '%s' (found: %s); the custom domain '%s' stays pending",
  'Add a TXT record with that name and value at the DNS provider of the domain, wait for it to be served (dig TXT <name>), then verify again with POST /v1/account/custom-domain/verify.',
);
export const ADMIN_REQUIRED = defineError(
  'admin_required', 403, 'Admin role required',
  'Only an admin member can %s; this API key belongs to a member with the role member',
  'Use an API key of an admin member, or ask an admin to give you the admin role.',
);
export const MEMBER_NOT_FOUND = defineError(
  'member_not_found', 404, 'Member not found',
  "No member with id '%s' in this account",
  'List the members with GET /v1/members.',
);
export const MEMBER_EXISTS = defineError(
  'member_exists', 409, 'Member already exists',
  "'%s' is already a member of this account",
  'List the members with GET /v1/members; remove the member first to add them again with a new key.',
);
export const LAST_ADMIN = defineError(
  'last_admin', 409, 'Last admin',
  'Member %s is the account\'s only admin; removing it or making it a member would leave nobody able to manage the account',
  'Make another member an admin first, then try again.',
);
export const CONFIRMATION_REQUIRED = defineError(
  'confirmation_required', 400, 'Confirmation required',
  'Deleting account %s erases it and everything in it for good, so the request must name it: %s',
  'Send DELETE /v1/account?confirm=<the account id> with an admin\'s key (GET /v1/account shows the id).',
);
export const NOTIFICATIONS_NOT_CONFIGURED = defineError(
  'notifications_not_configured', 404, 'Notifications not configured',
  'This account has no notification URL',
  'Set one with PUT /v1/account/notifications {"url": "https://…"} (hook notifications set <url>).',
);
export const ALERT_EMAIL_UNAVAILABLE = defineError(
  'alert_email_unavailable', 422, 'Email alerts not available',
  'This relay sends no email (its operator has not set HOOK_SMTP_URL), so alerts cannot be mailed to %s',
  'Post alerts to Slack instead (PUT /v1/account/alerts {"slack_webhook_url": "https://hooks.slack.com/…"}) or to the notification URL, or ask the relay operator to set HOOK_SMTP_URL and HOOK_ALERT_EMAIL_FROM (docs/alerts.md).',
);
export const METRICS_TOKEN_REQUIRED = defineError(
  'metrics_token_required', 401, 'Metrics token required',
  'GET /metrics on this relay needs the token its operator set in HOOK_METRICS_TOKEN',
  'Send Authorization: Bearer <HOOK_METRICS_TOKEN> (in Prometheus: authorization: {credentials: …} in the scrape config).',
);
export const PAYLOAD_TOO_LARGE = defineError(
  'payload_too_large', 413, 'Payload too large',
  'The body is larger than the %s byte limit',
  'Send a smaller body: events sent to an ingest URL may be up to HOOK_MAX_PAYLOAD (default 10 MiB), JSON API requests up to 1 MiB.',
);
export const REQUEST_TIMEOUT = defineError(
  'request_timeout', 408, 'Request timed out',
  'The request body did not arrive in time',
  'Send the whole body promptly, then retry.',
);
/**
 * Shutting down: the request came on a connection opened before SIGTERM. It first meant
 * "database unreachable" too; that is storage_unavailable now (codes are never renamed).
 */
export const SERVICE_UNAVAILABLE = defineError(
  'service_unavailable', 503, 'Service unavailable',
  'The relay is shutting down and takes no new requests; nothing was stored',
  'Retry after the seconds in Retry-After on a new connection (another relay process, or this one once it restarts); the request was not accepted, so retrying cannot duplicate it.',
);
export const STORAGE_UNAVAILABLE = defineError(
  'storage_unavailable', 503, 'Storage unavailable',
  'The relay cannot reach its database right now; nothing was stored',
  'Retry after the seconds in Retry-After, with backoff; the request was not accepted, so retrying cannot duplicate it. The relay reconnects by itself when the database is back.',
);
export const INTERNAL_ERROR = defineError(
  'internal_error', 500, 'Internal error',
  'The relay failed unexpectedly while handling this request',
  'Retry later; if it persists, report it with the request_id.',
);
