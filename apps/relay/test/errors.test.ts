import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allErrors } from '@hook/core';
import { setDatabaseReachable } from '@hook/test/database';
import { api, createEndpoint, expectProblem, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
let key: string;
beforeAll(async () => {
  relay = await startTestRelay();
  ({ key } = await signUp(relay.baseUrl));
});
afterAll(async () => relay.close());

describe('problem+json errors', () => {
  it('reports malformed JSON, wrong content types and prototype pollution clearly', async () => {
    const malformed = expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, rawBody: '{"name": "x",', headers: { 'content-type': 'application/json' } }), 400, 'malformed_json');
    expect(malformed.detail).toMatch(/not valid JSON/);
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type');
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, rawBody: '{"name":"x","__proto__":{"admin":true}}', headers: { 'content-type': 'application/json' } }), 400, 'malformed_json');
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, rawBody: 'x', headers: { 'content-type': 'not a type' } }), 415, 'unsupported_media_type');
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, rawBody: '{"name":"x"}', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
  });

  it('never coerces wrong JSON types in bodies', async () => {
    for (const name of [42, true, null, ['a'], { a: 1 }]) {
      const problem = expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name } }), 400, 'validation_failed');
      expect(problem.errors[0]).toEqual({ field: 'body.name', message: 'must be string' });
    }
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: ['name'] }), 400, 'validation_failed');
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: 'orders' }), 400, 'validation_failed');
  });

  it('names unknown routes and refuses oversized API bodies', async () => {
    const problem = expectProblem(await api(relay.baseUrl, 'GET', '/v2/endpoints'), 404, 'route_not_found');
    expect(problem.detail).toBe('No route GET /v2/endpoints');
    expectProblem(await api(relay.baseUrl, 'PUT', '/v1/endpoints', { key, json: { name: 'x' } }), 404, 'route_not_found');
    const huge = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) });
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, rawBody: huge, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');
  });

  it('answers a broken request line, and a body cut short, with a 400 problem and keeps serving', async () => {
    const notHttp = parseRawAnswer(await rawExchange('GARBAGE\r\n\r\n'));
    const cutShort = parseRawAnswer(await rawExchange(
      `POST /v1/endpoints HTTP/1.1\r\nhost: relay\r\ncontent-type: application/json\r\ncontent-length: 100\r\nauthorization: Bearer ${key}\r\n\r\n{"name":"short"}`,
    )); // promised 100 bytes, sent 16, then closed our side
    for (const answer of [notHttp, cutShort]) {
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toBe('application/problem+json');
      expect(answer.body).toMatchObject({ code: 'bad_request', status: 400, request_id: answer.headers['x-request-id'] });
    }
    expect(notHttp.body.detail).toMatch(/Invalid method/);
    expect((await api(relay.baseUrl, 'GET', '/healthz')).status).toBe(200);
  });

  it('gives no 500 for a spread of hostile inputs', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const cases: [string, string, Record<string, unknown>][] = [
      ['GET', '/v1/events?limit=-1', {}],
      ['GET', '/v1/events?limit=1e9', {}],
      ['GET', '/v1/events?cursor=' + 'A'.repeat(199), {}],
      ['GET', '/v1/events?cursor=' + Buffer.from('v1:evt_../../etc').toString('base64url'), {}],
      ['GET', '/v1/events?type=' + 'x'.repeat(201), {}],
      ['GET', '/v1/events?unknown=1', {}],
      ['GET', '/v1/events/evt_%00', {}],
      ['PATCH', `/v1/endpoints/${endpoint.id}`, { json: { status: null } }],
      ['PATCH', `/v1/endpoints/${endpoint.id}`, { json: { destination: { type: 'url', url: 'http://' + 'a'.repeat(3000) } } }],
      ['PATCH', `/v1/endpoints/${endpoint.id}`, { rawBody: '\u0000\u0001', headers: { 'content-type': 'application/json' } }],
      ['POST', '/v1/api-keys', { json: { name: 'n'.repeat(201) } }],
      ['DELETE', '/v1/api-keys/key_x', {}],
    ];
    for (const [method, path, options] of cases) {
      const response = await api(relay.baseUrl, method, path, { key, ...options });
      expect(response.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(response.status, `${method} ${path}`).toBeLessThan(500);
      expect(response.body.code, `${method} ${path}`).toMatch(/^[a-z_]+$/);
      expect(response.body.fix, `${method} ${path}`).toBeTruthy();
    }
  });
});

describe('while the database is unreachable', () => {
  // A relay and database of its own (cut off below), started and closed in hooks (60 s) like the
  // file's other relay, not in the test's 30 s: a loaded machine took 8 s to start one here, and CI
  // once ran past 30 s with the start and close inside the test.
  let other: TestRelay;
  beforeAll(async () => {
    other = await startTestRelay();
  });
  afterAll(async () => other.close());

  it('answers 503, not 500, and recovers', async () => {
    const { key: otherKey } = await signUp(other.baseUrl);
    const endpoint = await createEndpoint(other.baseUrl, otherKey);
    await setDatabaseReachable(other.database.name, false);
    expectProblem(await api(other.baseUrl, 'GET', '/readyz'), 503, 'storage_unavailable');
    expectProblem(await api(other.baseUrl, 'GET', '/readyz'), 503, 'storage_unavailable');
    expectProblem(await api(other.baseUrl, 'POST', new URL(endpoint.url).pathname, { rawBody: 'x' }), 503, 'storage_unavailable');
    expectProblem(await api(other.baseUrl, 'POST', '/v1/accounts'), 503, 'storage_unavailable');
    await setDatabaseReachable(other.database.name, true);
    expect((await fetch(endpoint.url, { method: 'POST', body: 'x' })).status).toBe(200);
  });
});

/** Writes `text` on a fresh connection to the relay, ends our side, and returns everything the relay sends before it closes. */
function rawExchange(text: string): Promise<string> {
  const { hostname, port } = new URL(relay.baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.end(text));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

function parseRawAnswer(raw: string): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  const [head = '', body = ''] = raw.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]);
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status, headers, body: JSON.parse(body) as Record<string, unknown> };
}

describe('docs/errors.md', () => {
  it('lists every registered error code and no other', () => {
    const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
    const documented = [...doc.matchAll(/^\|\s*`([a-z][a-z0-9_]*)`\s*\|/gm)].map((match) => match[1]);
    const registered = allErrors().map((error) => error.code);
    expect([...documented].sort()).toEqual([...registered].sort());
    expect(new Set(documented).size).toBe(documented.length);
    for (const error of allErrors()) {
      expect(doc, error.code).toMatch(new RegExp(`\\|\\s*\`${error.code}\`\\s*\\|\\s*${error.status}\\s*\\|`));
    }
  });
});
