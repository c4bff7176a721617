/**
 * Which tool speaks for each REST operation, and why the others have none. A test
 * compares this with the relay's /openapi.json and with HOOK_TOOLS, so a route added
 * without a decision here, or a tool with no route, fails the suite.
 */
export type RouteCoverage = { tool: string } | { none: string };

/** `METHOD /path` as /openapi.json spells it → the tool, or the reason there is none. */
export const REST_ROUTE_COVERAGE: Readonly<Record<string, RouteCoverage>> = {
  'POST /v1/accounts': { tool: 'sign_up' },
  'GET /v1/account': { tool: 'get_account' },
  'POST /v1/account/plan': { tool: 'upgrade_plan' },
  'PATCH /v1/account': { tool: 'update_account' },
  'POST /v1/account/custom-domain/verify': { tool: 'verify_custom_domain' },
  'DELETE /v1/account': { tool: 'delete_account' },
  'PUT /v1/account/notifications': { tool: 'set_notification_url' },
  'GET /v1/account/notifications': { tool: 'get_notifications' },
  'DELETE /v1/account/notifications': { tool: 'clear_notifications' },
  'GET /v1/account/notifications/events': { tool: 'list_notification_events' },
  'GET /v1/account/usage/daily': { none: 'the web console\'s per-day chart; get_account gives an agent this month\'s usage against the allowance' },
  'POST /console/session': { none: 'signs a browser in to the web console (a cookie session); agents use their API key' },
  'GET /console/session': { none: 'the web console\'s own session check (cookie only)' },
  'DELETE /console/session': { none: 'signs a browser out of the web console (cookie only)' },
  'POST /v1/api-keys': { none: 'API keys are managed by people (hook, REST): an agent holding one key should not mint or revoke others' },
  'GET /v1/api-keys': { none: 'API keys are managed by people (hook, REST)' },
  'DELETE /v1/api-keys/{id}': { none: 'API keys are managed by people (hook, REST)' },
  'POST /v1/members': { tool: 'add_member' },
  'GET /v1/members': { tool: 'list_members' },
  'GET /v1/members/{id}': { none: 'list_members returns every field of every member; one member by id adds nothing an agent needs' },
  'PATCH /v1/members/{id}': { tool: 'set_member_role' },
  'DELETE /v1/members/{id}': { tool: 'remove_member' },
  'POST /v1/endpoints': { tool: 'create_endpoint' },
  'GET /v1/endpoints': { tool: 'list_endpoints' },
  'GET /v1/endpoints/{id}': { tool: 'get_endpoint' },
  'PATCH /v1/endpoints/{id}': { tool: 'update_endpoint' },
  'DELETE /v1/endpoints/{id}': { tool: 'delete_endpoint' },
  'GET /v1/endpoints/{id}/secret': { none: 'signing secrets stay out of model context: read one with `hook endpoints secret` or REST' },
  'POST /v1/endpoints/{id}/rotate-secret': { none: 'rotating a secret breaks receivers until they are updated: a person does it (`hook endpoints rotate-secret`)' },
  'GET /v1/endpoints/{id}/destinations': { tool: 'list_destinations' },
  'POST /v1/endpoints/{id}/destinations': { tool: 'add_destination' },
  'GET /v1/destinations/{id}': { none: 'list_destinations returns every field of every destination of an endpoint; one by id adds nothing an agent needs' },
  'PATCH /v1/destinations/{id}': { tool: 'update_destination' },
  'DELETE /v1/destinations/{id}': { tool: 'delete_destination' },
  'GET /v1/destinations/{id}/secret': { none: 'signing secrets stay out of model context: read one with `hook destinations secret` or REST' },
  'POST /v1/destinations/{id}/rotate-secret': { none: 'rotating a secret breaks receivers until they are updated: a person does it (`hook destinations rotate-secret`)' },
  'GET /v1/destinations/{id}/blocked-keys': { tool: 'list_blocked_keys' },
  'POST /v1/destinations/{id}/unblock': { tool: 'unblock_key' },
  'POST /v1/ingest/{ingest_id}': { tool: 'send_test_event' },
  'GET /v1/events': { tool: 'list_events' },
  'GET /v1/events/{id}': { tool: 'get_event' },
  'POST /v1/events/replay/{id}': { tool: 'replay_event' },
  'POST /v1/events/replay': { tool: 'bulk_replay' },
  'POST /v1/transformations/test': { tool: 'test_transformation' },
};

/** Paths that are not part of the resource API (ops, the stream, the documents themselves). */
export const PATHS_WITHOUT_TOOLS: Readonly<Record<string, string>> = {
  '/v1/ingest/{ingest_id}': 'ingest takes any method; send_test_event covers POST, the one providers use',
  '/v1/ingest/{ingest_id}/{*}': 'ingest with a path after the ingest id; send_test_event covers the plain URL',
  '/v1/stream': 'a WebSocket of live events: MCP tool calls are request/response (use list_events, or `hook events tail`)',
  '/healthz': 'operations, not the account API',
  '/readyz': 'operations, not the account API',
  '/metrics': 'operations, not the account API',
  '/openapi.json': 'the API description itself',
  '/mcp': 'the MCP endpoint itself',
  '/playground/session': 'the no-signup playground page\'s own routes (a browser token, not an API key); agents sign up with sign_up',
  '/playground/events': 'the playground page\'s own routes; agents use list_events and send_test_event',
  '/playground/claim': 'the playground page\'s own routes; agents sign up with sign_up',
  '/playground/stream': 'the playground page\'s WebSocket; MCP tool calls are request/response',
};
