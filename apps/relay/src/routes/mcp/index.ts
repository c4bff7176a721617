/**
 * `POST /mcp`: the MCP tools (packages/mcp) over the Streamable HTTP transport, stateless:
 * each request gets a fresh server and transport, so any relay process can answer any
 * request and nothing is kept between them. The route sits behind the same API-key check
 * as the REST API; its tools call this relay's own REST API over loopback HTTP with the
 * caller's key, so they see exactly what that key may see there and nothing more.
 *
 * A request whose `Origin` header names a web page not on the allowed list is refused
 * (403 mcp_origin_refused) before its key is checked: the MCP transport spec asks servers
 * to validate Origin against DNS rebinding, where a page of another site reaches the relay
 * under its own name (docs/agents.md#mcp). See `refuseForeignMcpOrigins`.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HookError, MCP_ORIGIN_REFUSED } from '@hook/core';
import { createHookMcpServer } from '@hook/mcp';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallerAddresses } from '../../plugins/ip-allowlist.ts';
import { errorResponses, Problem } from '../../schemas.ts';

const security = [{ bearerAuth: [] }];

/** A JSON-RPC 2.0 message (a result or an error), or a batch of them. */
const JsonRpcMessage = {
  anyOf: [
    { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { const: '2.0' }, id: {}, result: {}, error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} } } } },
    { type: 'array', items: { type: 'object', required: ['jsonrpc'] } },
  ],
};

/** The caller's `hk_…` key (the auth hook has already checked it). */
function bearerKey(request: FastifyRequest): string {
  return /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
}

/** This relay as reached on the socket the request came in on: `http://127.0.0.1:8080`. */
function ownBaseUrl(request: FastifyRequest): string {
  const address = request.socket.localAddress ?? '127.0.0.1';
  const host = address.includes(':') ? `[${address}]` : address;
  return `http://${host}:${request.socket.localPort}`;
}

/** GET (a server-to-client stream) and DELETE (end a session) mean nothing without sessions: 405, as the transport spec allows. */
function methodNotAllowed(_request: FastifyRequest, reply: FastifyReply) {
  return reply
    .code(405)
    .header('allow', 'POST')
    .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST.' }, id: null });
}

/** Where the MCP transport is served. */
export const MCP_PATH = '/mcp';

/**
 * Refuses every request to /mcp whose `Origin` is not in `allowedOrigins` (origins as
 * `URL.origin` gives them) with 403 mcp_origin_refused. Added to the authenticated scope
 * before its API-key check, so the answer is that 403 whatever the key (the transport spec:
 * an Origin that is present and invalid MUST get 403), and a refused request is not counted
 * against the key's rate limit. Only browsers send Origin, and they send it on every POST, so:
 * - a request without one is a program (an MCP client, curl) and passes: an allowed list
 *   cannot apply to it, and the API key is what authenticates it;
 * - a page of another site, or one that reached the relay by DNS rebinding (its own name
 *   resolving to the relay's address, so its Origin is that name), is refused.
 * - a page of the relay itself reached by a loopback name (`localhost`, `*.localhost`,
 *   127.0.0.0/8, [::1]) on any port passes: its Origin is the request's own scheme and Host
 *   (same origin), and a loopback name is one DNS rebinding cannot take, since browsers
 *   resolve it locally. That is the MCP conformance suite's `localhost-host-valid-accepted`
 *   (Host and Origin both `127.0.0.1:<port>`), a relay reached through another local port.
 * A same-origin request under any other name is refused unless that origin is allowed: under
 * DNS rebinding Host and Origin both name the attacker's host, so same origin alone proves
 * nothing there (the suite's `localhost-host-rebinding-rejected`). The MCP SDK's own `allowedOrigins` /
 * `enableDnsRebindingProtection` options are not used: an empty list there allows every
 * origin (here it allows none), and they answer with a JSON-RPC error without the
 * registry's code and fix, after the request was authenticated and the reply taken over.
 */
export function refuseForeignMcpOrigins(scope: FastifyInstance, allowedOrigins: readonly string[]): void {
  const allowed = new Set(allowedOrigins);
  scope.addHook('onRequest', async (request) => {
    const origin = request.headers.origin;
    if (origin === undefined || request.routeOptions.url !== MCP_PATH) return;
    let normalized: string | undefined;
    try {
      normalized = new URL(origin).origin;
    } catch {
      // `null` (a sandboxed or file: page) and anything else that is no URL: never allowed
    }
    if (normalized !== undefined && (allowed.has(normalized) || isLoopbackSameOrigin(request, normalized))) return;
    throw new HookError(MCP_ORIGIN_REFUSED, [JSON.stringify(origin.slice(0, 200))]);
  });
}

/** Whether `origin` is the request's own scheme and Host, and that Host a loopback name (see above). */
function isLoopbackSameOrigin(request: FastifyRequest, origin: string): boolean {
  let own: URL;
  try {
    own = new URL(`${request.protocol}://${request.headers.host ?? ''}`);
  } catch {
    return false;
  }
  if (own.origin !== origin) return false;
  const name = own.hostname;
  return name === 'localhost' || name.endsWith('.localhost') || name === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(name);
}

/** How long a shutdown waits for MCP calls in progress before it ends their connections. */
const MCP_CLOSE_GRACE_MS = 5000;

export async function mcpRoutes(app: FastifyInstance, options: { callerAddresses: CallerAddresses }): Promise<void> {
  // An MCP call's reply is hijacked (the SDK's transport writes it): Fastify's close does
  // not end it, and one left open held a relay's shutdown (seen in mcp-origin.test's
  // afterAll). Closing, the relay gives those calls a few seconds, then ends them.
  const open = new Set<ServerResponse>();
  app.addHook('preClose', (done) => {
    if (open.size > 0) setTimeout(() => { for (const response of open) response.destroy(); }, MCP_CLOSE_GRACE_MS).unref();
    done();
  });
  app.post(MCP_PATH, {
    schema: {
      tags: ['mcp'],
      summary: 'MCP over Streamable HTTP (stateless): JSON-RPC in, JSON out; the tools of docs/agents.md',
      security,
      response: {
        200: { description: 'The JSON-RPC response', content: { 'application/json': { schema: JsonRpcMessage } } },
        202: { description: 'A notification or response was accepted (no body)', type: 'null' },
        // The key check answers problem+json; the MCP transport answers its own refusals (406 without
        // Accept: application/json, text/event-stream; 415; 400 not JSON-RPC) as JSON-RPC errors, as MCP clients expect.
        '4XX': { description: 'A client error', content: { 'application/problem+json': { schema: Problem }, 'application/json': { schema: JsonRpcMessage } } },
        '5XX': errorResponses['5XX'],
      },
    },
  }, async (request, reply) => {
    // The loopback calls carry this request's address, so the account's allowed_ips judge the MCP caller, not 127.0.0.1.
    const headers = options.callerAddresses.headersFor(request);
    const server = createHookMcpServer({ apiUrl: ownBaseUrl(request), apiKey: bearerKey(request), userAgent: 'hook-relay-mcp', headers });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    open.add(reply.raw);
    reply.raw.on('close', () => {
      open.delete(reply.raw);
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });
  app.get(MCP_PATH, { schema: { hide: true } }, methodNotAllowed);
  app.delete(MCP_PATH, { schema: { hide: true } }, methodNotAllowed);
}
