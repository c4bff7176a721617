/** Reading Hook's MCP tool results in tests, and one scenario that uses every tool. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TOOL_ERROR_META_KEY, type ToolErrorContent } from '@hook/mcp';
import { expect } from 'vitest';

interface ToolResult {
  isError?: boolean;
  content?: unknown;
  structuredContent?: unknown;
  _meta?: Record<string, unknown>;
}

/**
 * The problem of a tool error, read from its text (the JSON second item) and checked to
 * be the same in `_meta`; throws when the result is not an error or they differ.
 */
export function toolError(result: ToolResult): ToolErrorContent['error'] & { text: string } {
  if (result.isError !== true) throw new Error(`expected a tool error, got ${JSON.stringify(result)}`);
  const content = result.content as Array<{ type: string; text: string }>;
  const fromText = (JSON.parse(content[1]!.text) as ToolErrorContent).error;
  const fromMeta = result._meta?.[TOOL_ERROR_META_KEY];
  if (JSON.stringify(fromMeta) !== JSON.stringify(fromText)) throw new Error(`_meta and text disagree: ${JSON.stringify(result)}`);
  return { ...fromText, text: content[0]!.text };
}

/** Calls a tool that must succeed and returns its structured content. */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  expect(result.structuredContent, `${name} returns structured content`).toBeDefined();
  expect((result.content as Array<{ type: string; text: string }>)[0]?.text, `${name} returns text content`).toBeTruthy();
  return result.structuredContent;
}

/**
 * Uses every tool the client lists, on a fresh free account with no endpoints, checking
 * each result; `receiverUrl` answers 200 and `lastReceivedBody` reads what it got last.
 * Fails unless every listed tool was called. The relay must have no delivery worker
 * (the test event stays pending until the replay).
 */
