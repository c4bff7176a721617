import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageMonth } from '@hook/core';
import { api, createEndpoint, expectProblem, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';
import { startRelayProcess, type RelayProcess } from '@hook/test/relay-process';

let relay: TestRelay;
beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(async () => relay.close());

const month = () => usageMonth(new Date());

async function setUsage(accountId: string, eventsAccepted: number): Promise<void> {
  await sqlRows(relay, `insert into account_usage (account_id, month, events_accepted) values (?, ?, ?)
                        on conflict (account_id, month) do update set events_accepted = excluded.events_accepted`, [accountId, month(), eventsAccepted]);
}

const ingest = (url: string, body = '{"type":"x"}') => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('GET /v1/account', () => {
  it("shows the plan's limits and this month's usage, exact after ingest", async () => {
    const { key } = await signUp(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, key);
    await Promise.all(Array.from({ length: 7 }, () => ingest(endpoint.url)));
    const me = await api(relay.baseUrl, 'GET', '/v1/account', { key });
    expect(me.body.limits).toEqual({
      events_per_month: 10_000, endpoints: 3, members: 3, retention_days: 7, api_requests_per_minute: 1_200, transformation_cpu_ms_per_minute: 10_000,
      ip_allowlist: false, custom_domain: false, custom_retention: false, price_usd_per_month: 0, support: 'community',
    });
    const now = new Date();
    expect(me.body.usage).toEqual({
      month: month().slice(0, 7), events_accepted: 7, events_remaining: 9_993,
      resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(), endpoints: 1, members: 1, transformation_cpu_ms: 0,
    });
  });
});

describe('monthly event quota', () => {
  let second: RelayProcess;
  beforeAll(async () => {
    second = await startRelayProcess(relay.database.url);
  });
  afterAll(() => {
    second.child.kill('SIGTERM');
  });

  it('accepts exactly the allowance when two relay processes ingest concurrently at the limit, and an upgrade lifts it at once', async () => {
    const { key, accountId } = await signUp(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const earlier = ((await (await ingest(endpoint.url, '{"type":"before"}')).json()) as { id: string }).id;
    await setUsage(accountId, 9_990);
    const path = new URL(endpoint.url).pathname;
    const responses = await Promise.all(Array.from({ length: 40 }, (_, i) => ingest(`${i % 2 ? relay.baseUrl : second.baseUrl}${path}`)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30);
    const refused = responses.find((response) => response.status === 429)!;
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const problem = (await refused.json()) as { detail: string; fix: string };
    expect(problem).toMatchObject({ code: 'quota_exceeded', status: 429 });
    expect(problem.detail).toContain('10000 events');
    expect(problem.fix).toContain('POST /v1/account/plan');
    await Promise.all(responses.filter((response) => response.status === 200).map((response) => response.arrayBuffer()));

    // Stored events: the one from before plus exactly the 10; the count agrees.
    expect(await sqlRows(relay, 'select count(*)::int as n from event where account_id = ?', [accountId])).toEqual([{ n: 11 }]);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key })).body.usage).toMatchObject({ events_accepted: 10_000, events_remaining: 0 });
    expect((await api(relay.baseUrl, 'GET', `/v1/events/${earlier}`, { key })).status).toBe(200);

    expect((await ingest(endpoint.url)).status).toBe(429);
    await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'pro' } });
    expect((await ingest(endpoint.url)).status).toBe(200);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key })).body.usage).toMatchObject({ events_accepted: 10_001, events_remaining: 1_989_999 });
  });
});

describe('endpoint allowance', () => {
  it('refuses a 4th endpoint on free with plan_limit_reached, even when created concurrently', async () => {
    const { key } = await signUp(relay.baseUrl);
    const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: `e${i}` } })));
    expect(responses.filter((response) => response.status === 201)).toHaveLength(3);
    const problem = expectProblem(responses.find((response) => response.status === 403)!, 403, 'plan_limit_reached');
    expect(problem.detail).toContain('allows 3 endpoints');
    expect(problem.fix).toContain('POST /v1/account/plan');
    expect((await api(relay.baseUrl, 'GET', '/v1/endpoints', { key })).body.data).toHaveLength(3);
  });

  it('frees a place when an endpoint is deleted, and has no limit on pro', async () => {
    const { key } = await signUp(relay.baseUrl);
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await createEndpoint(relay.baseUrl, key, { name: `e${i}` }));
    expect((await api(relay.baseUrl, 'DELETE', `/v1/endpoints/${made[0].id}`, { key })).status).toBe(204);
    await createEndpoint(relay.baseUrl, key, { name: 'again' });
    await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'pro' } });
    for (let i = 0; i < 3; i++) await createEndpoint(relay.baseUrl, key, { name: `pro${i}` });
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key })).body.usage.endpoints).toBe(6);
  });
});

describe('plan changes', () => {
  it('refuses a downgrade the account does not fit, changing and recording nothing, and allows it once it fits', async () => {
    const { key } = await signUp(relay.baseUrl);
    await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'pro' } });
    const made = [];
    for (let i = 0; i < 4; i++) made.push(await createEndpoint(relay.baseUrl, key, { name: `e${i}` }));
    const problem = expectProblem(await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'free' } }), 409, 'plan_change_blocked');
    expect(problem.detail).toBe("Cannot move to the 'free' plan: it has 4 endpoints and free allows 3");
    const me = await api(relay.baseUrl, 'GET', '/v1/account', { key });
    expect(me.body.account.plan).toBe('pro');
    expect(me.body.plan_history).toHaveLength(1);
    await api(relay.baseUrl, 'DELETE', `/v1/endpoints/${made[0].id}`, { key });
    const down = await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'free' } });
    expect(down.status).toBe(200);
    expect(down.body.limits.events_per_month).toBe(10_000);
  });
});
