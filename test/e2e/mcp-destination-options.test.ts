/**
 * A destination's options (issue 31) through `hook mcp`, the real binary spawned by the
 * official MCP SDK client over stdio against a real relay: add_destination with ordering
 * and auth, update_destination removing them, list_blocked_keys and unblock_key. The
 * auth secret goes in and never comes back out, in the structured result or the text.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOOK_BIN, HookUser, repoRoot } from '../support/cli.ts';
import { callTool, toolError } from '../support/mcp.ts';
import { createEndpoint, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let client: Client;
let endpointId = '';
const user = new HookUser();

beforeAll(async () => {
  relay = await startTestRelay({ allowPrivateDestinations: true });
  const { key } = await signUp(relay.baseUrl);
  endpointId = (await createEndpoint(relay.baseUrl, key, { name: 'ordered' })).id;
  const transport = new StdioClientTransport({
    command: HOOK_BIN,
    args: ['mcp'],
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: user.home, XDG_CONFIG_HOME: user.configHome, HOOK_API_URL: relay.baseUrl, HOOK_API_KEY: key },
    stderr: 'pipe',
  });
  client = new Client({ name: 'destination-options-test', version: '1.0.0' });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  await relay?.close();
  user.remove();
});

describe('destination options over MCP', () => {
  it('adds an ordered destination that signs in, shows no secret, lists no blocked keys and removes the options again', async () => {
    const token = 'mcp-bearer-token-5e4d3c';
    const result = await client.callTool({
      name: 'add_destination',
      arguments: {
        endpoint_id: endpointId,
        destination: { type: 'url', url: 'https://example.com/ordered' },
        auth: { type: 'bearer', token },
        ordering: { key: { json_field: 'customer.id' }, on_give_up: 'block' },
        delay_seconds: 60,
      },
    });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(JSON.stringify(result)).not.toContain(token);
    const { destination } = result.structuredContent as { destination: any };
    expect(destination).toMatchObject({
      endpoint_id: endpointId,
      auth: { type: 'bearer', secret_set: true },
      ordering: { key: { json_field: 'customer.id' }, on_give_up: 'block' },
      delay_seconds: 60,
      signature_scheme: 'v1',
    });

    expect(await callTool(client, 'list_blocked_keys', { destination_id: destination.id })).toEqual({ data: [] });
    expect(toolError(await client.callTool({ name: 'unblock_key', arguments: { destination_id: destination.id, key: 'cus_1' } }))).toMatchObject({ code: 'key_not_blocked', status: 404 });

    const updated = (await callTool(client, 'update_destination', { destination_id: destination.id, auth: null, ordering: null, delay_seconds: null })).destination;
    expect(updated).toMatchObject({ id: destination.id, auth: null, ordering: null, delay_seconds: null });
  });

  it('publishes to a broker with basic auth, and refuses another kind of auth for it naming the field', async () => {
    const password = 'mcp-broker-password-9a8b';
    const added = await client.callTool({
      name: 'add_destination',
      arguments: { endpoint_id: endpointId, destination: { type: 'nats', url: 'nats://127.0.0.1:4222', subject: 'orders.created' }, auth: { type: 'basic', username: 'hook', password } },
    });
    expect(added.isError, JSON.stringify(added.content)).toBeFalsy();
    expect(JSON.stringify(added)).not.toContain(password);
    expect((added.structuredContent as { destination: any }).destination).toMatchObject({ destination: { type: 'nats', subject: 'orders.created' }, auth: { type: 'basic', username: 'hook', secret_set: true } });

    const refused = toolError(await client.callTool({
      name: 'add_destination',
      arguments: { endpoint_id: endpointId, destination: { type: 'nats', url: 'nats://127.0.0.1:4222', subject: 'orders.created' }, auth: { type: 'bearer', token: 'x' } },
    }));
    expect(refused).toMatchObject({ code: 'validation_failed' });
    expect(refused.errors?.map((error) => error.field)).toEqual([expect.stringMatching(/auth\.type$/)]);
  });
});
