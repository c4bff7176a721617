/**
 * `hook events list` and the MCP tool `list_events` with a filter that matches rarely: the
 * relay looks through at most EVENT_LIST_WINDOW events a request and answers such a page short,
 * even empty, with a cursor on (docs/api.md#get-v1events); both follow the cursor, so
 * the user sees the matches, not an empty page.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EVENT_LIST_WINDOW } from '@hook/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { writeEventHistory } from '../support/event-history.ts';
import { callTool } from '../support/mcp.ts';
import { api, createEndpoint, startTestRelay, type TestRelay } from '../support/relay.ts';

/** Two and a half of the relay's pages, so a match far back is three requests away. */
const EVENTS = EVENT_LIST_WINDOW * 2.5;
const STEP_MS = 1000;
/** The events (by position, 0 the oldest) that are retrying: both older than the newest two windows, so on the third request. */
const RETRYING = [EVENT_LIST_WINDOW * 0.4, 100];

let relay: TestRelay;
const user = new HookUser();
let key: string;
let endpointId: string;
const retryingIds: string[] = [];

beforeAll(async () => {
  relay = await startTestRelay();
  key = (await user.json(['signup', '--api-url', relay.baseUrl])).api_key;
  const account = await api(relay.baseUrl, 'GET', '/v1/account', { key });
  const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'orders' });
  endpointId = endpoint.id;
  const client = new pg.Client({ connectionString: relay.database.url });
  await client.connect();
  try {
    const startMs = Date.now() - (EVENTS + 60) * STEP_MS;
    await writeEventHistory(client, { accountId: account.body.account.id, endpointId, destinationId: `dst_${endpointId.slice(3)}`, count: EVENTS, startMs, stepMs: STEP_MS, tag: 1 });
    for (const g of RETRYING) {
      const { rows: [row] } = await client.query<{ id: string }>(
        `update delivery set status = 'retrying', next_attempt_at = now() + interval '1 hour'
         where event_id = (select id from event where endpoint_id = $1 and received_at = $2) returning event_id as id`,
        [endpointId, new Date(startMs + g * STEP_MS)],
      );
      retryingIds.push(row!.id);
    }
  } finally {
    await client.end();
  }
}, 60_000);
afterAll(async () => {
  await relay?.close();
  user.remove();
});

describe('a filter that matches rarely', () => {
  it('the relay\'s own first page is empty with a cursor on', async () => {
    const page = await api(relay.baseUrl, 'GET', '/v1/events?status=retrying', { key });
    expect(page.body).toEqual({ data: [], next_cursor: expect.any(String) });
  });

  it('hook events list follows the cursor: both matches, newest first, and no cursor left', async () => {
    const listed = await user.json(['events', 'list', '--status', 'retrying']);
    expect(listed).toEqual({ data: [expect.objectContaining({ id: retryingIds[0], status: 'retrying' }), expect.objectContaining({ id: retryingIds[1], status: 'retrying' })], next_cursor: null });
    const text = await user.run(['events', 'list', '--status', 'retrying']);
    expect(text.code).toBe(0);
    for (const id of retryingIds) expect(text.stdout).toContain(id);
    expect(text.stderr).not.toContain('Stopped looking');

    // A page of one: the newest match, and a cursor that finds the other.
    const first = await user.json(['events', 'list', '--status', 'retrying', '--limit', '1']);
    expect(first.data.map((event: { id: string }) => event.id)).toEqual([retryingIds[0]]);
    const rest = await user.json(['events', 'list', '--status', 'retrying', '--cursor', first.next_cursor]);
    expect(rest).toEqual({ data: [expect.objectContaining({ id: retryingIds[1] })], next_cursor: null });
  });

  it('list_events over MCP does the same', async () => {
    const client = new Client({ name: 'hook-sparse-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${relay.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const listed = await callTool(client, 'list_events', { endpoint_id: 'orders', status: 'retrying' });
      expect(listed.data.map((event: { id: string }) => event.id)).toEqual(retryingIds);
      expect(listed.next_cursor).toBeNull();
    } finally {
      await client.close();
    }
  });
});
