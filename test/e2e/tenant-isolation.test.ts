/**
 * Tenant isolation (issue 8, item 3): accounts A and B, each with endpoints, delivered and
 * failed events, members, keys and a notifications URL. With B's key every route of
 * /openapi.json that takes an id is tried on A's ids, the lists and filters are searched
 * for A's ids, the live stream (tail and listen), the MCP tools and the playground are
 * tried across the line, and afterwards A's rows in PostgreSQL must be exactly as before.
 * ROUTE_CHECKS says how each operation is checked or why it needs no check; a route added
 * to /openapi.json without an entry fails the test.
 */
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { RECENT_ALERTS_SHOWN } from '@hook/db';
import { api, createEndpoint, sendEvent, signUp, sqlRows, startTestRelay, type ApiResponse, type TestRelay } from '../support/relay.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';

interface Tenant {
  key: string;
  accountId: string;
  deliveredEndpoint: { id: string; url: string; destinations: { id: string }[] };
  failingEndpoint: { id: string; url: string; destinations: { id: string }[] };
  cliEndpoint: { id: string; url: string; destinations: { id: string }[] };
  deliveredEventId: string;
  failedEventId: string;
  pendingEventId: string;
  memberId: string;
  spareKeyId: string;
  eventType: string;
  /** The issue its failing endpoint opened (connection refused), read once the events settled. */
  issueId: string;
  /** The hint of its Slack alert URL, as its own GET /v1/account/alerts shows it. */
  slackUrlHint: string;
}

let relay: TestRelay;
let receiver: Receiver;
let a: Tenant;
let b: Tenant;

function ingestUrl(url: string): string {
  return url.replace(/^https?:\/\/[^/]+/, relay.baseUrl);
}

function ingestIdOf(endpoint: { url: string }): string {
  return endpoint.url.split('/').pop()!;
}

/** Every id and ingest id of A: none of them may appear in anything B reads. */
function secretsOfA(): string[] {
  return [a.accountId, a.deliveredEndpoint.id, a.failingEndpoint.id, a.cliEndpoint.id, a.deliveredEventId, a.failedEventId, a.pendingEventId, a.memberId, a.spareKeyId, a.eventType, a.issueId, a.slackUrlHint,
    ingestIdOf(a.deliveredEndpoint), ingestIdOf(a.failingEndpoint), ingestIdOf(a.cliEndpoint)];
}

function expectNothingOfA(what: string, value: unknown): void {
  const text = JSON.stringify(value);
  for (const secret of secretsOfA()) expect(text.includes(secret), `${what} shows A's ${secret}: ${text.slice(0, 300)}`).toBe(false);
}

/** Waits until `check` holds (vi.waitFor: some of these run in beforeAll, where expect.poll is not allowed). */
async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  await vi.waitFor(async () => {
    if (!(await check())) throw new Error('not yet');
  }, { timeout: timeoutMs, interval: 50 });
}

async function makeTenant(name: string): Promise<Omit<Tenant, 'issueId' | 'slackUrlHint'>> {
  const { key, accountId } = await signUp(relay.baseUrl, { plan: 'pro' });
  const deliveredEndpoint = await createEndpoint(relay.baseUrl, key, { name: `${name} delivered`, destination: { type: 'url', url: receiver.url } });
  const failingEndpoint = await createEndpoint(relay.baseUrl, key, { name: `${name} failing`, destination: { type: 'url', url: 'http://127.0.0.1:1/refused' } });
  const cliEndpoint = await createEndpoint(relay.baseUrl, key, { name: `${name} cli`, destination: { type: 'cli' } });
  // A Slack alert channel (the receiver plays Slack), set before any event so the failing
  // endpoint's issue.opened is always alerted there (set later, the drain may have passed).
  const alerts = await api(relay.baseUrl, 'PUT', '/v1/account/alerts', { key, json: { slack_webhook_url: `${receiver.url}/slack/${name.repeat(4)}` } });
  expect(alerts.status, JSON.stringify(alerts.body)).toBe(200);
  const eventType = `${name}.only_${accountId.slice(-6)}`;
  const headers = { 'content-type': 'application/json', 'x-event-type': eventType };
  const deliveredEventId = await sendEvent(ingestUrl(deliveredEndpoint.url), `{"tenant":"${name}"}`, headers);
  const failedEventId = await sendEvent(ingestUrl(failingEndpoint.url), `{"tenant":"${name}"}`, headers);
  const pendingEventId = await sendEvent(ingestUrl(cliEndpoint.url), `{"tenant":"${name}"}`, headers);
  const member = await api(relay.baseUrl, 'POST', '/v1/members', { key, json: { email: `${name}@example.com`, role: 'member' } });
  expect(member.status, JSON.stringify(member.body)).toBe(201);
  const spareKey = await api(relay.baseUrl, 'POST', '/v1/api-keys', { key, json: { name: `${name} spare` } });
  expect(spareKey.status, JSON.stringify(spareKey.body)).toBe(201);
  const notifications = await api(relay.baseUrl, 'PUT', '/v1/account/notifications', { key, json: { url: `${receiver.url}/notifications/${name}` } });
  expect(notifications.status, JSON.stringify(notifications.body)).toBe(200);
  return {
    key, accountId, deliveredEndpoint, failingEndpoint, cliEndpoint, deliveredEventId, failedEventId, pendingEventId, eventType,
    memberId: member.body.id ?? member.body.member?.id,
    spareKeyId: spareKey.body.id ?? spareKey.body.api_key?.id,
  };
}

