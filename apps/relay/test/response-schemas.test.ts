/**
 * The test relay checks every JSON answer against its route's response schema
 * (test/support/response-check.ts): these routes drift on purpose, and the check must
 * catch each way, where Fastify's serializer alone would drop an extra field silently.
 */
import { ApiKeySchema } from '@hook/core/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';

const KEY = { id: 'key_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', name: null, prefix: 'hk_abcdefgh', member_id: 'mem_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', created_at: '2026-01-02T03:04:05.000Z' };

let relay: TestRelay;
beforeAll(async () => {
  relay = await startTestRelay({}, {
    routes(app) {
      const schema = { response: { 200: ApiKeySchema } };
      app.get('/test/as-declared', { schema }, async () => KEY);
      app.get('/test/extra-field', { schema }, async () => ({ ...KEY, secret: 'hk_leaked' }));
      app.get('/test/missing-field', { schema }, async () => {
        const { member_id: _left, ...rest } = KEY;
        return rest;
      });
      app.get('/test/bad-format', { schema }, async () => ({ ...KEY, created_at: 'yesterday' }));
    },
  });
});
afterAll(async () => {
  // The drifts were made on purpose; close() would fail on them.
  relay.responses.drifts.length = 0;
  await relay.close();
});

describe('the test relay\'s response check', () => {
  it('lets an answer that matches its schema through unchanged', async () => {
    const response = await api(relay.baseUrl, 'GET', '/test/as-declared');
    expect(response.status).toBe(200);
    expect(response.body).toEqual(KEY);
  });

  it('fails an answer with a field its schema does not name (the serializer alone drops it)', async () => {
    const response = await api(relay.baseUrl, 'GET', '/test/extra-field');
    expect(response.status).toBe(500);
    expect(relay.responses.drifts.at(-1)).toMatchObject({ route: 'GET /test/extra-field', status: 200 });
    expect(relay.responses.drifts.at(-1)!.errors.join()).toContain('secret');
  });

  it('fails an answer missing a required field, and one with a field in the wrong format', async () => {
    expect((await api(relay.baseUrl, 'GET', '/test/missing-field')).status).toBe(500);
    expect(relay.responses.drifts.at(-1)).toMatchObject({ route: 'GET /test/missing-field' });
    expect(relay.responses.drifts.at(-1)!.errors.join()).toContain('member_id');
    expect((await api(relay.baseUrl, 'GET', '/test/bad-format')).status).toBe(500);
    expect(relay.responses.drifts.at(-1)!.errors.join()).toContain('/created_at');
  });

  it('checks the relay\'s own routes, error answers included', async () => {
    const before = relay.responses.drifts.length;
    const { key } = await signUp(relay.baseUrl);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key })).status).toBe(200);
    expect((await api(relay.baseUrl, 'GET', '/v1/endpoints/ep_00000000000000000000000000', { key })).status).toBe(404);
    expect(relay.responses.checked).toContain('POST /v1/accounts 201');
    expect(relay.responses.checked).toContain('GET /v1/account 200');
    expect(relay.responses.checked).toContain('GET /v1/endpoints/:id 404');
    expect(relay.responses.drifts.length).toBe(before);
  });
});
