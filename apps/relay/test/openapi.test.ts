import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
let document: any;
beforeAll(async () => {
  relay = await startTestRelay();
  const response = await api(relay.baseUrl, 'GET', '/openapi.json');
  expect(response.status).toBe(200);
  document = response.body;
});
afterAll(async () => relay.close());

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document under an independent validator', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document));
    if (!result.valid) throw new Error(compileErrors(result));
    expect(result.valid).toBe(true);
  });

  it('describes every route with its operations', () => {
    const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.keys(item).filter((key) => ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'].includes(key)).map((method) => `${method.toUpperCase()} ${path}`),
    );
    for (const expected of [
      'POST /v1/accounts', 'GET /v1/account',
      'POST /v1/api-keys', 'GET /v1/api-keys', 'DELETE /v1/api-keys/{id}',
      'POST /v1/endpoints', 'GET /v1/endpoints', 'GET /v1/endpoints/{id}', 'PATCH /v1/endpoints/{id}', 'DELETE /v1/endpoints/{id}',
      'GET /v1/endpoints/{id}/secret', 'POST /v1/endpoints/{id}/rotate-secret',
      'POST /v1/ingest/{ingest_id}', 'PUT /v1/ingest/{ingest_id}', 'GET /v1/ingest/{ingest_id}',
      'GET /v1/events', 'GET /v1/events/{id}',
      'GET /healthz', 'GET /readyz', 'GET /metrics',
    ]) {
      expect(operations).toContain(expected);
    }
  });

  it('carries the request schemas that validate requests, and problem+json errors', () => {
    const create = document.paths['/v1/endpoints'].post;
    const body = create.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['name']);
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.name).toMatchObject({ type: 'string', minLength: 1 });
    expect(create.security).toEqual([{ bearerAuth: [] }]);
    const problem = create.responses['4XX'].content['application/problem+json'].schema;
    expect(problem.required).toEqual(expect.arrayContaining(['type', 'title', 'status', 'detail', 'code', 'fix', 'request_id']));
    expect(problem.properties.errors.items.properties).toHaveProperty('field');
    expect(create.responses['201'].content['application/json'].schema.properties).toHaveProperty('url');
    const list = document.paths['/v1/events'].get;
    expect(list.parameters.map((parameter: { name: string }) => parameter.name).sort()).toEqual(['cursor', 'endpoint_id', 'limit', 'q', 'since', 'status', 'type', 'until']);
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
