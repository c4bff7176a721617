/**
 * No secret reaches the relay's log: a relay process at HOOK_LOG_LEVEL=debug (one line per
 * request, each with its reqId) goes
 * through signup, keys, endpoints, secret reads and rotation, ingest with credentials,
 * signed deliveries, a playground session and MCP calls; then its whole stdout and
 * stderr are searched for every secret it handed out or received.
 */
import type { ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startRelayProcess } from '../support/relay-process.ts';
import { TEST_SECRET_KEY } from '../support/secret-key.ts';

let child: ChildProcess | undefined;
let database: TestDatabase | undefined;
let receiver: Receiver | undefined;

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await receiver?.close();
  await database?.drop();
});

async function json(response: Promise<Response>, status: number): Promise<any> {
  const answer = await response;
  const text = await answer.text();
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

describe('the relay log', () => {
  it('carries no API key, signing secret, playground token, Authorization value or signature', async () => {
    database = await freshDatabase();
    receiver = await startReceiver();
    const relay = await startRelayProcess(database.url, { HOOK_LOG_LEVEL: 'debug', HOOK_RETRY_SCHEDULE: '1s' });
    child = relay.child;
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const base = relay.baseUrl;
    const secrets: string[] = [];
    const keep = <T extends string>(secret: T): T => {
      secrets.push(secret);
      return secret;
    };
    keep(TEST_SECRET_KEY); // the HOOK_SECRET_KEY startRelayProcess gives the process

    const signup = await json(fetch(`${base}/v1/accounts`, { method: 'POST' }), 201);
    const key = keep(signup.api_key as string);
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const second = await json(fetch(`${base}/v1/api-keys`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'ci' }) }), 201);
    keep(second.api_key as string);
    const endpoint = await json(fetch(`${base}/v1/endpoints`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'logged', destination: { type: 'url', url: receiver.url } }) }), 201);
    keep(new URL(endpoint.url).pathname.split('/').at(-1)!); // the ingest id: the URL is the sender's secret
    keep((await json(fetch(`${base}/v1/endpoints/${endpoint.id}/secret`, { headers: auth }), 200)).secret);
    const rotated = await json(fetch(`${base}/v1/endpoints/${endpoint.id}/rotate-secret`, { method: 'POST', headers: { authorization: auth.authorization } }), 200);
    keep(rotated.secret ?? (await json(fetch(`${base}/v1/endpoints/${endpoint.id}/secret`, { headers: auth }), 200)).secret);

    // Ingest carrying a sender's credentials and a marker in the body; the first delivery fails, so it is retried too.
    const senderCredential = keep('Basic c2VuZGVyOnMzY3JldC1zZW5kZXItcGFzc3dvcmQ=');
    const bodyMarker = keep('body-marker-7f3a9c1e5b');
    receiver.respond = (_request, index) => ({ status: index === 0 ? 500 : 200 });
    await json(fetch(endpoint.url, { method: 'POST', headers: { authorization: senderCredential, 'content-type': 'application/json', cookie: 'session=cookie-marker-22b9' }, body: JSON.stringify({ marker: bodyMarker }) }), 200);
    const deliveries = await receiver.waitFor(2, 15_000);
    for (const delivery of deliveries) keep(String(delivery.headers['webhook-signature']));
    keep('cookie-marker-22b9');
    // Wrong and malformed credentials (refused, 401) carry secrets-to-be too.
    const wrongKey = keep(`${key.slice(0, -6)}zzzzzz`);
    const refused = await fetch(`${base}/v1/endpoints`, { headers: { authorization: `Bearer ${wrongKey}` } });
    expect(refused.status).toBe(401);
    const refusedProblem = (await refused.json()) as { request_id: string };
    expect(refusedProblem.request_id).toBe(refused.headers.get('x-request-id'));

    // The playground: a session, its token in a header and in a WebSocket URL, an event, a claim.
    const session = await json(fetch(`${base}/playground/session`, { method: 'POST' }), 201);
    const token = keep(session.token as string);
    await json(fetch(`${base}/playground/events`, { headers: { authorization: `Bearer ${token}` } }), 200);
    const socket = new WebSocket(`${base.replace('http', 'ws')}/playground/stream?token=${token}`);
    await new Promise((resolve, reject) => {
      socket.once('message', resolve);
      socket.once('error', reject);
    });
    socket.close();
    const claimed = await fetch(`${base}/playground/claim`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    if (claimed.status === 201) keep(((await claimed.json()) as { api_key: string }).api_key);

    // MCP over HTTP with the key.
    const client = new Client({ name: 'log-secrets-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    await client.callTool({ name: 'list_endpoints', arguments: {} });
    await client.callTool({ name: 'get_endpoint', arguments: { id: endpoint.id } });
    await client.close();

    // One last request, then its log line: the relay logs in order, so every line before it is in.
    await json(fetch(`${base}/v1/account`, { headers: auth }), 200);
    await expect.poll(() => output.split('\n').some((line) => line.includes('"request answered"') && line.includes('"route":"/v1/account"')), { timeout: 10_000 }).toBe(true);
    // Then stop the relay, and read its output to the end, so its shutdown lines are in too.
    const closed = new Promise((resolve) => child!.once('close', resolve));
    child.kill('SIGTERM');
    await closed;

    // Every request line is JSON with its reqId; the refused request's line has the request_id its client saw.
    const requestLines = output.split('\n').filter((line) => line.includes('"request answered"')).map((line) => JSON.parse(line) as { reqId?: string; statusCode: number; route: string });
    expect(requestLines.length).toBeGreaterThan(10);
    for (const line of requestLines) expect(line.reqId).toMatch(/^req_/);
    expect(requestLines.find((line) => line.reqId === refusedProblem.request_id)).toMatchObject({ statusCode: 401, route: '/v1/endpoints' });
    expect(requestLines.some((line) => line.route === '/v1/ingest/:ingest_id' && line.statusCode === 200)).toBe(true);
    for (const secret of secrets) {
      expect(secret.length, 'a secret under test').toBeGreaterThan(8);
      expect(output.includes(secret), `the log contains ${secret.slice(0, 8)}…`).toBe(false);
    }
    for (const pattern of [/hk_[A-Za-z0-9]{8,}/, /whsec_[A-Za-z0-9+/=]{8,}/, /pgt_[A-Za-z0-9_-]{8,}/, /v1,[A-Za-z0-9+/=]{20,}/]) {
      expect(output, `log matches ${pattern}`).not.toMatch(pattern);
    }
  });
});
