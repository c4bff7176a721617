/**
 * `/mcp` refuses requests from web pages of other origins (issue 20, item 5): a request
 * whose `Origin` is neither in HOOK_MCP_ALLOWED_ORIGINS nor the relay's own (HOOK_PUBLIC_URL)
 * is answered 403 mcp_origin_refused, including the DNS-rebinding shape of the MCP
 * conformance scenario `dns-rebinding-protection` (Host and Origin both naming the
 * attacker's host); allowed origins and requests without Origin (programs) are served.
 */
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@hook/relay';
import { api, expectProblem, signUp, startTestRelay, type ApiResponse, type TestRelay } from '@hook/test/relay';

const ALLOWED = 'https://agents.example.com';
const PUBLIC_URL = 'https://hooks.example.com';
const TOOLS_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const MCP_ACCEPT = { accept: 'application/json, text/event-stream' };

let relay: TestRelay;
let key: string;

beforeAll(async () => {
  const { mcpAllowedOrigins } = loadConfig({ HOOK_MCP_ALLOWED_ORIGINS: ` ${ALLOWED}/ , http://localhost:3000` });
  relay = await startTestRelay({ mcpAllowedOrigins, publicUrl: PUBLIC_URL });
  ({ key } = await signUp(relay.baseUrl));
});
afterAll(async () => relay.close());

function toolsList(origin?: string): Promise<ApiResponse> {
  return api(relay.baseUrl, 'POST', '/mcp', { key, json: TOOLS_LIST, headers: { ...MCP_ACCEPT, ...(origin === undefined ? {} : { origin }) } });
}

/** A POST /mcp with Host `host` and Origin naming it too (unless given), as a page of that host sends it (fetch cannot set Host). */
function rebound(host: string, origin = `http://${host}`): Promise<{ status: number; body: any }> {
  const { port } = new URL(relay.baseUrl);
  const body = JSON.stringify(TOOLS_LIST);
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: '127.0.0.1', port, method: 'POST', path: '/mcp',
      agent: false,
      headers: { connection: 'close', host, origin, authorization: `Bearer ${key}`, 'content-type': 'application/json', ...MCP_ACCEPT, 'content-length': Buffer.byteLength(body) },
    }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
    request.once('error', reject);
    request.end(body);
  });
}

describe('POST /mcp with an Origin header', () => {
  it('refuses an origin that is not allowed with 403 mcp_origin_refused, saying how to allow it', async () => {
    const problem = expectProblem(await toolsList('https://evil.example'), 403, 'mcp_origin_refused');
    expect(problem.detail).toContain('"https://evil.example"');
    expect(problem.fix).toContain('HOOK_MCP_ALLOWED_ORIGINS');
    // Same host, other scheme or port: another origin.
    expectProblem(await toolsList('http://agents.example.com'), 403, 'mcp_origin_refused');
    expectProblem(await toolsList('https://agents.example.com:8443'), 403, 'mcp_origin_refused');
    // What sandboxed and file: pages send.
    expectProblem(await toolsList('null'), 403, 'mcp_origin_refused');
  });

  it('refuses it before the key is checked: 403 without a key or with a wrong one, and not counted against the key\'s rate limit', async () => {
    const headers = { ...MCP_ACCEPT, origin: 'https://evil.example' };
    expectProblem(await api(relay.baseUrl, 'POST', '/mcp', { json: TOOLS_LIST, headers }), 403, 'mcp_origin_refused');
    expectProblem(await api(relay.baseUrl, 'POST', '/mcp', { json: TOOLS_LIST, headers, key: `hk_${'A'.repeat(43)}` }), 403, 'mcp_origin_refused');
    const refused = await api(relay.baseUrl, 'POST', '/mcp', { json: TOOLS_LIST, headers, key });
    expect(refused.headers.get('ratelimit-limit')).toBeNull();
    // Other routes are not the MCP endpoint's business: a page's Origin on the REST API changes nothing.
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key, headers: { origin: 'https://evil.example' } })).status).toBe(200);
  });

  it('refuses the DNS-rebinding shape (Host and Origin naming the attacker) even with a valid key', async () => {
    const { port } = new URL(relay.baseUrl);
    const refused = await rebound(`evil.example.com:${port}`);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('mcp_origin_refused');
  });

  it('serves a same-origin request under a loopback name on any port (the conformance suite\'s localhost-host-valid-accepted)', async () => {
    const { port } = new URL(relay.baseUrl);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `relay.localhost:${port}`, `[::1]:${port}`]) {
      const served = await rebound(host);
      expect(served.status, host).toBe(200);
      expect(served.body.result.tools.length, host).toBeGreaterThan(10);
    }
    // Same origin under another name is the rebinding shape; a loopback Origin for another port or scheme is another origin.
    expect((await rebound(`hooks.internal:${port}`)).status).toBe(403);
    expect((await rebound(`127.0.0.1:${port}`, `http://127.0.0.1:${Number(port) + 1}`)).status).toBe(403);
    expect((await rebound(`localhost:${port}`, `https://localhost:${port}`)).status).toBe(403);
  });

  it('serves an allowed origin, the relay\'s own public origin, and an origin written differently but equal', async () => {
    for (const origin of [ALLOWED, PUBLIC_URL, 'http://localhost:3000', 'HTTPS://Agents.Example.com:443']) {
      const answer = await toolsList(origin);
      expect(answer.status, origin).toBe(200);
      expect(answer.body.result.tools.length, origin).toBeGreaterThan(10);
    }
  });
});

describe('POST /mcp without an Origin header', () => {
  it('is served as before: the MCP SDK client (a program, not a page) lists the tools', async () => {
    const answer = await toolsList();
    expect(answer.status).toBe(200);
    const client = new Client({ name: 'origin-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${relay.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      expect((await client.listTools()).tools.length).toBeGreaterThan(10);
    } finally {
      await client.close();
    }
  });
});

describe('HOOK_MCP_ALLOWED_ORIGINS', () => {
  it('is empty by default, so every page origin but the relay\'s own is refused', async () => {
    expect(loadConfig({}).mcpAllowedOrigins).toEqual([]);
    const plain = await startTestRelay();
    try {
      const { key: plainKey } = await signUp(plain.baseUrl);
      const answer = await api(plain.baseUrl, 'POST', '/mcp', { key: plainKey, json: TOOLS_LIST, headers: { ...MCP_ACCEPT, origin: ALLOWED } });
      expectProblem(answer, 403, 'mcp_origin_refused');
      expect((await api(plain.baseUrl, 'POST', '/mcp', { key: plainKey, json: TOOLS_LIST, headers: MCP_ACCEPT })).status).toBe(200);
    } finally {
      await plain.close();
    }
  });

  it('takes comma-separated origins, normalized, and refuses anything that is not an origin', () => {
    expect(loadConfig({ HOOK_MCP_ALLOWED_ORIGINS: 'HTTPS://App.Example.com:443/, http://127.0.0.1:8080,' }).mcpAllowedOrigins).toEqual(['https://app.example.com', 'http://127.0.0.1:8080']);
    for (const value of ['https://app.example.com/console', 'app.example.com', 'ftp://files.example.com', 'https://app.example.com?x=1', 'https://user@app.example.com', '*']) {
      expect(() => loadConfig({ HOOK_MCP_ALLOWED_ORIGINS: value }), value).toThrow(/HOOK_MCP_ALLOWED_ORIGINS=.* is not valid: expected comma-separated origins/);
    }
  });
});
