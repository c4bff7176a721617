/**
 * The issue tools over `/mcp` on a real relay, spoken to by the official MCP SDK client,
 * with a real receiver that answers 502 and then, fixed, 200: an agent finds what is
 * failing, reads the issue and its events, acknowledges it, retries every event once the
 * receiver is fixed, follows get_issue until none is pending, and resolves an issue by hand.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, toolError } from '@hook/test/mcp';
import { startReceiver, type Receiver } from '@hook/test/receiver';
import { createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
let receiver: Receiver;
let client: Client;
const sent: string[] = [];

beforeAll(async () => {
  // Retries an hour apart: only the agent's retry reaches the receiver again.
  relay = await startTestRelay({ allowPrivateDestinations: true, retryScheduleMs: [3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000] }, { workerPollMs: 20 });
  receiver = await startReceiver(() => ({ status: 502 }));
  const { key } = await signUp(relay.baseUrl);
  const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'billing', destination: { type: 'url', url: receiver.url } });
  for (const n of [1, 2, 3]) sent.push(await sendEvent(endpoint.url, JSON.stringify({ type: 'invoice.paid', n })));
  await receiver.waitFor(3);
  client = new Client({ name: 'mcp-issues-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${relay.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  await client.listTools(); // so the client checks results against the output schemas, as real clients do
});

afterAll(async () => {
  await client?.close();
  await receiver?.close();
  await relay?.close();
});

describe('issue tools', () => {
  it('take an agent from "what is failing" to every event delivered', async () => {
    let listed: any;
    await expect.poll(async () => {
      listed = await callTool(client, 'list_issues', { endpoint_id: 'billing' });
      return listed.data[0]?.event_count;
    }, { timeout: 10_000 }).toBe(3);
    expect(listed.data).toHaveLength(1);
    const [issue] = listed.data;
    expect(issue).toMatchObject({ kind: 'http_5xx', title: 'Receiver answered 5xx', status: 'open', last_status: 502, events: { total: 3, delivered: 0, failing: 3, pending: 0 } });
    expect((await callTool(client, 'list_issues', { kind: 'timeout' })).data).toEqual([]);

    const got = await callTool(client, 'get_issue', { issue_id: issue.id });
    expect(got.issue).toEqual(issue);
    const summary = await client.callTool({ name: 'get_issue', arguments: { issue_id: issue.id } });
    expect((summary.content as Array<{ text: string }>)[0]!.text.split('\n')[0]).toBe(`Issue ${issue.id} (Receiver answered 5xx) on ${issue.destination_id}, open: delivered 0 of 3, failing 3, pending 0`);

    const firstPage = await callTool(client, 'list_issue_events', { issue_id: issue.id, limit: 2 });
    expect(firstPage.data).toHaveLength(2);
    const secondPage = await callTool(client, 'list_issue_events', { issue_id: issue.id, limit: 2, cursor: firstPage.next_cursor });
    expect(secondPage.next_cursor).toBeNull();
    expect([...firstPage.data, ...secondPage.data].map((event: any) => event.event_id).sort()).toEqual([...sent].sort());
    expect(firstPage.data[0]).toMatchObject({ delivery_status: 'retrying', attempt_count: 1, last_status: 502 });

    const acknowledged = await callTool(client, 'acknowledge_issue', { issue_id: issue.id });
    expect(acknowledged.issue).toMatchObject({ id: issue.id, status: 'acknowledged', resolved_by: null, resolved_at: null });
    expect(acknowledged.issue.acknowledged_at).not.toBeNull();

    receiver.respond = () => ({ status: 200 });
    const before = receiver.requests.length;
    const retried = await callTool(client, 'retry_issue', { issue_id: issue.id });
    expect(retried.queued).toBe(3);
    await expect.poll(async () => (await callTool(client, 'get_issue', { issue_id: issue.id })).issue.events, { timeout: 10_000 })
      .toEqual({ total: 3, delivered: 3, failing: 0, pending: 0 });
    expect(receiver.requests.length - before).toBe(3);
    await expect.poll(async () => (await callTool(client, 'get_issue', { issue_id: issue.id })).issue.status, { timeout: 15_000 }).toBe('resolved');
    expect((await callTool(client, 'list_issues', { status: 'resolved' })).data.map((item: any) => [item.id, item.resolved_by])).toEqual([[issue.id, 'auto']]);
  });

  it('resolve an issue by hand, idempotently', async () => {
    receiver.respond = () => ({ status: 404 });
    await sendEvent((await callTool(client, 'list_endpoints')).data[0].url, JSON.stringify({ type: 'invoice.voided' }));
    let issue: any;
    await expect.poll(async () => {
      [issue] = (await callTool(client, 'list_issues', { kind: 'http_4xx' })).data;
      return issue?.status;
    }, { timeout: 10_000 }).toBe('open');
    expect(issue.title).toBe('Receiver answered 4xx');
    for (const _ of [1, 2]) {
      expect((await callTool(client, 'resolve_issue', { issue_id: issue.id })).issue).toMatchObject({ id: issue.id, status: 'resolved', resolved_by: 'user' });
    }
    expect((await callTool(client, 'list_issues')).data).toEqual([]);
  });

  it('answer an unknown issue with issue_not_found and a fix naming list_issues', async () => {
    const error = toolError(await client.callTool({ name: 'get_issue', arguments: { issue_id: 'iss_00000000000000000000000000' } }));
    expect(error).toMatchObject({ code: 'issue_not_found', status: 404 });
    expect(error.fix).toContain('list_issues');
    expect(error.fix).not.toContain('/v1/');
  });
});
