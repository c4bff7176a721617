/**
 * `/mcp` on a real relay, spoken to by the official MCP SDK client over Streamable
 * HTTP: the tool list matches the REST API (openapi.json) and every tool works.
 */
import { readFileSync } from 'node:fs';
import { HOOK_TOOLS, PATHS_WITHOUT_TOOLS, REST_ROUTE_COVERAGE } from '@hook/mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callEveryTool, callTool, toolError } from '@hook/test/mcp';
import { startReceiver, type Receiver } from '@hook/test/receiver';
import { api, expectProblem, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
let receiver: Receiver;
let key: string;
const openClients: Client[] = [];

async function connect(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'hook-relay-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${relay.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } });
  await client.connect(transport);
  openClients.push(client);
  return client;
}


beforeAll(async () => {
  relay = await startTestRelay({ allowPrivateDestinations: true });
  receiver = await startReceiver();
  ({ key } = await signUp(relay.baseUrl));
});
afterAll(async () => {
  for (const client of openClients) await client.close();
  await receiver.close();
  await relay.close();
});

describe('MCP tool coverage of the REST API', () => {
  it('has a decision for every operation in /openapi.json, and a tool for every decision that names one', async () => {
    const document = (await api(relay.baseUrl, 'GET', '/openapi.json')).body;
    const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.keys(item).filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method)).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const undecided = operations.filter((operation) => !(operation in REST_ROUTE_COVERAGE) && !(operation.split(' ')[1]! in PATHS_WITHOUT_TOOLS));
    expect(undecided, 'REST operations with neither a tool nor a reason in packages/mcp/src/rest-coverage.ts').toEqual([]);
    const gone = Object.keys(REST_ROUTE_COVERAGE).filter((operation) => !operations.includes(operation));
    expect(gone, 'rest-coverage.ts names operations the API does not have').toEqual([]);

    const mapped = Object.values(REST_ROUTE_COVERAGE).flatMap((coverage) => ('tool' in coverage ? [coverage.tool] : []));
    expect([...new Set(mapped)].sort()).toEqual(HOOK_TOOLS.map((tool) => tool.name).sort());
  });
});

describe('POST /mcp', () => {
  it('needs the same API key as the REST API', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const headers = { accept: 'application/json, text/event-stream' };
    expectProblem(await api(relay.baseUrl, 'POST', '/mcp', { json: initialize, headers }), 401, 'authentication_required');
    expectProblem(await api(relay.baseUrl, 'POST', '/mcp', { json: initialize, headers, key: 'hk_not_a_real_key_000000000000' }), 401, 'invalid_api_key');
    const ok = await api(relay.baseUrl, 'POST', '/mcp', { json: initialize, headers, key });
    expect(ok.status).toBe(200);
    expect(ok.body.result.serverInfo.name).toBe('hook');
  });

  it('lists every tool but sign_up, each with input and output schemas', async () => {
    const client = await connect(key);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(HOOK_TOOLS.filter((tool) => tool.availability !== 'without_key').map((tool) => tool.name).sort());
    for (const tool of tools) {
      expect(tool.description, tool.name).toBeTruthy();
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
  });

  it('calls every tool it lists against the relay', async () => {
    // A fresh account: the last tool called (delete_account) erases it.
    await callEveryTool(await connect((await signUp(relay.baseUrl)).key), receiver.url, () => receiver.requests.at(-1)?.body.toString());
  });

  it('returns API errors as tool errors with the code, detail and fix', async () => {
    const client = await connect(key);
    await client.listTools(); // so the client checks results against the output schemas, as real clients do
    const result = await client.callTool({ name: 'get_endpoint', arguments: { endpoint_id: 'ep_00000000000000000000000000' } });
    const error = toolError(result);
    expect(error).toMatchObject({ code: 'endpoint_not_found', status: 404 });
    expect(error.detail).toContain('ep_00000000000000000000000000');
    expect(error.fix).toMatch(/\S/);
    expect(error.request_id).toMatch(/^req_/);
    expect(error.text).toContain('endpoint_not_found');
    expect(error.text).toContain(`Fix: ${error.fix}`);

    const invalid = toolError(await client.callTool({ name: 'create_endpoint', arguments: { name: 'x', destination: { type: 'url', url: 'ftp://nope' } } }));
    expect(invalid.code).toBe('validation_failed');
    expect(invalid.errors?.length).toBeGreaterThan(0);
  });

  it('acts as the key it was called with: another account sees none of this one\'s endpoints', async () => {
    const mine = await connect(key);
    const { endpoint } = await callTool(mine, 'create_endpoint', { name: 'private' });
    const other = await connect((await signUp(relay.baseUrl)).key);
    expect((await callTool(other, 'list_endpoints')).data).toEqual([]);
    expect(toolError(await other.callTool({ name: 'get_endpoint', arguments: { endpoint_id: endpoint.id } })).code).toBe('endpoint_not_found');
  });
});

