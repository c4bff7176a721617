import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allErrors } from '@hook/core';
import { setDatabaseReachable } from '../../../test/support/database.ts';
import { api, createEndpoint, expectProblem, signUp, startTestRelay, type TestRelay } from '../../../test/support/relay.ts';

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

  it('answers a broken request line with 400 and keeps serving', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${relay.baseUrl}/v1/endpoints`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '100', authorization: `Bearer ${key}` } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      request.end('{"name":"short"}'); // promised 100 bytes, sent 16, then closed our side
      setTimeout(() => request.destroy(), 300);
    }).catch(() => 0);
    expect([0, 400]).toContain(status);
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

  it('answers 503, not 500, while the database is unreachable, and recovers', async () => {
    const other = await startTestRelay();
    try {
      const { key: otherKey } = await signUp(other.baseUrl);
      const endpoint = await createEndpoint(other.baseUrl, otherKey);
      await setDatabaseReachable(other.database.name, false);
      expectProblem(await api(other.baseUrl, 'GET', '/readyz'), 503, 'storage_unavailable');
      expectProblem(await api(other.baseUrl, 'GET', '/readyz'), 503, 'storage_unavailable');
      expectProblem(await api(other.baseUrl, 'POST', new URL(endpoint.url).pathname, { rawBody: 'x' }), 503, 'storage_unavailable');
      expectProblem(await api(other.baseUrl, 'POST', '/v1/accounts'), 503, 'storage_unavailable');
      await setDatabaseReachable(other.database.name, true);
      expect((await fetch(endpoint.url, { method: 'POST', body: 'x' })).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

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
