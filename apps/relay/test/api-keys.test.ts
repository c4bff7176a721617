import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, expectProblem, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(async () => relay.close());

describe('accounts', () => {
  it('self-provisions an account whose key works at once', async () => {
    const response = await api(relay.baseUrl, 'POST', '/v1/accounts');
    expect(response.status).toBe(201);
    expect(response.body.account).toEqual({ id: expect.stringMatching(/^acct_[0-9A-Z]{26}$/), plan: 'free', email: null, allowed_ips: [], custom_domain: null, custom_domain_status: null, custom_domain_verification: null, retention_days: null, created_at: expect.stringMatching(/Z$/) });
    expect(response.body.api_key).toMatch(/^hk_[A-Za-z0-9_-]{43}$/);
    const me = await api(relay.baseUrl, 'GET', '/v1/account', { key: response.body.api_key });
    expect(me.status).toBe(200);
    expect(me.body.account.id).toBe(response.body.account.id);
  });

  it('accepts an empty JSON body and refuses unknown fields', async () => {
    expect((await api(relay.baseUrl, 'POST', '/v1/accounts', { json: {} })).status).toBe(201);
    const response = await api(relay.baseUrl, 'POST', '/v1/accounts', { json: { plan: 'enterprise' } });
    expect(expectProblem(response, 400, 'validation_failed').errors).toEqual([{ field: 'body.plan', message: expect.stringMatching(/not a known field/) }]);
  });

  it('stores keys only as hashes', async () => {
    const { key } = await signUp(relay.baseUrl);
    const rows = await sqlRows(relay, 'select key_hash, prefix from api_key');
    expect(JSON.stringify(rows)).not.toContain(key);
    expect(rows.some((row: { prefix: string }) => key.startsWith(row.prefix))).toBe(true);
  });
});

describe('api keys', () => {
  it('shows a new key once, lists prefixes only, and revokes at once', async () => {
    const { key } = await signUp(relay.baseUrl);
    const created = await api(relay.baseUrl, 'POST', '/v1/api-keys', { key, json: { name: 'ci' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^key_/), name: 'ci', api_key: expect.stringMatching(/^hk_/), prefix: created.body.api_key.slice(0, 11) });

    const listed = await api(relay.baseUrl, 'GET', '/v1/api-keys', { key });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(2);
    expect(listed.body.data[0]).toEqual({ id: created.body.id, name: 'ci', prefix: created.body.prefix, member_id: created.body.member_id, created_at: created.body.created_at });
    expect(created.body.member_id).toMatch(/^mem_/);
    expect(listed.body.data[1].member_id).toBe(created.body.member_id);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.api_key);
    expect(listed.body.next_cursor).toBeNull();

    const newKey = created.body.api_key;
    expect((await api(relay.baseUrl, 'GET', '/v1/endpoints', { key: newKey })).status).toBe(200);
    const revoked = await api(relay.baseUrl, 'DELETE', `/v1/api-keys/${created.body.id}`, { key });
    expect(revoked.status).toBe(204);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/endpoints', { key: newKey }), 401, 'invalid_api_key');
    expect((await api(relay.baseUrl, 'GET', '/v1/endpoints', { key })).status).toBe(200);
  });

  it('refuses to revoke the last key, and another account\'s key is not found', async () => {
    const alice = await signUp(relay.baseUrl);
    const bob = await signUp(relay.baseUrl);
    const aliceKeys = await api(relay.baseUrl, 'GET', '/v1/api-keys', { key: alice.key });
    const onlyKeyId = aliceKeys.body.data[0].id;
    expectProblem(await api(relay.baseUrl, 'DELETE', `/v1/api-keys/${onlyKeyId}`, { key: bob.key }), 404, 'api_key_not_found');
    expectProblem(await api(relay.baseUrl, 'DELETE', `/v1/api-keys/${onlyKeyId}`, { key: alice.key }), 409, 'last_api_key');
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key: alice.key })).status).toBe(200);
  });

  it('lets only one of two concurrent revocations of the last two keys through', async () => {
    const { key } = await signUp(relay.baseUrl);
    const second = await api(relay.baseUrl, 'POST', '/v1/api-keys', { key, json: {} });
    const keys = (await api(relay.baseUrl, 'GET', '/v1/api-keys', { key })).body.data.map((k: { id: string }) => k.id);
    expect(keys).toContain(second.body.id);
    const results = await Promise.all(keys.map((id: string) => api(relay.baseUrl, 'DELETE', `/v1/api-keys/${id}`, { key })));
    // The loser is refused with last_api_key, or with invalid_api_key when the winner revoked
    // the very key it was sent with before it was read.
    const statuses = results.map((result) => result.status).sort();
    expect(statuses[0]).toBe(204);
    expect([401, 409]).toContain(statuses[1]);
    const remaining = await sqlRows(relay, 'select count(*)::int as n from api_key where id in (?, ?)', keys);
    expect(remaining[0].n).toBe(1);
  });

  it('rejects missing, malformed and unknown keys with 401', async () => {
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/endpoints'), 401, 'authentication_required');
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/endpoints', { headers: { authorization: 'Basic Zm9vOmJhcg==' } }), 401, 'invalid_api_key');
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/endpoints', { key: 'hk_short' }), 401, 'invalid_api_key');
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/endpoints', { key: `hk_${'A'.repeat(43)}` }), 401, 'invalid_api_key');
  });
});
