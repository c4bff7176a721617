/**
 * @hook/client's issues methods against a real relay and a real receiver that answers 500,
 * then 200: each returns the route's JSON as typed, and an unknown issue rejects with
 * HookApiError issue_not_found.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHookClient, HookApiError, type HookClient, type Issue } from '@hook/client';
import { eventually } from '../support/hook-process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let receiver: Receiver;
let client: HookClient;
const sent: string[] = [];

beforeAll(async () => {
  // Retries an hour apart: only the test's own retry reaches the receiver again.
  relay = await startTestRelay({ allowPrivateDestinations: true, retryScheduleMs: [3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000] }, { workerPollMs: 20 });
  receiver = await startReceiver(() => ({ status: 500 }));
  const anonymous = createHookClient({ apiUrl: relay.baseUrl });
  const signup = await anonymous.accounts.create();
  await anonymous.close();
  client = createHookClient({ apiUrl: relay.baseUrl, apiKey: signup.api_key });
  const endpoint = await client.endpoints.create({ name: 'orders', destination: { type: 'url', url: receiver.url } });
  for (const n of [1, 2]) sent.push((await client.ingest.send(endpoint.url, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }) })).id);
  await receiver.waitFor(2);
});

afterAll(async () => {
  await client?.close();
  await receiver?.close();
  await relay?.close();
});

describe('client.issues', () => {
  it('lists, gets, pages the events of, acknowledges, resolves and retries an issue', async () => {
    const page = await eventually(() => client.issues.list(), (found) => found.data[0]?.event_count === 2, 10_000, 'an issue covering both events');
    expect(page.next_cursor).toBeNull();
    const [listed] = page.data as [Issue];
    expect(listed).toMatchObject({ kind: 'http_5xx', status: 'open', failure_count: 2, last_status: 500, events: { total: 2, delivered: 0, failing: 2, pending: 0 } });
    expect(await client.issues.get(listed.id)).toEqual(listed);
    expect((await client.issues.list({ status: 'resolved' })).data).toEqual([]);
    expect((await client.issues.list({ destination_id: listed.destination_id, kind: 'http_5xx' })).data.map((issue) => issue.id)).toEqual([listed.id]);

    const first = await client.issues.events(listed.id, { limit: 1 });
    expect(first.data).toHaveLength(1);
    expect(first.next_cursor).not.toBeNull();
    const second = await client.issues.events(listed.id, { limit: 1, cursor: first.next_cursor! });
    expect([...first.data, ...second.data].map((event) => event.event_id).sort()).toEqual([...sent].sort());
    expect(second.data[0]).toMatchObject({ delivery_status: 'retrying', attempt_count: 1, last_status: 500 });

    expect(await client.issues.acknowledge(listed.id)).toMatchObject({ id: listed.id, status: 'acknowledged' });
    expect(await client.issues.resolve(listed.id)).toMatchObject({ id: listed.id, status: 'resolved', resolved_by: 'user' });

    receiver.respond = () => ({ status: 200 });
    const retried = await client.issues.retry(listed.id);
    expect(retried.queued).toBe(2);
    expect(retried.issue.retry).toMatchObject({ queued: 2 });
    const delivered = await eventually(() => client.issues.get(listed.id), (issue) => issue.events.delivered === 2, 10_000, 'both events delivered');
    expect(delivered.events).toEqual({ total: 2, delivered: 2, failing: 0, pending: 0 });
  });

  it('rejects an unknown issue with issue_not_found', async () => {
    const error = await client.issues.get('iss_00000000000000000000000000').then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(HookApiError);
    expect([(error as HookApiError).code, (error as HookApiError).status]).toEqual(['issue_not_found', 404]);
  });
});
