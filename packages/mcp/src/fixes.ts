/**
 * What to do about a relay error, in MCP words. The relay's problem documents carry a
 * `fix` written for HTTP callers (`GET /v1/endpoints`); a tool error carries this table's
 * instead, keyed by the relay's error code, so an agent is pointed at the tool that helps
 * (list_endpoints), not at a route it cannot call. A code whose registry fix names no
 * route keeps it. A test checks that no fix a tool error can carry names an HTTP route.
 */
import { HTTP_ROUTE } from '@hook/core';

/** An HTTP route in a sentence: what an MCP fix must never name (one pattern with the CLI's, in core). */
export { HTTP_ROUTE };

const UPGRADE = 'upgrade_plan {"plan":"pro"} raises it at once';

export const MCP_ERROR_FIXES: Readonly<Record<string, string>> = {
  validation_failed: 'Correct the arguments listed in errors[] and call the tool again; its input schema in tools/list describes each argument.',
  authentication_required: 'Configure an API key for the MCP server (hook mcp: --api-key, HOOK_API_KEY or the profile; /mcp: Authorization: Bearer hk_…), or call sign_up where it is offered.',
  invalid_api_key: 'The key was revoked or mistyped: configure a working key for the MCP server (hook mcp: --api-key, HOOK_API_KEY or the profile; /mcp: the Authorization header).',
  confirmation_required: 'Call delete_account with confirm set to the account\'s own id (get_account shows it), and only if the user asked to erase the account.',
  custom_domain_not_claimed: 'Claim one first with update_account {"custom_domain":"hooks.example.com"}, add the TXT record its answer shows, then call verify_custom_domain.',
  custom_domain_taken: 'Use a domain (or subdomain) that you control and no other account uses, or clear it from the account that has it (update_account {"custom_domain":null}).',
  custom_domain_unverified: 'Add a TXT record with that name and value at the DNS provider of the domain, wait for it to be served, then call verify_custom_domain again.',
  destination_limit_reached: 'Delete a destination you no longer need (delete_destination), or use another endpoint.',
  destination_not_found: 'List an endpoint\'s destinations with list_destinations; ids start with dst_.',
  endpoint_disabled: 'Re-enable it with update_endpoint {"status":"active"}, or send to another endpoint.',
  endpoint_not_found: 'List your endpoints with list_endpoints; pass an endpoint\'s id (ep_…) or its exact name.',
  ambiguous_endpoint_name: 'Pass the endpoint\'s id (ep_…) instead of the name; list_endpoints shows which is which.',
  event_not_found: 'List your events with list_events; ids start with evt_.',
  issue_not_found: 'List issues with list_issues (status "open,acknowledged,resolved" includes resolved ones); ids start with iss_.',
  ingest_not_found: 'Send to an endpoint the account has (list_endpoints).',
  ip_not_allowed: 'Call from an address in the account\'s allowed_ips, or have an admin widen it with update_account from an allowed address.',
  key_not_blocked: 'List the blocked keys with list_blocked_keys and pass one of their keys exactly.',
  last_destination: 'Add another destination first (add_destination), change this one (update_destination), or delete the endpoint (delete_endpoint).',
  member_exists: 'List the members with list_members; remove the member first (remove_member) to add them again with a new key.',
  member_not_found: 'List the members with list_members.',
  notifications_not_configured: 'Set one with set_notification_url.',
  alert_email_unavailable: 'This relay sends no email: a person can post alerts to Slack instead (`hook alerts set --slack <url>`), or ask the relay operator to set HOOK_SMTP_URL.',
  plan_change_blocked: 'Bring the account within the new plan first (delete_endpoint, remove_member, or clear allowed_ips or custom_domain with update_account), then change the plan again.',
  plan_limit_reached: `Stay within the plan (delete_endpoint, remove_member), or upgrade: ${UPGRADE}. get_account shows the plan's limits.`,
  quota_exceeded: `The allowance resets at the start of next month (UTC); ${UPGRADE}. Events already accepted are kept and delivered.`,
  replay_nowhere: 'Give the endpoint a destination (add_destination, or update_endpoint {"destination":…}); new events go there. Past events stay with the destinations they had.',
  transformation_throttled: `Wait the seconds the detail gives, then test again; make the transformation cheaper, or ${UPGRADE} for more CPU a minute.`,
};

/**
 * Codes whose registry fix names a route but that no tool call can meet, with why: they
 * need no MCP words (a test checks every other such code has an entry above).
 */
export const CODES_NO_TOOL_MEETS: Readonly<Record<string, string>> = {
  api_key_not_found: 'no tool manages API keys',
  last_api_key: 'no tool manages API keys',
  playground_already_claimed: 'the playground is claimed in the web console',
  route_not_found: 'every tool calls a route the relay has',
};

/** The fix a tool error carries for a relay problem: this table's, else the relay's own. */
export function mcpFixFor(code: string, relayFix: string): string {
  return MCP_ERROR_FIXES[code] ?? relayFix;
}
