/**
 * `hook mcp`: the real binary spawned by the official MCP SDK client over stdio, with
 * an isolated config directory, against a real relay. With a key it serves the tools;
 * with none it offers sign_up, saves the new key in the profile and goes on with it.
 */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HOOK_BIN, HookUser, repoRoot } from '../support/cli.ts';
import { callEveryTool, toolError } from '../support/mcp.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { api, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let receiver: Receiver;
const users: HookUser[] = [];
const running: Array<{ client: Client; stderr: () => string }> = [];

beforeAll(async () => {
  relay = await startTestRelay();
  receiver = await startReceiver();
});
afterAll(async () => {
  await relay?.close();
  await receiver?.close();
  for (const user of users) user.remove();
});
afterEach(async () => {
  for (const { client } of running.splice(0)) await client.close();
});

interface Session {
  client: Client;
  user: HookUser;
  /** What the process wrote to stderr so far. */
  stderr(): string;
  /** Errors the client met reading the server (a stray line on stdout is one). */
  protocolErrors: Error[];
}

/** Starts `hook mcp` as a fresh user, with HOOK_API_KEY when `apiKey` is given. */
async function startHookMcp(apiKey?: string): Promise<Session> {
  const user = new HookUser();
  users.push(user);
  const transport = new StdioClientTransport({
    command: HOOK_BIN,
    args: ['mcp'],
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: user.home,
      XDG_CONFIG_HOME: user.configHome,
      HOOK_API_URL: relay.baseUrl,
      ...(apiKey ? { HOOK_API_KEY: apiKey } : {}),
    },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'hook-stdio-test', version: '1.0.0' });
  const protocolErrors: Error[] = [];
  client.onerror = (error) => protocolErrors.push(error);
  await client.connect(transport);
  running.push({ client, stderr: () => stderr });
  return { client, user, stderr: () => stderr, protocolErrors };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((tool) => tool.name).sort();
}

describe('hook mcp over stdio', () => {
  it('calls every tool it lists against the relay, as over HTTP', async () => {
    const { key } = await signUp(relay.baseUrl);
    const { client, protocolErrors } = await startHookMcp(key);
    await callEveryTool(client, receiver.url, () => receiver.requests.at(-1)?.body.toString());
    expect(protocolErrors).toEqual([]);
  });

  it('serves the tools against the configured relay and key, with only MCP on stdout', async () => {
    const { key, accountId } = await signUp(relay.baseUrl);
    const session = await startHookMcp(key);
    const { client } = session;
    // The same serverInfo as the relay's /mcp: the version of Hook, which is the CLI package's.
    const cli = JSON.parse(readFileSync(new URL('../../apps/cli/package.json', import.meta.url), 'utf8')) as { version: string };
    expect(client.getServerVersion()).toMatchObject({ name: 'hook', version: cli.version });
    const overHttp = await api(relay.baseUrl, 'POST', '/mcp', {
      key, headers: { accept: 'application/json, text/event-stream' },
      json: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    });
    expect(overHttp.body.result.serverInfo).toEqual(client.getServerVersion());
    const names = await toolNames(client);
    expect(names).toContain('create_endpoint');
    expect(names).toContain('replay_event');
    expect(names).not.toContain('sign_up');

    expect((await call(client, 'get_account')).account.id).toBe(accountId);
    const changed = await call(client, 'upgrade_plan', { plan: 'enterprise' });
    expect(changed.account.plan).toBe('enterprise');
    expect(changed.plan_history.map((change: { to_plan: string }) => change.to_plan)).toEqual(['enterprise']);
    const { endpoint } = await call(client, 'create_endpoint', { name: 'stdio-orders' });
    const sent = await call(client, 'send_test_event', { endpoint_id: endpoint.id, event_type: 'order.created', payload: { id: 7 } });
    const listed = await call(client, 'list_events', { endpoint_id: 'stdio-orders' });
    expect(listed.data.map((event: { id: string }) => event.id)).toEqual([sent.event_id]);
    const { event, payload } = await call(client, 'get_event', { event_id: sent.event_id });
    expect(event).toMatchObject({ id: sent.event_id, type: 'order.created', status: 'pending' });
    expect(payload).toEqual({ id: 7 });

    const failed = toolError(await client.callTool({ name: 'delete_endpoint', arguments: { endpoint_id: 'ep_00000000000000000000000000' } }));
    expect(failed).toMatchObject({ code: 'endpoint_not_found', status: 404 });
    expect(failed.fix).toMatch(/\S/);

    expect(session.protocolErrors).toEqual([]);
    expect(session.stderr()).toContain(`serving MCP on stdio against ${relay.baseUrl}`);
  });

  it('offers sign_up with no key, saves the new key in the profile, and the other tools use it', async () => {
    const session = await startHookMcp();
    const { client, user } = session;
    expect(await toolNames(client)).toContain('sign_up');

    expect(toolError(await client.callTool({ name: 'get_account', arguments: {} })).code).toBe('authentication_required');

    const signup = await call(client, 'sign_up');
    expect(signup.api_key).toMatch(/^hk_/);
    expect(signup.account.id).toMatch(/^acct_/);
    expect((await call(client, 'get_account')).account.id).toBe(signup.account.id);
    expect(await toolNames(client)).not.toContain('sign_up');

    const config = JSON.parse(readFileSync(user.configPath, 'utf8'));
    expect(config.profiles.default).toMatchObject({ api_url: relay.baseUrl, api_key: signup.api_key });
    expect(session.stderr()).toContain(`signed up as ${signup.account.id}`);
    expect(session.protocolErrors).toEqual([]);
  });

  it('reports an unreachable relay as a tool error with a fix', async () => {
    const user = new HookUser();
    users.push(user);
    const transport = new StdioClientTransport({
      command: HOOK_BIN,
      args: ['mcp'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: user.home, XDG_CONFIG_HOME: user.configHome, HOOK_API_URL: 'http://127.0.0.1:9', HOOK_API_KEY: 'hk_unused0000000000000000000000' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'hook-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    running.push({ client, stderr: () => '' });
    await client.listTools();
    const error = toolError(await client.callTool({ name: 'list_endpoints', arguments: {} }));
    expect(error.code).toBe('relay_unreachable');
    expect(error.text).toContain('http://127.0.0.1:9');
    expect(error.fix).toContain('HOOK_API_URL');
  });
});