describe('signature verification over MCP', () => {
  it('update_endpoint sets it (the secret never comes back) and get_event shows what the check found', async () => {
    const client = await connect((await signUp(relay.baseUrl)).key);
    const { endpoint: created } = await callTool(client, 'create_endpoint', { name: 'github' });
    const { endpoint } = await callTool(client, 'update_endpoint', { endpoint_id: created.id, verification: { provider: 'github', secret: "It's a Secret to Everybody", mode: 'flag' } });
    expect(endpoint.verification).toEqual({ provider: 'github', mode: 'flag', tolerance_seconds: 300, secret_set: true, secret_hint: 'body' });
    const signed = await fetch(endpoint.url, { method: 'POST', headers: { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' }, body: 'Hello, World!' });
    const unsigned = await fetch(endpoint.url, { method: 'POST', body: 'Hello, World!' });
    const verified = await callTool(client, 'get_event', { event_id: (await signed.json() as { id: string }).id });
    expect(verified.event.verification).toEqual({ provider: 'github', verified: true, reason: null });
    const flagged = await callTool(client, 'get_event', { event_id: (await unsigned.json() as { id: string }).id });
    expect(flagged.event.verification).toEqual({ provider: 'github', verified: false, reason: 'missing_header' });
    const { endpoint: off } = await callTool(client, 'update_endpoint', { endpoint_id: created.id, verification: null });
    expect(off.verification).toBeNull();
  });
});

describe('custom responses over MCP', () => {
  it('create_endpoint sets one, the ingest URL answers with it, update_endpoint null restores the default', async () => {
    const client = await connect((await signUp(relay.baseUrl)).key);
    const { endpoint } = await callTool(client, 'create_endpoint', { name: 'answered', response: { status: 202, body: 'ok {{event_id}}' } });
    expect(endpoint.response).toEqual({ status: 202, headers: {}, body: 'ok {{event_id}}' });
    const answer = await fetch(endpoint.url, { method: 'POST', body: 'x' });
    expect(answer.status).toBe(202);
    expect(await answer.text()).toMatch(/^ok evt_\w+$/);
    const { endpoint: off } = await callTool(client, 'update_endpoint', { endpoint_id: endpoint.id, response: null });
    expect(off.response).toBeNull();
  });
});

describe('handshakes over MCP', () => {
  it('update_endpoint sets one (the secret never comes back); the challenge is answered and get_event shows the handshake', async () => {
    const client = await connect((await signUp(relay.baseUrl)).key);
    const { endpoint: created } = await callTool(client, 'create_endpoint', { name: 'whatsapp' });
    const { endpoint } = await callTool(client, 'update_endpoint', { endpoint_id: created.id, handshake: { provider: 'meta', secret: 'meatyhamhock' } });
    expect(endpoint.handshake).toEqual({ provider: 'meta', secret_set: true, secret_hint: 'hock' });
    const answer = await fetch(`${endpoint.url}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock`);
    expect(await answer.text()).toBe('1158201444');
    const listed = await callTool(client, 'list_events', { endpoint_id: endpoint.id });
    expect(listed.data).toEqual([expect.objectContaining({ handshake: 'meta', status: 'filtered' })]);
    const { endpoint: off } = await callTool(client, 'update_endpoint', { endpoint_id: created.id, handshake: null });
    expect(off.handshake).toBeNull();
  });
});

describe('duplicates over MCP', () => {
  it('create_endpoint sets dedupe; send_test_event twice gives one event, the second answered duplicate with its id; update_endpoint changes and clears it', async () => {
    const client = await connect((await signUp(relay.baseUrl)).key);
    const { endpoint } = await callTool(client, 'create_endpoint', { name: 'stripe', dedupe: { json_field: 'id' } });
    expect(endpoint.dedupe).toEqual({ json_field: 'id' });
    const payload = { id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy', type: 'customer.created' };
    const first = await callTool(client, 'send_test_event', { endpoint_id: endpoint.id, payload });
    expect(first.status).toBe('pending');
    const again = await callTool(client, 'send_test_event', { endpoint_id: endpoint.id, payload });
    expect(again).toMatchObject({ event_id: first.event_id, status: 'duplicate' });
    const listed = await callTool(client, 'list_events', { endpoint_id: endpoint.id });
    expect(listed.data).toEqual([expect.objectContaining({ id: first.event_id, dedupe_key: payload.id })]);

    const { endpoint: byHeader } = await callTool(client, 'update_endpoint', { endpoint_id: endpoint.id, dedupe: { header: 'X-GitHub-Delivery' } });
    expect(byHeader.dedupe).toEqual({ header: 'x-github-delivery' });
    const { endpoint: off } = await callTool(client, 'update_endpoint', { endpoint_id: endpoint.id, dedupe: null });
    expect(off.dedupe).toBeNull();
    expect((await callTool(client, 'send_test_event', { endpoint_id: endpoint.id, payload })).status).toBe('pending');

    // One place only, and a header name must be one.
    for (const dedupe of [{ header: 'x-delivery', json_field: 'id' }, { header: 'bad header' }]) {
      const refused = await client.callTool({ name: 'update_endpoint', arguments: { endpoint_id: endpoint.id, dedupe } });
      expect(refused.isError, JSON.stringify(dedupe)).toBe(true);
      expect(JSON.stringify(refused.content), JSON.stringify(dedupe)).toContain('dedupe');
    }
  });
});

describe('MCP as an agent meets it (issue 28, items 11 and 19)', () => {
  it('reports the version of Hook (the CLI package\'s), as hook mcp does', async () => {
    const cli = JSON.parse(readFileSync(new URL('../../cli/package.json', import.meta.url), 'utf8')) as { version: string };
    const client = await connect(key);
    expect(client.getServerVersion()).toMatchObject({ name: 'hook', version: cli.version });
  });

  it('names a tool\'s own inputs in validation errors and tools in fixes', async () => {
    const client = await connect(key);
    await client.listTools();
    for (const [tool, input, args] of [
      ['get_endpoint', 'endpoint_id', { endpoint_id: 'nope' }],
      ['get_event', 'event_id', { event_id: 'nope' }],
      ['update_destination', 'destination_id', { destination_id: 'nope', status: 'paused' }],
      ['create_endpoint', 'name', { name: '' }],
    ] as const) {
      const error = toolError(await client.callTool({ name: tool, arguments: args }));
      expect(error.code, tool).toBe('validation_failed');
      expect(error.errors?.map((field) => field.field), tool).toEqual([input]);
      expect(error.detail, tool).toContain(`${input} `);
      expect(error.text, tool).not.toMatch(/params\.|body\.|query\./);
      expect(error.fix, tool).not.toMatch(/openapi|\/v1/);
    }
    const missing = toolError(await client.callTool({ name: 'get_endpoint', arguments: { endpoint_id: 'ep_00000000000000000000000000' } }));
    expect(missing.fix).toContain('list_endpoints');
  });

  it('list_events takes an endpoint name as hook does, answers {data, next_cursor} as REST does, and says limit is 1–100', async () => {
    const client = await connect((await signUp(relay.baseUrl)).key);
    const { endpoint } = await callTool(client, 'create_endpoint', { name: 'orders' });
    await callTool(client, 'create_endpoint', { name: 'other' });
    const sent = await callTool(client, 'send_test_event', { endpoint_id: endpoint.id, payload: { n: 1 } });
    const byName = await callTool(client, 'list_events', { endpoint_id: 'orders' });
    expect(byName).toEqual({ data: [expect.objectContaining({ id: sent.event_id, endpoint_id: endpoint.id })], next_cursor: null });
    expect(await callTool(client, 'list_events', { endpoint_id: endpoint.id })).toEqual(byName);

    const unknown = toolError(await client.callTool({ name: 'list_events', arguments: { endpoint_id: 'no-such-endpoint' } }));
    expect(unknown).toMatchObject({ code: 'endpoint_not_found', status: 404 });
    expect(unknown.detail).toContain('no-such-endpoint');
    expect(unknown.fix).toContain('list_endpoints');
    expect(unknown.fix).not.toContain('openapi');
    await callTool(client, 'create_endpoint', { name: 'orders' });
    expect(toolError(await client.callTool({ name: 'list_events', arguments: { endpoint_id: 'orders' } })).code).toBe('ambiguous_endpoint_name');

    const { tools } = await client.listTools();
    for (const name of ['list_endpoints', 'list_events', 'list_members', 'list_notification_events', 'list_destinations']) {
      const tool = tools.find((item) => item.name === name)!;
      expect(Object.keys(tool.outputSchema!.properties!), name).toContain('data');
    }
    const limit = (tools.find((item) => item.name === 'list_events')!.inputSchema.properties as Record<string, { minimum?: number; maximum?: number }>).limit;
    expect(limit).toMatchObject({ minimum: 1, maximum: 100 });
  });
});