export async function callEveryTool(client: Client, receiverUrl: string, lastReceivedBody: () => string | undefined): Promise<void> {
  const { tools } = await client.listTools();
  const called = new Set<string>();
  const use = async (name: string, args: Record<string, unknown> = {}) => {
    called.add(name);
    return callTool(client, name, args);
  };
  const receiver = { url: receiverUrl };

  const { account } = await use('get_account');
  expect(account.id).toMatch(/^acct_/);
  const upgraded = await use('upgrade_plan', { plan: 'pro' });
  expect(upgraded.account.plan).toBe('pro');
  expect(upgraded.limits.retention_days).toBe(90);
  expect(upgraded.plan_history).toEqual([expect.objectContaining({ from_plan: 'free', to_plan: 'pro' })]);
  expect((await use('get_account')).plan_history).toHaveLength(1);
  const updated = await use('update_account', { email: 'ops@example.com', allowed_ips: [] });
  expect(updated.account).toMatchObject({ email: 'ops@example.com', allowed_ips: [], custom_domain: null, custom_domain_status: null, retention_days: null });
  // With no custom domain claimed there is nothing to verify (apps/relay/test/account-settings.test.ts verifies one through a local DNS server).
  called.add('verify_custom_domain');
  expect(toolError(await client.callTool({ name: 'verify_custom_domain', arguments: {} }))).toMatchObject({ code: 'custom_domain_not_claimed', status: 409 });
  const { endpoint } = await use('create_endpoint', { name: 'orders', destination: { type: 'url', url: receiver.url } });
  expect(endpoint).toMatchObject({ name: 'orders', status: 'active', destination: { type: 'url', url: receiver.url } });
  const spare = (await use('create_endpoint', { name: 'spare' })).endpoint;
  const listed = await use('list_endpoints', { limit: 100 });
  expect(listed.data.map((item: { id: string }) => item.id)).toEqual([spare.id, endpoint.id]);
  expect(listed.next_cursor).toBeNull();
  expect((await use('get_endpoint', { endpoint_id: endpoint.id })).endpoint.url).toBe(endpoint.url);
  expect((await use('update_endpoint', { endpoint_id: endpoint.id, name: 'orders-v2' })).endpoint.name).toBe('orders-v2');

  const [first] = (await use('list_destinations', { endpoint_id: endpoint.id })).data;
  expect(first).toMatchObject({ endpoint_id: endpoint.id, destination: { type: 'url', url: receiver.url }, status: 'active', health: { consecutive_failures: 0 } });
  const second = (await use('add_destination', { endpoint_id: endpoint.id, destination: { type: 'cli' }, rate_per_second: 5 })).destination;
  expect(second).toMatchObject({ endpoint_id: endpoint.id, destination: { type: 'cli' }, rate_per_second: 5, status: 'active' });
  expect((await use('update_destination', { destination_id: second.id, status: 'paused', rate_per_second: null })).destination).toMatchObject({ status: 'paused', rate_per_second: null });
  const ordered = (await use('update_destination', { destination_id: second.id, destination: { type: 'url', url: receiver.url }, ordering: { key: { header: 'x-customer' } } })).destination;
  expect(ordered.ordering).toEqual({ key: { header: 'x-customer' }, on_give_up: 'block' });
  expect(await use('list_blocked_keys', { destination_id: second.id })).toEqual({ data: [] });
  expect(toolError(await client.callTool({ name: 'unblock_key', arguments: { destination_id: second.id, key: 'acme' } }))).toMatchObject({ code: 'key_not_blocked', status: 404 });
  called.add('unblock_key');
  expect(await use('delete_destination', { destination_id: second.id })).toEqual({ deleted: true, destination_id: second.id });
  expect((await use('list_destinations', { endpoint_id: endpoint.id })).data.map((item: { id: string }) => item.id)).toEqual([first.id]);

  const sent = await use('send_test_event', { endpoint_id: endpoint.id, event_type: 'order.paid', payload: { order: 42, note: 'héllo' } });
  expect(sent).toMatchObject({ endpoint_id: endpoint.id, status: 'pending' });
  expect(sent.event_id).toMatch(/^evt_/);
  const events = await use('list_events', { endpoint_id: endpoint.id, type: 'order.paid', status: 'pending', limit: 10 });
  expect(events.data.map((event: { id: string }) => event.id)).toEqual([sent.event_id]);
  const fetched = await use('get_event', { event_id: sent.event_id });
  expect(fetched.payload).toEqual({ order: 42, note: 'héllo' });
  expect(fetched.event).toMatchObject({ type: 'order.paid', body_encoding: 'utf8', content_type: 'application/json' });
  expect(fetched.event.headers['x-event-type']).toBe('order.paid');

  const replay = await use('replay_event', { event_id: sent.event_id, destination_id: first.id });
  expect(replay.replay).toEqual([{ destination_id: first.id, outcome: 'attempted' }]);
  const replayed = replay.event;
  expect(replayed.status).toBe('delivered');
  expect(replayed.attempts.at(-1)).toMatchObject({ trigger: 'replay', response_status: 200, destination_id: first.id });
  expect(lastReceivedBody()).toBe(JSON.stringify({ order: 42, note: 'héllo' }));

  const transformed = await use('test_transformation', {
    code: "addHandler('transform', (request, context) => { context.setType('order.large'); return { ...request, body: { order: request.body.order } }; });",
    event_id: sent.event_id,
  });
  expect(transformed).toMatchObject({ ok: true, type: 'order.large', request: { body: { order: 42 } }, logs: [] });
  const failing = await use('test_transformation', { code: "addHandler('transform', () => {\n  throw new Error('nope');\n});", request: {} });
  expect(failing).toMatchObject({ ok: false, error: { message: 'Error: nope', line: 2 } });

  const bulk = await use('bulk_replay', { endpoint_id: endpoint.id, destination_id: first.id, status: 'delivered' });
  expect(bulk).toMatchObject({ replayed: 1, deliveries: 1, waiting_for_listener: 0 });
  expect(bulk.limit).toBeGreaterThan(1);

  // Nothing failed here, so no issue exists (apps/relay/test/mcp-issues.test.ts follows one from failure to resolved).
  expect(await use('list_issues', { status: 'open,acknowledged,resolved', endpoint_id: endpoint.id })).toEqual({ data: [], next_cursor: null });
  const noIssue = 'iss_00000000000000000000000000';
  for (const name of ['get_issue', 'list_issue_events', 'acknowledge_issue', 'resolve_issue', 'retry_issue']) {
    called.add(name);
    expect(toolError(await client.callTool({ name, arguments: { issue_id: noIssue } })), name).toMatchObject({ code: 'issue_not_found', status: 404 });
  }

  expect(await use('delete_endpoint', { endpoint_id: spare.id })).toEqual({ deleted: true, endpoint_id: spare.id });
  expect((await use('list_endpoints')).data.map((item: { id: string }) => item.id)).toEqual([endpoint.id]);

  const added = await use('add_member', { email: 'teammate@example.com' });
  expect(added.member).toMatchObject({ email: 'teammate@example.com', role: 'member' });
  expect(added.api_key).toMatch(/^hk_/);
  expect((await use('set_member_role', { member_id: added.member.id, role: 'admin' })).member.role).toBe('admin');
  const team = await use('list_members');
  expect(team.data.map((member: { role: string }) => member.role)).toEqual(['admin', 'admin']);
  expect(await use('remove_member', { member_id: added.member.id })).toEqual({ removed: true, member_id: added.member.id });
  expect((await use('list_members')).data).toHaveLength(1);

  const notifications = (await use('set_notification_url', { url: receiver.url })).notifications;
  expect(notifications).toMatchObject({ url: receiver.url, status: 'active' });
  expect(notifications).not.toHaveProperty('secret');
  expect((await use('get_notifications')).notifications).toEqual(notifications);
  expect(await use('list_notification_events', { type: 'event.failed' })).toEqual({ data: [], next_cursor: null });
  expect(await use('clear_notifications')).toEqual({ cleared: true });

  // Last: it erases the account the client acts for. Without its own id as confirmation, nothing is erased.
  called.add('delete_account');
  const refused = toolError(await client.callTool({ name: 'delete_account', arguments: { confirm: 'acct_00000000000000000000000000' } }));
  expect(refused).toMatchObject({ code: 'confirmation_required', status: 400 });
  expect((await use('get_account')).account.id).toBe(account.id);
  const deleted = await use('delete_account', { confirm: account.id });
  expect(deleted).toMatchObject({ id: account.id, deleted: true, erased: { endpoints: 2, members: 1 } }); // the deleted spare included
  expect(deleted.erased.events).toBeGreaterThan(0);
  // Its key is gone: over stdio the relay's 401 is a tool error, over HTTP the transport itself is refused.
  const afterwards = await client.callTool({ name: 'get_account', arguments: {} })
    .then((result) => toolError(result).code, (error: Error) => (error.message.includes('"invalid_api_key"') ? 'invalid_api_key' : error.message));
  expect(afterwards).toBe('invalid_api_key');

  expect([...called].sort(), 'every listed tool was called').toEqual(tools.map((tool) => tool.name).sort());
}
