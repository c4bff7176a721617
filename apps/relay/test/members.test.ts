import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, expectProblem, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(async () => relay.close());

/** Adds a member with the admin's key; returns the member and its first key. */
async function addMember(adminKey: string, email: string, role?: 'admin' | 'member'): Promise<{ member: any; key: string }> {
  const response = await api(relay.baseUrl, 'POST', '/v1/members', { key: adminKey, json: role ? { email, role } : { email } });
  if (response.status !== 201) throw new Error(`adding ${email} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { member: response.body.member, key: response.body.api_key };
}

async function memberIdOf(key: string): Promise<string> {
  const keys = await api(relay.baseUrl, 'GET', '/v1/api-keys', { key });
  return keys.body.data.find((item: { prefix: string }) => key.startsWith(item.prefix)).member_id;
}

describe('members', () => {
  it('adds a member with its own key (shown once), which works at once; lists and gets members', async () => {
    const admin = await signUp(relay.baseUrl);
    const response = await api(relay.baseUrl, 'POST', '/v1/members', { key: admin.key, json: { email: 'Dev@Example.com' } });
    expect(response.status).toBe(201);
    expect(response.body.member).toEqual({ id: expect.stringMatching(/^mem_[0-9A-Z]{26}$/), email: 'Dev@Example.com', role: 'member', created_at: expect.stringMatching(/Z$/) });
    expect(response.body.api_key).toMatch(/^hk_/);
    const memberKey = response.body.api_key;

    expect((await api(relay.baseUrl, 'POST', '/v1/endpoints', { key: memberKey, json: { name: 'by-member' } })).status).toBe(201);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key: memberKey })).body.account.id).toBe(admin.accountId);

    const listed = await api(relay.baseUrl, 'GET', '/v1/members', { key: memberKey });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((m: any) => [m.email, m.role])).toEqual([['Dev@Example.com', 'member'], [null, 'admin']]);
    expect(listed.body.next_cursor).toBeNull();
    const page = await api(relay.baseUrl, 'GET', '/v1/members?limit=1', { key: admin.key });
    expect(page.body.data).toHaveLength(1);
    expect((await api(relay.baseUrl, 'GET', `/v1/members?cursor=${page.body.next_cursor}`, { key: admin.key })).body.data[0].role).toBe('admin');
    expect((await api(relay.baseUrl, 'GET', `/v1/members/${response.body.member.id}`, { key: admin.key })).body).toEqual(response.body.member);

    // Keys list the member they belong to.
    const keys = (await api(relay.baseUrl, 'GET', '/v1/api-keys', { key: admin.key })).body.data;
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatchObject({ member_id: response.body.member.id, name: 'default', prefix: memberKey.slice(0, 11) });
    expect(keys[1].member_id).toBe(listed.body.data[1].id);
    expect(JSON.stringify(keys)).not.toContain(memberKey);
  });

  it('refuses admin-only actions with a member key (admin_required), allows them with an admin key', async () => {
    const admin = await signUp(relay.baseUrl);
    const { member, key: memberKey } = await addMember(admin.key, 'member@example.com');
    const adminId = await memberIdOf(admin.key);
    const refusals = [
      await api(relay.baseUrl, 'POST', '/v1/members', { key: memberKey, json: { email: 'x@example.com' } }),
      await api(relay.baseUrl, 'PATCH', `/v1/members/${member.id}`, { key: memberKey, json: { role: 'admin' } }),
      await api(relay.baseUrl, 'DELETE', `/v1/members/${adminId}`, { key: memberKey }),
      await api(relay.baseUrl, 'POST', '/v1/account/plan', { key: memberKey, json: { plan: 'pro' } }),
    ];
    for (const refused of refusals) expect(expectProblem(refused, 403, 'admin_required').detail).toMatch(/^Only an admin member can /);
    expect(expectProblem(refusals[3]!, 403, 'admin_required').detail).toContain('change the plan');
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key: admin.key })).body.account.plan).toBe('free');
    expect(await sqlRows(relay, 'select count(*)::int as n from member where account_id = ?', [admin.accountId])).toEqual([{ n: 2 }]);

    const promoted = await api(relay.baseUrl, 'PATCH', `/v1/members/${member.id}`, { key: admin.key, json: { role: 'admin' } });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toEqual({ ...member, role: 'admin' });
    // The role applies to the member's existing key at once.
    expect((await api(relay.baseUrl, 'POST', '/v1/account/plan', { key: memberKey, json: { plan: 'pro' } })).status).toBe(200);
  });

  it('lets a member revoke only its own keys', async () => {
    const admin = await signUp(relay.baseUrl);
    const { key: memberKey } = await addMember(admin.key, 'own@example.com');
    const adminKeyId = (await api(relay.baseUrl, 'GET', '/v1/api-keys', { key: admin.key })).body.data.find((k: any) => admin.key.startsWith(k.prefix)).id;
    expectProblem(await api(relay.baseUrl, 'DELETE', `/v1/api-keys/${adminKeyId}`, { key: memberKey }), 403, 'admin_required');

    const second = await api(relay.baseUrl, 'POST', '/v1/api-keys', { key: memberKey, json: { name: 'laptop' } });
    expect(second.status).toBe(201);
    expect(second.body.member_id).toBe(await memberIdOf(memberKey));
    expect((await api(relay.baseUrl, 'DELETE', `/v1/api-keys/${second.body.id}`, { key: memberKey })).status).toBe(204);
    // A member may revoke its last key too: the account keeps its admin's key.
    const ownKeyId = (await api(relay.baseUrl, 'GET', '/v1/api-keys', { key: memberKey })).body.data.find((k: any) => memberKey.startsWith(k.prefix)).id;
    expect((await api(relay.baseUrl, 'DELETE', `/v1/api-keys/${ownKeyId}`, { key: memberKey })).status).toBe(204);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { key: memberKey }), 401, 'invalid_api_key');
  });

  it('keeps a key of an admin: revoking the last one is last_api_key even while members have keys', async () => {
    const admin = await signUp(relay.baseUrl);
    const { key: memberKey } = await addMember(admin.key, 'keeper@example.com');
    const keys = (await api(relay.baseUrl, 'GET', '/v1/api-keys', { key: admin.key })).body.data;
    const adminKeyId = keys.find((k: any) => admin.key.startsWith(k.prefix)).id;
    const memberKeyId = keys.find((k: any) => memberKey.startsWith(k.prefix)).id;
    expectProblem(await api(relay.baseUrl, 'DELETE', `/v1/api-keys/${adminKeyId}`, { key: admin.key }), 409, 'last_api_key');
    // An admin may revoke a member's key.
    expect((await api(relay.baseUrl, 'DELETE', `/v1/api-keys/${memberKeyId}`, { key: admin.key })).status).toBe(204);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { key: memberKey }), 401, 'invalid_api_key');
  });

  it('refuses a duplicate email, case-insensitively (member_exists)', async () => {
    const admin = await signUp(relay.baseUrl);
    await addMember(admin.key, 'twice@example.com');
    const again = await api(relay.baseUrl, 'POST', '/v1/members', { key: admin.key, json: { email: 'TWICE@example.com', role: 'admin' } });
    expect(expectProblem(again, 409, 'member_exists').detail).toContain('TWICE@example.com');
    // Another account may have a member with the same address.
    const other = await signUp(relay.baseUrl);
    expect((await api(relay.baseUrl, 'POST', '/v1/members', { key: other.key, json: { email: 'twice@example.com' } })).status).toBe(201);
  });

  it('validates the body', async () => {
    const admin = await signUp(relay.baseUrl);
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/members', { key: admin.key, json: {} }), 400, 'validation_failed');
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/members', { key: admin.key, json: { email: 'not-an-address' } }), 400, 'validation_failed');
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/members', { key: admin.key, json: { email: 'a@example.com', role: 'owner' } }), 400, 'validation_failed');
  });

  it('enforces the plan\'s member allowance, first admin included (plan_limit_reached), and an upgrade lifts it', async () => {
    const admin = await signUp(relay.baseUrl);
    await addMember(admin.key, 'two@example.com');
    await addMember(admin.key, 'three@example.com');
    const refused = await api(relay.baseUrl, 'POST', '/v1/members', { key: admin.key, json: { email: 'four@example.com' } });
    const problem = expectProblem(refused, 403, 'plan_limit_reached');
    expect(problem.detail).toBe('The free plan allows 3 members (the first admin included) and this account has 3; remove a member or upgrade to add more');
    expect(problem.fix).toMatch(/upgrade|plan/i);
    expect((await api(relay.baseUrl, 'POST', '/v1/account/plan', { key: admin.key, json: { plan: 'pro' } })).status).toBe(200);
    expect((await api(relay.baseUrl, 'POST', '/v1/members', { key: admin.key, json: { email: 'four@example.com' } })).status).toBe(201);
  });

  it('lets concurrent adds at the limit through only up to the allowance', async () => {
    const admin = await signUp(relay.baseUrl);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => api(relay.baseUrl, 'POST', '/v1/members', { key: admin.key, json: { email: `racer${i}@example.com` } })),
    );
    const statuses = results.map((result) => result.status).sort();
    expect(statuses).toEqual([201, 201, 403, 403, 403, 403]);
    for (const result of results.filter((r) => r.status === 403)) expectProblem(result, 403, 'plan_limit_reached');
    expect(await sqlRows(relay, 'select count(*)::int as n from member where account_id = ?', [admin.accountId])).toEqual([{ n: 3 }]);
    expect(await sqlRows(relay, 'select count(*)::int as n from api_key where account_id = ?', [admin.accountId])).toEqual([{ n: 3 }]);
  });

  it('removes a member and revokes its keys at once; unknown and other accounts\' members are not found', async () => {
    const admin = await signUp(relay.baseUrl);
    const { member, key: memberKey } = await addMember(admin.key, 'leaving@example.com');
    expect((await api(relay.baseUrl, 'POST', '/v1/api-keys', { key: memberKey, json: {} })).status).toBe(201);
    const removed = await api(relay.baseUrl, 'DELETE', `/v1/members/${member.id}`, { key: admin.key });
    expect(removed.status).toBe(204);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { key: memberKey }), 401, 'invalid_api_key');
    expect(await sqlRows(relay, 'select count(*)::int as n from api_key where member_id = ?', [member.id])).toEqual([{ n: 0 }]);
    expectProblem(await api(relay.baseUrl, 'GET', `/v1/members/${member.id}`, { key: admin.key }), 404, 'member_not_found');
    expectProblem(await api(relay.baseUrl, 'DELETE', `/v1/members/${member.id}`, { key: admin.key }), 404, 'member_not_found');

    const other = await signUp(relay.baseUrl);
    const adminId = await memberIdOf(admin.key);
    expectProblem(await api(relay.baseUrl, 'GET', `/v1/members/${adminId}`, { key: other.key }), 404, 'member_not_found');
    expectProblem(await api(relay.baseUrl, 'PATCH', `/v1/members/${adminId}`, { key: other.key, json: { role: 'member' } }), 404, 'member_not_found');
    expectProblem(await api(relay.baseUrl, 'DELETE', `/v1/members/${adminId}`, { key: other.key }), 404, 'member_not_found');
  });

  it('never removes or demotes the last admin (last_admin)', async () => {
    const admin = await signUp(relay.baseUrl);
    const adminId = await memberIdOf(admin.key);
    expectProblem(await api(relay.baseUrl, 'DELETE', `/v1/members/${adminId}`, { key: admin.key }), 409, 'last_admin');
    expectProblem(await api(relay.baseUrl, 'PATCH', `/v1/members/${adminId}`, { key: admin.key, json: { role: 'member' } }), 409, 'last_admin');
    // Setting the role it already has is fine.
    expect((await api(relay.baseUrl, 'PATCH', `/v1/members/${adminId}`, { key: admin.key, json: { role: 'admin' } })).status).toBe(200);

    const { member: second, key: secondKey } = await addMember(admin.key, 'second@example.com', 'admin');
    expect(second.role).toBe('admin');
    // With another admin the first may step down; then the second is the last.
    expect((await api(relay.baseUrl, 'PATCH', `/v1/members/${adminId}`, { key: admin.key, json: { role: 'member' } })).body.role).toBe('member');
    expectProblem(await api(relay.baseUrl, 'DELETE', `/v1/members/${second.id}`, { key: secondKey }), 409, 'last_admin');
    expect((await api(relay.baseUrl, 'DELETE', `/v1/members/${adminId}`, { key: secondKey })).status).toBe(204);
  });

  it('lets only one of two admins demoting each other at once through', async () => {
    const admin = await signUp(relay.baseUrl);
    const adminId = await memberIdOf(admin.key);
    const { member: second, key: secondKey } = await addMember(admin.key, 'peer@example.com', 'admin');
    const results = await Promise.all([
      api(relay.baseUrl, 'PATCH', `/v1/members/${second.id}`, { key: admin.key, json: { role: 'member' } }),
      api(relay.baseUrl, 'DELETE', `/v1/members/${adminId}`, { key: secondKey }),
    ]);
    const statuses = results.map((result) => result.status);
    // Either one may win; the loser is refused, by last_admin or (once demoted) by admin_required.
    expect(statuses.filter((status) => status < 300)).toHaveLength(1);
    expect(await sqlRows(relay, "select count(*)::int as n from member where account_id = ? and role = 'admin'", [admin.accountId])).toEqual([{ n: 1 }]);
  });
});
