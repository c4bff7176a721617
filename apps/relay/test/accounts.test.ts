import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, expectProblem, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(async () => relay.close());

describe('signup with an email', () => {
  it('stores the email and shows it on the account', async () => {
    const created = await api(relay.baseUrl, 'POST', '/v1/accounts', { json: { email: 'ada@example.com' } });
    expect(created.status).toBe(201);
    expect(created.body.account.email).toBe('ada@example.com');
    expect(created.body.api_key).toMatch(/^hk_/);
    const me = await api(relay.baseUrl, 'GET', '/v1/account', { key: created.body.api_key });
    expect(me.body.account).toEqual(created.body.account);
    expect(await sqlRows(relay, 'select email from account where id = ?', [created.body.account.id])).toEqual([{ email: 'ada@example.com' }]);
  });

  it('refuses an address that is not one, and creates nothing', async () => {
    const before = await sqlRows(relay, 'select count(*)::int as n from account');
    for (const email of ['not-an-email', '', 42]) {
      const response = await api(relay.baseUrl, 'POST', '/v1/accounts', { json: { email } });
      const problem = expectProblem(response, 400, 'validation_failed');
      expect(problem.errors).toEqual([{ field: 'body.email', message: expect.any(String) }]);
    }
    expect(await sqlRows(relay, 'select count(*)::int as n from account')).toEqual(before);
  });
});

describe('plans', () => {
  it('starts on free with its limits and an empty history', async () => {
    const { key } = await signUp(relay.baseUrl);
    const me = await api(relay.baseUrl, 'GET', '/v1/account', { key });
    expect(me.status).toBe(200);
    expect(me.body.account.plan).toBe('free');
    expect(me.body.limits).toMatchObject({ events_per_month: 10_000, endpoints: 3, retention_days: 7, members: 3 });
    expect(me.body.plan_history).toEqual([]);
  });

  it('changes the plan at once, records each change and shows the history newest first', async () => {
    const { key, accountId } = await signUp(relay.baseUrl);
    const upgraded = await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'pro' } });
    expect(upgraded.status).toBe(200);
    expect(upgraded.body.account).toMatchObject({ id: accountId, plan: 'pro' });
    expect(upgraded.body.limits).toMatchObject({ events_per_month: 2_000_000, endpoints: null, retention_days: 90, ip_allowlist: true, members: 25 });
    expect(upgraded.body.plan_history).toEqual([
      { id: expect.stringMatching(/^plch_[0-9A-Z]{26}$/), from_plan: 'free', to_plan: 'pro', changed_at: expect.stringMatching(/Z$/) },
    ]);

    const top = await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'enterprise' } });
    expect(top.body.limits).toMatchObject({ events_per_month: null, endpoints: null, retention_days: 365, members: null, custom_retention: true });
    const down = await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'free' } });
    expect(down.body.account.plan).toBe('free');

    const me = await api(relay.baseUrl, 'GET', '/v1/account', { key });
    expect(me.body.account.plan).toBe('free');
    expect(me.body.limits).toMatchObject({ events_per_month: 10_000, endpoints: 3, retention_days: 7, members: 3 });
    expect(me.body.plan_history.map((change: any) => [change.from_plan, change.to_plan])).toEqual([['enterprise', 'free'], ['pro', 'enterprise'], ['free', 'pro']]);
    expect(me.body.plan_history).toEqual(down.body.plan_history);
    expect(await sqlRows(relay, 'select plan from account where id = ?', [accountId])).toEqual([{ plan: 'free' }]);
  });

  it('answers 200 and records nothing when the account is already on the plan', async () => {
    const { key } = await signUp(relay.baseUrl);
    await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'pro' } });
    const again = await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'pro' } });
    expect(again.status).toBe(200);
    expect(again.body.account.plan).toBe('pro');
    expect(again.body.plan_history).toHaveLength(1);
  });

  it('refuses an unknown or missing plan with validation_failed and changes nothing', async () => {
    const { key } = await signUp(relay.baseUrl);
    const unknown = expectProblem(await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'business' } }), 400, 'validation_failed');
    expect(unknown.errors).toEqual([{ field: 'body.plan', message: 'must be one of: free, pro, enterprise' }]);
    const missing = expectProblem(await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: {} }), 400, 'validation_failed');
    expect(missing.errors).toEqual([{ field: 'body.plan', message: 'is required' }]);
    const me = await api(relay.baseUrl, 'GET', '/v1/account', { key });
    expect(me.body.account.plan).toBe('free');
    expect(me.body.plan_history).toEqual([]);
  });

  it('needs an API key and changes only the caller\'s account', async () => {
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/account/plan', { json: { plan: 'pro' } }), 401, 'authentication_required');
    const alice = await signUp(relay.baseUrl);
    const bob = await signUp(relay.baseUrl);
    await api(relay.baseUrl, 'POST', '/v1/account/plan', { key: alice.key, json: { plan: 'enterprise' } });
    const bobView = await api(relay.baseUrl, 'GET', '/v1/account', { key: bob.key });
    expect(bobView.body.account.plan).toBe('free');
    expect(bobView.body.plan_history).toEqual([]);
  });
});

describe('signup rate limit', () => {
  let limited: TestRelay;
  beforeAll(async () => {
    limited = await startTestRelay({ signupsPerAddressPerHour: 3 });
  });
  afterAll(async () => limited.close());

  it('answers 429 rate_limited problem+json with Retry-After once one address has signed up N times', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await api(limited.baseUrl, 'POST', '/v1/accounts');
      expect(response.status).toBe(201);
      expect(response.headers.get('ratelimit-remaining')).toBe(String(2 - i));
      expect(response.headers.get('x-ratelimit-remaining')).toBeNull();
    }
    const refused = await api(limited.baseUrl, 'POST', '/v1/accounts');
    const problem = expectProblem(refused, 429, 'rate_limited');
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(problem.detail).toContain('allows 3 requests per client address per hour');
    expect(refused.headers.get('ratelimit-limit')).toBe('3');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(problem.fix).toMatch(/Retry-After/);
    // Nothing was created by the refused request.
    expect(await sqlRows(limited, 'select count(*)::int as n from account')).toEqual([{ n: 3 }]);
  });

  it('limits only signups: authenticated routes of the same address still answer', async () => {
    const refused = await api(limited.baseUrl, 'GET', '/v1/account');
    expectProblem(refused, 401, 'authentication_required');
    expect(refused.headers.get('ratelimit-limit')).toBeNull();
  });
});