/** A's rows in every table that has an account_id column, and A's account row. */
async function snapshotOfA(): Promise<Record<string, unknown[]>> {
  const tables = await sqlRows(relay, "select table_name from information_schema.columns where table_schema = 'public' and column_name = 'account_id' order by table_name");
  const snapshot: Record<string, unknown[]> = {};
  for (const { table_name: table } of tables) {
    snapshot[table] = await sqlRows(relay, `select * from "${table}" where account_id = ? order by 1`, [a.accountId]);
  }
  snapshot.account = await sqlRows(relay, 'select * from account where id = ?', [a.accountId]);
  return JSON.parse(JSON.stringify(snapshot, (_key, value) => (value?.type === 'Buffer' ? Buffer.from(value.data).toString('base64') : value)));
}

type Check = (context: { path: string }) => Promise<void>;
type RouteCheck = { check: Check } | { none: string };

/** B's request must be refused as not found (or forbidden) and show nothing of A. */
async function refused(method: string, path: string, json?: unknown, statuses: number[] = [404]): Promise<ApiResponse> {
  const response = await api(relay.baseUrl, method, path, { key: b.key, json });
  expect(statuses, `${method} ${path} with B's key answered ${response.status} ${JSON.stringify(response.body)}`).toContain(response.status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expectNothingOfA(`${method} ${path}`, { ...response.body, detail: undefined, errors: undefined });
  return response;
}

/** B's request succeeds and shows nothing of A. */
async function onlyOwn(method: string, path: string, json?: unknown): Promise<ApiResponse> {
  const response = await api(relay.baseUrl, method, path, { key: b.key, json });
  expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
  expectNothingOfA(`${method} ${path}`, response.body);
  return response;
}

/**
 * Every operation of /openapi.json: how B's key is tried against A, or why nothing can
 * cross (the route acts only on the caller's own account, or takes no account at all).
 */
const ROUTE_CHECKS: Record<string, RouteCheck> = {
  'GET /healthz': { none: 'no account data: process status only' },
  'GET /readyz': { none: 'no account data: database reachability only' },
  'GET /metrics': {
    check: async () => {
      const metrics = await fetch(`${relay.baseUrl}/metrics`, { headers: { authorization: `Bearer ${b.key}` } });
      expectNothingOfA('GET /metrics', await metrics.text());
    },
  },
  'POST /v1/accounts': { none: 'creates a new account; takes no id and no key' },
  'POST /v1/ingest/{ingest_id}': { none: 'unauthenticated by design: the unguessable ingest id is the credential; B never sees A\'s ingest ids (every list and read below is searched for them)' },
  'PUT /v1/ingest/{ingest_id}': { none: 'as POST /v1/ingest/{ingest_id}' },
  'PATCH /v1/ingest/{ingest_id}': { none: 'as POST /v1/ingest/{ingest_id}' },
  'DELETE /v1/ingest/{ingest_id}': { none: 'as POST /v1/ingest/{ingest_id}' },
  'GET /v1/ingest/{ingest_id}': { none: 'as POST /v1/ingest/{ingest_id}' },
  'HEAD /v1/ingest/{ingest_id}': { none: 'as POST /v1/ingest/{ingest_id}' },
  'OPTIONS /v1/ingest/{ingest_id}': { none: 'as POST /v1/ingest/{ingest_id}' },
  'GET /v1/account': { check: async () => { expect((await onlyOwn('GET', '/v1/account')).body.account.id).toBe(b.accountId); } },
  'GET /v1/account/usage/daily': {
    check: async () => {
      // Counts carry no ids: B's days add up to B's own events, none of A's.
      const days = (await onlyOwn('GET', '/v1/account/usage/daily?days=90')).body.days as { events: number }[];
      const own = (await onlyOwn('GET', '/v1/events?limit=100')).body;
      expect(own.next_cursor).toBeNull();
      expect(days.reduce((sum, day) => sum + day.events, 0)).toBe(own.data.length);
    },
  },
  'POST /console/session': { none: 'makes a session for the key it is sent; takes no id (console-session.test.ts)' },
  'GET /console/session': { none: 'reads only the session of the cookie the caller carries; takes no id' },
  'DELETE /console/session': { none: 'ends only the session of the cookie the caller carries; takes no id' },
  'PATCH /v1/account': { check: async () => { expect((await onlyOwn('PATCH', '/v1/account', { email: 'b-owner@example.com' })).body.account.id).toBe(b.accountId); } },
  // Verifies only the caller's own claim: B has none, whatever A has, so there is nothing to verify.
  'POST /v1/account/custom-domain/verify': { check: async () => { expect((await refused('POST', '/v1/account/custom-domain/verify', undefined, [409])).body.code).toBe('custom_domain_not_claimed'); } },
  'DELETE /v1/account': {
    check: async () => {
      // Only the caller's own account can be deleted: B confirming with A's id is refused, and A's rows stay (the snapshot).
      expect((await refused('DELETE', `/v1/account?confirm=${a.accountId}`, undefined, [400])).body.code).toBe('confirmation_required');
    },
  },
  'POST /v1/account/plan': { check: async () => { expect((await onlyOwn('POST', '/v1/account/plan', { plan: 'enterprise' })).body.account.id).toBe(b.accountId); } },
  'POST /v1/api-keys': { check: async () => { await onlyOwn('POST', '/v1/api-keys', { name: 'b extra' }); } },
  'GET /v1/api-keys': { check: async () => { await onlyOwn('GET', '/v1/api-keys?limit=100'); } },
  'DELETE /v1/api-keys/{id}': { check: async () => { await refused('DELETE', `/v1/api-keys/${a.spareKeyId}`); } },
  'POST /v1/members': { check: async () => { await onlyOwn('POST', '/v1/members', { email: 'a@example.com', role: 'admin' }); } },
  'GET /v1/members': { check: async () => { await onlyOwn('GET', '/v1/members?limit=100'); } },
  'GET /v1/members/{id}': { check: async () => { await refused('GET', `/v1/members/${a.memberId}`); } },
  'PATCH /v1/members/{id}': { check: async () => { await refused('PATCH', `/v1/members/${a.memberId}`, { role: 'admin' }); } },
  'DELETE /v1/members/{id}': { check: async () => { await refused('DELETE', `/v1/members/${a.memberId}`); } },
  'POST /v1/endpoints': { check: async () => { await onlyOwn('POST', '/v1/endpoints', { name: 'b extra', destination: { type: 'cli' } }); } },
  'GET /v1/endpoints': { check: async () => { await onlyOwn('GET', '/v1/endpoints?limit=100'); } },
  'GET /v1/endpoints/{id}': { check: async () => { for (const endpoint of [a.deliveredEndpoint, a.failingEndpoint, a.cliEndpoint]) await refused('GET', `/v1/endpoints/${endpoint.id}`); } },
  'PATCH /v1/endpoints/{id}': {
    check: async () => {
      for (const change of [{ name: 'taken over' }, { status: 'disabled' }, { destination: { type: 'url', url: `${receiver.url}/stolen` } }]) await refused('PATCH', `/v1/endpoints/${a.deliveredEndpoint.id}`, change);
    },
  },
  'DELETE /v1/endpoints/{id}': { check: async () => { await refused('DELETE', `/v1/endpoints/${a.cliEndpoint.id}`); } },
  'GET /v1/endpoints/{id}/secret': { check: async () => { await refused('GET', `/v1/endpoints/${a.deliveredEndpoint.id}/secret`); } },
  'POST /v1/endpoints/{id}/rotate-secret': { check: async () => { await refused('POST', `/v1/endpoints/${a.deliveredEndpoint.id}/rotate-secret`, {}); } },
  'GET /v1/endpoints/{id}/destinations': { check: async () => { await refused('GET', `/v1/endpoints/${a.deliveredEndpoint.id}/destinations`); } },
  'POST /v1/endpoints/{id}/destinations': { check: async () => { await refused('POST', `/v1/endpoints/${a.deliveredEndpoint.id}/destinations`, { destination: { type: 'url', url: `${receiver.url}/stolen` } }); } },
  'GET /v1/destinations/{id}': { check: async () => { await refused('GET', `/v1/destinations/${a.deliveredEndpoint.destinations[0]!.id}`); } },
  'PATCH /v1/destinations/{id}': {
    check: async () => {
      for (const change of [{ status: 'paused' }, { destination: { type: 'url', url: `${receiver.url}/stolen` } }]) await refused('PATCH', `/v1/destinations/${a.deliveredEndpoint.destinations[0]!.id}`, change);
    },
  },
  'DELETE /v1/destinations/{id}': { check: async () => { await refused('DELETE', `/v1/destinations/${a.failingEndpoint.destinations[0]!.id}`); } },
  'GET /v1/destinations/{id}/secret': { check: async () => { await refused('GET', `/v1/destinations/${a.deliveredEndpoint.destinations[0]!.id}/secret`); } },
  'POST /v1/destinations/{id}/rotate-secret': { check: async () => { await refused('POST', `/v1/destinations/${a.deliveredEndpoint.destinations[0]!.id}/rotate-secret`, {}); } },
  'GET /v1/destinations/{id}/blocked-keys': { check: async () => { await refused('GET', `/v1/destinations/${a.deliveredEndpoint.destinations[0]!.id}/blocked-keys`); } },
  'POST /v1/destinations/{id}/unblock': { check: async () => { await refused('POST', `/v1/destinations/${a.deliveredEndpoint.destinations[0]!.id}/unblock`, { key: '' }); } },
  'GET /v1/events': {
    check: async () => {
      await refused('GET', `/v1/events?endpoint_id=${a.deliveredEndpoint.id}`);
      await refused('GET', `/v1/events?endpoint_id=${ingestIdOf(a.deliveredEndpoint)}`, undefined, [400]);
      for (const status of ['pending', 'delivered', 'retrying', 'failed']) await onlyOwn('GET', `/v1/events?status=${status}&limit=100`);
      expect((await onlyOwn('GET', `/v1/events?type=${encodeURIComponent(a.eventType)}`)).body.data).toEqual([]);
      const all = await onlyOwn('GET', '/v1/events?limit=100');
      expect(all.body.data.map((event: { id: string }) => event.id)).toEqual(expect.arrayContaining([b.deliveredEventId, b.failedEventId, b.pendingEventId]));
    },
  },
  'GET /v1/events/{id}': { check: async () => { for (const id of [a.deliveredEventId, a.failedEventId, a.pendingEventId]) await refused('GET', `/v1/events/${id}`); } },
  'POST /v1/events/replay/{id}': { check: async () => { for (const id of [a.deliveredEventId, a.failedEventId]) await refused('POST', `/v1/events/replay/${id}`, {}); } },
  'POST /v1/events/replay': {
    check: async () => {
      await refused('POST', '/v1/events/replay', { endpoint_id: a.failingEndpoint.id, status: 'failed' });
      // Without an endpoint filter a bulk replay takes B's failed events only: A's stay as they are (the snapshot shows it).
      await onlyOwn('POST', '/v1/events/replay', { status: 'failed' });
    },
  },
  'POST /v1/transformations/test': { check: async () => { await refused('POST', '/v1/transformations/test', { code: "addHandler('transform', (request) => request)", event_id: a.failedEventId }); } },
  'POST /mcp': { check: async () => { await mcpAcrossAccounts(); } },
  'PUT /v1/account/notifications': { check: async () => { await onlyOwn('PUT', '/v1/account/notifications', { url: `${receiver.url}/notifications/b2` }); } },
  'GET /v1/account/notifications': { check: async () => { await onlyOwn('GET', '/v1/account/notifications'); } },
  'GET /v1/account/alerts': {
    check: async () => {
      const { body } = await onlyOwn('GET', '/v1/account/alerts');
      expect(body.slack?.url_hint).toMatch(/^http/);
      expect(body.slack.url_hint).not.toBe(a.slackUrlHint);
      // The latest alerts are B's own: as many as B has (A's issue.opened alert is not among them).
      const own = await sqlRows(relay, 'select id from alert_outbox where account_id = ?', [b.accountId]);
      expect(own.length).toBeGreaterThan(0);
      expect(body.recent).toHaveLength(Math.min(own.length, RECENT_ALERTS_SHOWN));
    },
  },
  'PUT /v1/account/alerts': { check: async () => { await onlyOwn('PUT', '/v1/account/alerts', { slack_webhook_url: `${receiver.url}/slack/b2` }); } },
  'POST /v1/account/alerts/test': { check: async () => { await onlyOwn('POST', '/v1/account/alerts/test'); } },
  'DELETE /v1/account/notifications': { check: async () => { expect((await api(relay.baseUrl, 'DELETE', '/v1/account/notifications', { key: b.key })).status).toBe(204); } },
  'GET /v1/issues': {
    check: async () => {
      // A filter naming A's endpoint or destination is refused, as on GET /v1/events, not answered with an empty list.
      expect((await refused('GET', `/v1/issues?endpoint_id=${a.failingEndpoint.id}`)).body.code).toBe('endpoint_not_found');
      expect((await refused('GET', `/v1/issues?destination_id=${a.failingEndpoint.destinations[0]!.id}`)).body.code).toBe('destination_not_found');
      expect((await refused('GET', `/v1/issues?status=open,acknowledged,resolved&endpoint_id=${a.failingEndpoint.id}&destination_id=${a.failingEndpoint.destinations[0]!.id}`)).body.code).toBe('endpoint_not_found');
      for (const kind of ['', '&kind=connection_refused']) {
        const all = await onlyOwn('GET', `/v1/issues?status=open,acknowledged,resolved&limit=100${kind}`);
        expect(all.body.data.map((issue: { id: string }) => issue.id)).toEqual([b.issueId]);
      }
    },
  },
  'GET /v1/issues/{id}': { check: async () => { expect((await refused('GET', `/v1/issues/${a.issueId}`)).body.code).toBe('issue_not_found'); } },
  'GET /v1/issues/{id}/events': { check: async () => { expect((await refused('GET', `/v1/issues/${a.issueId}/events?limit=100`)).body.code).toBe('issue_not_found'); } },
  'POST /v1/issues/{id}/acknowledge': { check: async () => { expect((await refused('POST', `/v1/issues/${a.issueId}/acknowledge`)).body.code).toBe('issue_not_found'); } },
  'POST /v1/issues/{id}/resolve': { check: async () => { expect((await refused('POST', `/v1/issues/${a.issueId}/resolve`)).body.code).toBe('issue_not_found'); } },
  // A's failed event stays failed and unattempted (the snapshot shows it).
  'POST /v1/issues/{id}/retry': { check: async () => { expect((await refused('POST', `/v1/issues/${a.issueId}/retry`)).body.code).toBe('issue_not_found'); } },
  'GET /v1/account/notifications/events': { check: async () => { await onlyOwn('GET', '/v1/account/notifications/events?limit=100'); } },
  'POST /playground/session': { check: async () => { await playgroundAcrossSessions(); } },
  'GET /playground/session': { check: async () => { await playgroundAcrossSessions(); } },
  'GET /playground/events': { check: async () => { await playgroundAcrossSessions(); } },
  'POST /playground/events': { check: async () => { await playgroundAcrossSessions(); } },
  'POST /playground/claim': { check: async () => { await playgroundAcrossSessions(); } },
};

/** Every MCP tool with B's key: tools that take an id get A's, the others must show nothing of A. */
async function mcpAcrossAccounts(): Promise<void> {
  const client = new Client({ name: 'tenant-isolation', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${relay.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${b.key}` } } }));
  try {
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(10);
    const idOfA: Record<string, string> = { ep_: a.failingEndpoint.id, evt_: a.failedEventId, mem_: a.memberId, key_: a.spareKeyId, dst_: a.deliveredEndpoint.destinations[0]!.id, iss_: a.issueId };
    let crossed = 0;
    for (const tool of tools) {
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, { pattern?: string; type?: string; enum?: string[] }>;
      const args: Record<string, unknown> = {};
      let takesId = false;
      for (const [name, schema] of Object.entries(properties)) {
        const prefix = /^\^([a-z]+_)/.exec(schema.pattern ?? '')?.[1] ?? (name === 'endpoint_id' ? 'ep_' : name === 'event_id' ? 'evt_' : name === 'member_id' ? 'mem_' : name === 'destination_id' ? 'dst_' : name === 'issue_id' ? 'iss_' : undefined);
        if (prefix && idOfA[prefix]) {
          args[name] = idOfA[prefix];
          takesId = true;
        }
      }
      for (const name of (tool.inputSchema.required ?? []) as string[]) {
        if (name in args) continue;
        const schema = properties[name]!;
        args[name] = schema.enum?.[0] ?? (name === 'code' ? "addHandler('transform', (request) => request)" : name === 'email' ? 'x@example.com' : name === 'url' ? `${receiver.url}/mcp`
          : name === 'destination' ? { type: 'url', url: `${receiver.url}/mcp` } : schema.type === 'integer' || schema.type === 'number' ? 1 : 'x');
      }
      if (!takesId) {
        if (['sign_up', 'upgrade_plan', 'update_account', 'set_notification_url', 'clear_notifications', 'create_endpoint', 'add_member', 'send_test_event'].includes(tool.name)) continue; // write to B's own account only; the snapshot shows A untouched
        const result = await client.callTool({ name: tool.name, arguments: args });
        expectNothingOfA(`MCP ${tool.name}`, result);
        continue;
      }
      crossed += 1;
      const result = await client.callTool({ name: tool.name, arguments: args });
      expect(result.isError, `MCP ${tool.name}(${JSON.stringify(args)}) with B's key on A's ids: ${JSON.stringify(result).slice(0, 300)}`).toBe(true);
      expect(JSON.stringify(result.content)).toMatch(/not_found|forbidden/);
    }
    expect(crossed, 'MCP tools that take an id were tried on A').toBeGreaterThanOrEqual(8);
  } finally {
    await client.close();
  }
}

let playgroundChecked = false;
/** Two playground sessions: neither token reads the other's events, and tokens and API keys are not interchangeable. */
async function playgroundAcrossSessions(): Promise<void> {
  if (playgroundChecked) return;
  playgroundChecked = true;
  const one = (await api(relay.baseUrl, 'POST', '/playground/session')).body;
  const two = (await api(relay.baseUrl, 'POST', '/playground/session')).body;
  const oneEvent = await sendEvent(ingestUrl(one.endpoint.url), '{"session":"one"}');
  const sentByPage = await api(relay.baseUrl, 'POST', '/playground/events', { headers: { authorization: `Bearer ${one.token}` }, json: { type: 'one.only', payload: '{}' } });
  expect(sentByPage.status).toBe(200);
  const twoEvents = await api(relay.baseUrl, 'GET', '/playground/events', { headers: { authorization: `Bearer ${two.token}` } });
  expect(twoEvents.status).toBe(200);
  const twoText = JSON.stringify(twoEvents.body);
  for (const secret of [oneEvent, sentByPage.body.id, one.account_id, one.endpoint.id, ingestIdOf(one.endpoint)].filter(Boolean)) expect(twoText).not.toContain(secret);
  const twoSession = await api(relay.baseUrl, 'GET', '/playground/session', { headers: { authorization: `Bearer ${two.token}` } });
  expect(twoSession.body.account_id).toBe(two.account_id);
  expect(JSON.stringify(twoSession.body)).not.toContain(one.account_id);
  // A playground token is no API key, an API key is no playground token.
  expect((await api(relay.baseUrl, 'GET', '/v1/events', { key: one.token })).status).toBe(401);
  expect((await api(relay.baseUrl, 'GET', '/playground/events', { headers: { authorization: `Bearer ${b.key}` } })).status).toBe(401);
  expect((await api(relay.baseUrl, 'POST', '/playground/claim', { headers: { authorization: `Bearer ${b.key}` } })).status).toBe(401);
  // Claiming session two gives an account that sees none of session one.
  const claimed = await api(relay.baseUrl, 'POST', '/playground/claim', { headers: { authorization: `Bearer ${two.token}` } });
  expect(claimed.status, JSON.stringify(claimed.body)).toBe(201);
  const claimedEvents = await api(relay.baseUrl, 'GET', '/v1/events?limit=100', { key: claimed.body.api_key });
  expect(JSON.stringify(claimedEvents.body)).not.toContain(oneEvent);
  expect((await api(relay.baseUrl, 'GET', `/v1/events/${oneEvent}`, { key: claimed.body.api_key })).status).toBe(404);
  // The playground stream of session two sees its own events and not session one's.
  const seen: any[] = [];
  const socket = new WebSocket(`${relay.baseUrl.replace(/^http/, 'ws')}/playground/stream?token=${two.token}`);
  socket.on('message', (data) => seen.push(JSON.parse(data.toString())));
  await until(() => (seen.some((message) => message.type === 'hello')), 10_000);
  const oneLater = await sendEvent(ingestUrl(one.endpoint.url), '{"session":"one, later"}');
  const twoLater = await sendEvent(ingestUrl(two.endpoint.url), '{"session":"two"}');
  await until(() => (seen.some((message) => message.event?.id === twoLater)), 10_000);
  expect(JSON.stringify(seen)).not.toContain(oneLater);
  socket.close();
}

beforeAll(async () => {
  receiver = await startReceiver((request) => ({ status: request.url?.includes('/refused') ? 500 : 200 }));
  relay = await startTestRelay({ retryScheduleMs: [10] }, { workerPollMs: 50 });
  const tenants = [await makeTenant('a'), await makeTenant('b')].map((tenant) => ({ ...tenant, issueId: '', slackUrlHint: '' }));
  [a, b] = tenants as [Tenant, Tenant];
  // A's URL events settle (delivered; failed after its one retry) before the snapshot.
  for (const tenant of [a, b]) {
    await until(async () => ((await api(relay.baseUrl, 'GET', `/v1/events/${tenant.deliveredEventId}`, { key: tenant.key })).body.status === 'delivered'), 10_000);
    await until(async () => ((await api(relay.baseUrl, 'GET', `/v1/events/${tenant.failedEventId}`, { key: tenant.key })).body.status === 'failed'), 10_000);
  }
  // And so do the account notifications those produced (event.failed, plan.changed), which are events of A too.
  await until(async () => {
    // Outbox rows not yet turned into notification events count as unsettled too.
    const unsettled = await sqlRows(relay, "select event_id as id from delivery where account_id = ? and status in ('pending', 'retrying') and endpoint_id <> ?", [a.accountId, a.cliEndpoint.id]);
    const queued = await sqlRows(relay, 'select id from notification_outbox where account_id = ?', [a.accountId]);
    // And the Slack alert of A's issue.opened is sent.
    const alerts = await sqlRows(relay, "select id from alert_outbox where account_id = ? and status = 'pending'", [a.accountId]);
    return unsettled.length === 0 && queued.length === 0 && alerts.length === 0;
  }, 20_000);
  for (const tenant of [a, b]) {
    // Each failing endpoint opened one issue: its destination refused the connection.
    const issues = (await api(relay.baseUrl, 'GET', '/v1/issues', { key: tenant.key })).body.data as { id: string; destination_id: string; kind: string }[];
    expect(issues.map(({ destination_id: destinationId, kind }) => ({ destinationId, kind }))).toEqual([{ destinationId: tenant.failingEndpoint.destinations[0]!.id, kind: 'connection_refused' }]);
    tenant.issueId = issues[0]!.id;
    tenant.slackUrlHint = (await api(relay.baseUrl, 'GET', '/v1/account/alerts', { key: tenant.key })).body.slack.url_hint;
  }
  expect(await sqlRows(relay, "select type from alert_outbox where account_id = ? and status = 'sent'", [a.accountId])).toEqual([{ type: 'issue.opened' }]);
}, 60_000);

afterAll(async () => {
  await relay?.close();
  await receiver?.close();
});

test('ROUTE_CHECKS names every operation of /openapi.json and nothing else', async () => {
  const openapi = (await api(relay.baseUrl, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  const operations = Object.entries(openapi.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
  expect(operations.filter((operation) => !(operation in ROUTE_CHECKS)), 'operations without a tenant-isolation decision').toEqual([]);
  expect(Object.keys(ROUTE_CHECKS).filter((operation) => !operations.includes(operation)), 'decisions for operations that no longer exist').toEqual([]);
});

test('with B\'s key, every route refuses A\'s ids, lists show none of A, and A\'s rows are unchanged', { timeout: 120_000 }, async () => {
  const before = await snapshotOfA();
  expect(before.event?.length).toBeGreaterThanOrEqual(3);
  const openapi = (await api(relay.baseUrl, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  let checked = 0;
  for (const [path, methods] of Object.entries(openapi.paths)) {
    for (const method of Object.keys(methods)) {
      const decision = ROUTE_CHECKS[`${method.toUpperCase()} ${path}`];
      if (decision && 'check' in decision) {
        await decision.check({ path });
        checked += 1;
      }
    }
  }
  console.log(`tenant-isolation: ${checked} operations tried with B's key on A, ${Object.values(ROUTE_CHECKS).filter((decision) => 'none' in decision).length} need no check`);
  // B's own key still works (B was not locked out by its own changes), and A's still does.
  expect((await api(relay.baseUrl, 'GET', '/v1/account', { key: b.key })).status).toBe(200);
  const after = await snapshotOfA();
  expect(after).toEqual(before);
  expect((await api(relay.baseUrl, 'GET', `/v1/endpoints/${a.deliveredEndpoint.id}`, { key: a.key })).body.name).toBe('a delivered');
  expect(receiver.requests.some((request) => request.url?.includes('/stolen'))).toBe(false);
});

test('B\'s stream never carries A\'s events: tail sees only B, listen and tail on A\'s endpoint are refused', async () => {
  const refusedUpgrade = (path: string) => new Promise<number>((resolve, reject) => {
    const socket = new WebSocket(`${relay.baseUrl.replace(/^http/, 'ws')}${path}`, { headers: { authorization: `Bearer ${b.key}` } });
    socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    socket.on('open', () => reject(new Error(`${path} was upgraded for B`)));
    socket.on('error', () => undefined);
  });
  expect(await refusedUpgrade(`/v1/stream?mode=listen&endpoint_id=${a.cliEndpoint.id}`)).toBe(404);
  expect(await refusedUpgrade(`/v1/stream?endpoint_id=${a.deliveredEndpoint.id}`)).toBe(404);

  const seen: any[] = [];
  const tail = new WebSocket(`${relay.baseUrl.replace(/^http/, 'ws')}/v1/stream`, { headers: { authorization: `Bearer ${b.key}` } });
  tail.on('message', (data) => seen.push(JSON.parse(data.toString())));
  const listenSeen: any[] = [];
  const listener = new WebSocket(`${relay.baseUrl.replace(/^http/, 'ws')}/v1/stream?mode=listen&endpoint_id=${b.cliEndpoint.id}`, { headers: { authorization: `Bearer ${b.key}` } });
  listener.on('message', (data) => listenSeen.push(JSON.parse(data.toString())));
  await until(() => (seen.some((message) => message.type === 'hello') && listenSeen.some((message) => message.type === 'hello')), 10_000);
  expect(seen[0].account_id).toBe(b.accountId);

  const aEvents = [
    await sendEvent(ingestUrl(a.cliEndpoint.url), '{"tenant":"a","live":true}'),
    await sendEvent(ingestUrl(a.deliveredEndpoint.url), '{"tenant":"a","live":true}'),
    await sendEvent(ingestUrl(a.failingEndpoint.url), '{"tenant":"a","live":true}'),
  ];
  const bEvent = await sendEvent(ingestUrl(b.cliEndpoint.url), '{"tenant":"b","live":true}');
  await until(() => (seen.some((message) => message.event?.id === bEvent)), 10_000);
  await until(() => (listenSeen.some((message) => message.type === 'delivery' && message.event.id === bEvent)), 10_000);
  // A's attempts finish (recorded), then one more event of B: B's sessions get what happens in
  // order, so anything of A (wrongly) sent to them would come before that event.
  await until(async () => ((await api(relay.baseUrl, 'GET', `/v1/events/${aEvents[1]}`, { key: a.key })).body.status === 'delivered'), 10_000);
  await until(async () => ((await api(relay.baseUrl, 'GET', `/v1/events/${aEvents[2]}`, { key: a.key })).body.attempts.length > 0), 10_000);
  const bLater = await sendEvent(ingestUrl(b.cliEndpoint.url), '{"tenant":"b","later":true}');
  await until(() => (seen.some((message) => message.event?.id === bLater)), 10_000);
  await until(() => (listenSeen.some((message) => message.type === 'delivery' && message.event.id === bLater)), 10_000);
  for (const [name, messages] of [['tail', seen], ['listen', listenSeen]] as const) {
    const text = JSON.stringify(messages);
    for (const id of [...aEvents, a.cliEndpoint.id, a.deliveredEndpoint.id, a.accountId]) expect(text.includes(id), `B's ${name} got A's ${id}`).toBe(false);
  }
  tail.close();
  listener.close();
});
