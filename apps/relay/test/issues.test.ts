import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver, closedPort } from '@hook/test/receiver';
import { api, createEndpoint, expectProblem, sendEvent, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

// Two retries: an event fails for good after three attempts, within a fraction of a second.
const FAST_SCHEDULE = [30, 30];
const POLL = { timeout: 15_000, interval: 50 };

let relay: TestRelay;
const receivers: Receiver[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: FAST_SCHEDULE, deliveryTimeoutMs: 1500 }, { workerPollMs: 20 });
});
afterAll(async () => {
  await relay.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

async function receiver(respond?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const started = await startReceiver(respond);
  receivers.push(started);
  return started;
}


async function issuesOf(key: string, query = ''): Promise<any[]> {
  const listed = await api(relay.baseUrl, 'GET', `/v1/issues${query}`, { key });
  expect(listed.status).toBe(200);
  return listed.body.data;
}

async function issue(key: string, id: string): Promise<any> {
  const got = await api(relay.baseUrl, 'GET', `/v1/issues/${id}`, { key });
  expect(got.status).toBe(200);
  return got.body;
}

/** The statuses of these events' deliveries (one destination each), once none is still being retried. */
async function settled(key: string, ids: string[]): Promise<void> {
  await expect.poll(async () => {
    const statuses = await Promise.all(ids.map(async (id) => (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body.status));
    return statuses.every((status) => status === 'failed');
  }, POLL).toBe(true);
}

async function issueAlerts(accountId: string): Promise<{ type: string; data: any }[]> {
  return sqlRows(relay, `select type, data from notification_outbox where account_id = ? and type like 'issue.%'
                         union all
                         select e.type, (convert_from(e.body, 'UTF8')::jsonb)->'data' from event e join endpoint p on p.id = e.endpoint_id
                         where p.account_id = ? and p.kind = 'notifications' and e.type like 'issue.%'`, [accountId, accountId]);
}

describe('issues', () => {
  it('groups a destination\'s failures by kind: 5xx into one issue per destination, a 404 into another, with counts and events', async () => {
    const { key } = await signUp(relay.baseUrl);
    const failing = await receiver((request) => ({ status: request.body.toString().includes('missing') ? 404 : 503 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'shop', destination: { type: 'url', url: failing.url } });
    const second = await api(relay.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/destinations`, { key, json: { destination: { type: 'url', url: `${failing.url}/second` } } });
    expect(second.status).toBe(201);
    const ids = [await sendEvent(endpoint.url, '{"n":1}'), await sendEvent(endpoint.url, '{"n":2}'), await sendEvent(endpoint.url, '{"n":"missing"}')];
    await settled(key, ids);

    const issues = await issuesOf(key);
    const first = endpoint.destinations[0].id;
    expect(issues.map((found) => [found.destination_id, found.kind]).sort()).toEqual([[first, 'http_4xx'], [first, 'http_5xx'], [second.body.id, 'http_4xx'], [second.body.id, 'http_5xx']].sort());
    const fiveHundreds = issues.find((found) => found.destination_id === first && found.kind === 'http_5xx');
    expect(fiveHundreds).toMatchObject({
      id: expect.stringMatching(/^iss_/), endpoint_id: endpoint.id, title: 'Receiver answered 5xx', status: 'open', resolved_by: null,
      failure_count: 6, event_count: 2, reopen_count: 0, last_status: 503, last_error: null,
      events: { total: 2, delivered: 0, failing: 2, pending: 0 }, retry: null, acknowledged_at: null, resolved_at: null,
    });
    expect([ids[0], ids[1]]).toContain(fiveHundreds.last_event_id);
    // most recently seen first
    expect(issues.map((found) => found.last_seen_at)).toEqual([...issues.map((found) => found.last_seen_at)].sort().reverse());

    const events = await api(relay.baseUrl, 'GET', `/v1/issues/${fiveHundreds.id}/events?limit=1`, { key });
    expect(events.status).toBe(200);
    expect(events.body.data).toEqual([expect.objectContaining({ delivery_status: 'failed', attempt_count: 3, last_status: 503, last_error: null, type: null })]);
    const rest = await api(relay.baseUrl, 'GET', `/v1/issues/${fiveHundreds.id}/events?cursor=${events.body.next_cursor}`, { key });
    expect([...events.body.data, ...rest.body.data].map((event: any) => event.event_id).sort()).toEqual([ids[0], ids[1]].sort());
    expect(rest.body.next_cursor).toBeNull();

    // filters
    expect((await issuesOf(key, `?kind=http_4xx&destination_id=${first}`)).map((found) => found.kind)).toEqual(['http_4xx']);
    expect(await issuesOf(key, '?status=resolved')).toEqual([]);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/issues?status=closed', { key }), 400, 'validation_failed');
  });

  it('names why no answer came: a closed port is connection_refused, a slow receiver a timeout, a throwing transformation a transformation_error', async () => {
    const { key } = await signUp(relay.baseUrl);
    const slow = await receiver(() => ({ status: 200, delayMs: 4000 }));
    const refused = await createEndpoint(relay.baseUrl, key, { name: 'refused', destination: { type: 'url', url: `http://127.0.0.1:${await closedPort()}/hooks` } });
    const timedOut = await createEndpoint(relay.baseUrl, key, { name: 'slow', destination: { type: 'url', url: slow.url } });
    const transformed = await createEndpoint(relay.baseUrl, key, {
      name: 'transformed', destination: { type: 'url', url: slow.url }, transformation: { code: `addHandler('transform', (request) => { throw new TypeError('no shape'); });` },
    });
    const ids = [await sendEvent(refused.url, '{}'), await sendEvent(timedOut.url, '{}'), await sendEvent(transformed.url, '{}')];
    await settled(key, ids);
    const issues = await issuesOf(key);
    expect(Object.fromEntries(issues.map((found) => [found.endpoint_id, [found.kind, found.title]]))).toEqual({
      [refused.id]: ['connection_refused', 'Connection refused'],
      [timedOut.id]: ['timeout', 'Timed out'],
      [transformed.id]: ['transformation_error', 'Transformation failed'],
    });
    expect(issues.find((found) => found.kind === 'transformation_error').last_error).toMatch(/^transformation_failed: .*no shape/);
    // the kind is kept with each attempt too
    expect((await sqlRows(relay, `select distinct failure_kind from attempt where event_id = any(?::text[]) order by 1`, [`{${ids.join(',')}}`])).map((row) => row.failure_kind))
      .toEqual(['connection_refused', 'timeout', 'transformation_error']);
  });

  it('acknowledge and resolve are idempotent; a failure reopens a resolved issue with one issue.reopened; flapping within the throttle alerts no more', async () => {
    const { key, accountId } = await signUp(relay.baseUrl);
    // with a notification URL (without one, the notifier drops the account's notifications)
    const inbox = await receiver();
    expect((await api(relay.baseUrl, 'PUT', '/v1/account/notifications', { key, json: { url: inbox.url } })).status).toBe(200);
    const failing = await receiver(() => ({ status: 500 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'flappy', destination: { type: 'url', url: failing.url } });
    await settled(key, [await sendEvent(endpoint.url, '{}')]);
    const [opened] = await issuesOf(key);
    expect(await issueAlerts(accountId)).toEqual([{ type: 'issue.opened', data: expect.objectContaining({ issue_id: opened.id, kind: 'http_5xx', title: 'Receiver answered 5xx', failure_count: 1 }) }]);

    const acknowledged = await api(relay.baseUrl, 'POST', `/v1/issues/${opened.id}/acknowledge`, { key });
    expect(acknowledged.body).toMatchObject({ status: 'acknowledged', acknowledged_at: expect.any(String) });
    expect((await api(relay.baseUrl, 'POST', `/v1/issues/${opened.id}/acknowledge`, { key })).body.acknowledged_at).toBe(acknowledged.body.acknowledged_at);
    const resolved = await api(relay.baseUrl, 'POST', `/v1/issues/${opened.id}/resolve`, { key });
    expect(resolved.body).toMatchObject({ status: 'resolved', resolved_by: 'user', resolved_at: expect.any(String) });
    expect((await api(relay.baseUrl, 'POST', `/v1/issues/${opened.id}/resolve`, { key })).body.resolved_at).toBe(resolved.body.resolved_at);
    expect(await issuesOf(key)).toEqual([]);
    expect((await issuesOf(key, '?status=resolved')).map((found) => found.id)).toEqual([opened.id]);

    // an hour after its alert, a new failure reopens it and alerts once
    await sqlRows(relay, `update issue set last_alerted_at = now() - interval '61 minutes' where id = ?`, [opened.id]);
    await settled(key, [await sendEvent(endpoint.url, '{}')]);
    const reopened = await issue(key, opened.id);
    expect(reopened).toMatchObject({ status: 'open', reopen_count: 1, resolved_by: null, resolved_at: null, acknowledged_at: null, event_count: 2 });
    // flapping: resolved and failing again and again within the hour
    for (let cycle = 0; cycle < 4; cycle += 1) {
      await api(relay.baseUrl, 'POST', `/v1/issues/${opened.id}/resolve`, { key });
      await settled(key, [await sendEvent(endpoint.url, '{}')]);
    }
    expect((await issue(key, opened.id))).toMatchObject({ status: 'open', reopen_count: 5, event_count: 6 });
    expect((await issueAlerts(accountId)).map((alert) => alert.type).sort()).toEqual(['issue.opened', 'issue.reopened']);
    // and each went out to the notification URL once
    const sent = () => inbox.requests.map((request) => JSON.parse(request.body.toString()).type as string).filter((type) => type.startsWith('issue.')).sort();
    await expect.poll(sent, POLL).toEqual(['issue.opened', 'issue.reopened']);
  });

  it('retry after the receiver is fixed delivers every covered event, and the sweep resolves the issue (resolved_by auto)', async () => {
    const { key } = await signUp(relay.baseUrl);
    const flaky = await receiver(() => ({ status: 502 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'fixed later', destination: { type: 'url', url: flaky.url } });
    const ids = await Promise.all([1, 2, 3, 4].map((n) => sendEvent(endpoint.url, `{"n":${n}}`)));
    await settled(key, ids);
    const [open] = await issuesOf(key);
    expect(open.events).toEqual({ total: 4, delivered: 0, failing: 4, pending: 0 });

    flaky.respond = () => ({ status: 200 });
    const retried = await api(relay.baseUrl, 'POST', `/v1/issues/${open.id}/retry`, { key });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ queued: 4, issue: { id: open.id, retry: { requested_at: expect.any(String), queued: 4 } } });
    await expect.poll(async () => (await issue(key, open.id)).events.delivered, POLL).toBe(4);
    await expect.poll(async () => (await issue(key, open.id)).status, POLL).toBe('resolved');
    expect(await issue(key, open.id)).toMatchObject({ resolved_by: 'auto', resolved_at: expect.any(String), events: { total: 4, delivered: 4, failing: 0, pending: 0 } });
    const delivered = flaky.requests.filter((request) => request.headers['x-hook-attempt'] === '4');
    expect(delivered.map((request) => request.headers['x-hook-event-id']).sort()).toEqual([...ids].sort());
  });

  it('an issue of a destination that is deleted resolves on its own (nothing is left to retry)', async () => {
    const { key } = await signUp(relay.baseUrl);
    const healthy = await receiver();
    const failing = await receiver(() => ({ status: 500 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'gone', destination: { type: 'url', url: healthy.url } });
    const doomed = (await api(relay.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/destinations`, { key, json: { destination: { type: 'url', url: failing.url } } })).body;
    await sendEvent(endpoint.url, '{"n":1}');
    await expect.poll(async () => (await issuesOf(key)).map((found) => found.destination_id), POLL).toEqual([doomed.id]);
    const [opened] = await issuesOf(key);
    expect((await api(relay.baseUrl, 'DELETE', `/v1/destinations/${doomed.id}`, { key })).status).toBe(204);
    await expect.poll(async () => (await issue(key, opened.id)).status, POLL).toBe('resolved');
    expect((await issue(key, opened.id)).resolved_by).toBe('auto');
  });

  it('another account never sees the issue; an unknown id is issue_not_found', async () => {
    const owner = await signUp(relay.baseUrl);
    const failing = await receiver(() => ({ status: 500 }));
    const endpoint = await createEndpoint(relay.baseUrl, owner.key, { name: 'mine', destination: { type: 'url', url: failing.url } });
    await settled(owner.key, [await sendEvent(endpoint.url, '{}')]);
    const [mine] = await issuesOf(owner.key);
    const other = await signUp(relay.baseUrl);
    expect(await issuesOf(other.key, '?status=open,acknowledged,resolved')).toEqual([]);
    for (const [method, path] of [['GET', ''], ['GET', '/events'], ['POST', '/acknowledge'], ['POST', '/resolve'], ['POST', '/retry']] as const) {
      const problem = expectProblem(await api(relay.baseUrl, method, `/v1/issues/${mine.id}${path}`, { key: other.key }), 404, 'issue_not_found');
      expect(problem.fix).toMatch(/hook issues list/);
    }
    expect((await issue(owner.key, mine.id)).status).toBe('open');
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/issues/iss_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', { key: owner.key }), 404, 'issue_not_found');
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/issues/nope', { key: owner.key }), 400, 'validation_failed');
  });

  it('the account\'s notifications endpoint and cli destinations make no issues', async () => {
    const { key, accountId } = await signUp(relay.baseUrl);
    const inbox = await receiver(() => ({ status: 500 }));
    expect((await api(relay.baseUrl, 'PUT', '/v1/account/notifications', { key, json: { url: inbox.url } })).status).toBe(200);
    const failing = await receiver(() => ({ status: 500 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'user', destination: { type: 'url', url: failing.url } });
    const cli = await createEndpoint(relay.baseUrl, key, { name: 'cli', destination: { type: 'cli' } });
    await sendEvent(cli.url, '{}');
    await settled(key, [await sendEvent(endpoint.url, '{}')]);
    // the issue.opened notification went to the failing inbox, and its failures were recorded
    await expect.poll(async () => (await sqlRows(relay, `
      select count(*)::int as n from attempt a join endpoint p on p.id = (select endpoint_id from event where id = a.event_id)
      where a.account_id = ? and p.kind = 'notifications' and a.response_status = 500`, [accountId]))[0].n, POLL).toBeGreaterThan(0);
    const issues = await sqlRows(relay, 'select endpoint_id from issue where account_id = ?', [accountId]);
    expect(issues).toEqual([{ endpoint_id: endpoint.id }]);
  });
});
