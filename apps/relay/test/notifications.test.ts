import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { verifyWebhook } from '@hook/client';
import { enqueueNotification, AttemptRecorder, claimForListener } from '@hook/db';
import { newId } from '@hook/core';
import { startReceiver, type Receiver, type ReceivedRequest } from '@hook/test/receiver';
import { api, createEndpoint, expectProblem, readJson, sendEvent, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';
import { workerCaughtUp } from '@hook/test/signals';

const FAST_SCHEDULE = [30, 30, 30, 30, 30, 30];

let relay: TestRelay;
const receivers: Receiver[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: FAST_SCHEDULE, deliveryTimeoutMs: 1000 }, { workerPollMs: 20 });
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

/** A new account whose notifications go to a new receiver; returns its key, id, receiver and notification secret. */
async function notifiedAccount(respond?: Parameters<typeof startReceiver>[0]) {
  const { key, accountId } = await signUp(relay.baseUrl);
  const inbox = await receiver(respond);
  const set = await api(relay.baseUrl, 'PUT', '/v1/account/notifications', { key, json: { url: inbox.url } });
  expect(set.status).toBe(200);
  return { key, accountId, inbox, secret: set.body.secret as string };
}

function notificationsOf(inbox: Receiver, type: string): { request: ReceivedRequest; body: any }[] {
  return inbox.requests.map((request) => ({ request, body: JSON.parse(request.body.toString()) })).filter((entry) => entry.body.type === type);
}

/** The first notification of `type` the inbox received, once there is one. */
function waitForNotification(inbox: Receiver, type: string, timeout = 10_000) {
  return vi.waitFor(() => {
    const [found] = notificationsOf(inbox, type);
    expect(found, `a ${type} notification; got ${inbox.requests.map((r) => r.body.toString()).join(', ')}`).toBeDefined();
    return found!;
  }, { timeout, interval: 20 });
}

/**
 * Resolves once what the account's notifications so far led to has happened: its outbox
 * is drained (each row became an event, or was dropped, in the drain's transaction), and
 * the worker has claimed since and has no attempt in progress, so every notification
 * event that was due has been sent and its answer recorded.
 */
async function notificationsSettled(accountId: string): Promise<void> {
  await vi.waitFor(async () => expect(await sqlRows(relay, 'select id from notification_outbox where account_id = ?', [accountId])).toEqual([]), { timeout: 10_000, interval: 20 });
  await workerCaughtUp(relay.worker);
}

/** The answer to a WebSocket upgrade of GET /v1/stream that the relay refuses. */
function streamRefusal(query: string, key: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${relay.baseUrl.replace('http', 'ws')}/v1/stream?${query}`, { headers: { authorization: `Bearer ${key}` } });
    socket.on('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    socket.on('open', () => {
      socket.close();
      reject(new Error('the upgrade was accepted'));
    });
    socket.on('error', () => undefined);
  });
}

async function listed(key: string, query = ''): Promise<any[]> {
  const response = await api(relay.baseUrl, 'GET', `/v1/account/notifications/events${query}`, { key });
  expect(response.status).toBe(200);
  return response.body.data;
}

/** `read()`'s value once `accept` takes it. */
function waitFor<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string, timeout = 10_000): Promise<T> {
  return vi.waitFor(async () => {
    const value = await read();
    expect(accept(value), `${what}: ${JSON.stringify(value)}`).toBe(true);
    return value;
  }, { timeout, interval: 20 });
}

describe('account notifications', () => {
  it('sets, shows and clears the notification URL', async () => {
    const { key } = await signUp(relay.baseUrl);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account/notifications', { key }), 404, 'notifications_not_configured');
    const set = await api(relay.baseUrl, 'PUT', '/v1/account/notifications', { key, json: { url: 'https://example.com/a' } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ url: 'https://example.com/a', status: 'active' });
    expect(set.body.secret).toMatch(/^whsec_/);
    const changed = await api(relay.baseUrl, 'PUT', '/v1/account/notifications', { key, json: { url: 'https://example.com/b' } });
    expect(changed.body).toMatchObject({ url: 'https://example.com/b', secret: set.body.secret, created_at: set.body.created_at });
    expect((await api(relay.baseUrl, 'GET', '/v1/account/notifications', { key })).body).toEqual(changed.body);
    // The hidden endpoint's secret is stored encrypted like any other.
    const stored = await relay.orm.em.fork().getConnection().execute<{ secret: string }[]>(`select d.secret from endpoint p join destination d on d.endpoint_id = p.id where p.kind = 'notifications' and d.url = 'https://example.com/b'`);
    expect(stored.map((row: { secret: string }) => row.secret)).toEqual([expect.stringMatching(/^enc:v1:[0-9a-f]{8}:/)]);
    expectProblem(await api(relay.baseUrl, 'PUT', '/v1/account/notifications', { key, json: { url: 'ftp://example.com' } }), 400, 'validation_failed');
    expect((await api(relay.baseUrl, 'DELETE', '/v1/account/notifications', { key })).status).toBe(204);
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account/notifications', { key }), 404, 'notifications_not_configured');
    expectProblem(await api(relay.baseUrl, 'DELETE', '/v1/account/notifications', { key }), 404, 'notifications_not_configured');
  });

  it('lets only admins set or clear the URL and read its secret; any member reads the URL and status', async () => {
    const { key } = await notifiedAccount();
    const added = await api(relay.baseUrl, 'POST', '/v1/members', { key, json: { email: 'dev@example.com', role: 'member' } });
    expect(added.status).toBe(201);
    const memberKey = added.body.api_key as string;
    expectProblem(await api(relay.baseUrl, 'PUT', '/v1/account/notifications', { key: memberKey, json: { url: 'https://example.com/x' } }), 403, 'admin_required');
    expectProblem(await api(relay.baseUrl, 'DELETE', '/v1/account/notifications', { key: memberKey }), 403, 'admin_required');
    const asMember = await api(relay.baseUrl, 'GET', '/v1/account/notifications', { key: memberKey });
    expect(asMember.status).toBe(200);
    // Whoever holds the secret can forge the account's notifications: a member sees the URL and status, not the secret.
    expect(asMember.body).toMatchObject({ url: expect.stringMatching(/^http/), status: 'active', secret: null });
    expect((await api(relay.baseUrl, 'GET', '/v1/account/notifications', { key })).body.secret).toMatch(/^whsec_/);
    expect((await api(relay.baseUrl, 'GET', '/v1/account/notifications/events', { key: memberKey })).status).toBe(200);
  });

  it('keeps one notification endpoint per account when set concurrently', async () => {
    const { key, accountId } = await signUp(relay.baseUrl);
    const answers = await Promise.all([1, 2, 3, 4, 5].map((n) => api(relay.baseUrl, 'PUT', '/v1/account/notifications', { key, json: { url: `https://example.com/${n}` } })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    const rows = await sqlRows(relay, "select id from endpoint where account_id = ? and kind = 'notifications' and deleted_at is null", [accountId]);
    expect(rows).toHaveLength(1);
  });

  it('hides the notification endpoint from the endpoints API, ingest and listen', async () => {
    const { key, accountId } = await notifiedAccount();
    const mine = await createEndpoint(relay.baseUrl, key, { name: 'mine' });
    const [hidden] = await sqlRows(relay, "select id, ingest_id from endpoint where account_id = ? and kind = 'notifications'", [accountId]);
    const list = await api(relay.baseUrl, 'GET', '/v1/endpoints', { key });
    expect(list.body.data.map((endpoint: any) => endpoint.id)).toEqual([mine.id]);
    expectProblem(await api(relay.baseUrl, 'GET', `/v1/endpoints/${hidden.id}`, { key }), 404, 'endpoint_not_found');
    expectProblem(await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${hidden.id}`, { key, json: { name: 'x' } }), 404, 'endpoint_not_found');
    expectProblem(await api(relay.baseUrl, 'DELETE', `/v1/endpoints/${hidden.id}`, { key }), 404, 'endpoint_not_found');
    expectProblem(await api(relay.baseUrl, 'GET', `/v1/endpoints/${hidden.id}/secret`, { key }), 404, 'endpoint_not_found');
    expectProblem(await api(relay.baseUrl, 'GET', `/v1/events?endpoint_id=${hidden.id}`, { key }), 404, 'endpoint_not_found');
    const ingest = await fetch(`${relay.baseUrl}/v1/ingest/${hidden.ingest_id}`, { method: 'POST', body: '{}' });
    expect(ingest.status).toBe(404);
    expect((await readJson(ingest)).code).toBe('ingest_not_found');
    expect(await streamRefusal(`mode=listen&endpoint_id=${hidden.id}`, key)).toMatchObject({ status: 404, body: { code: 'endpoint_not_found' } });
  });

  it('sends a signed event.failed when a user endpoint exhausts its retries, listed with its attempt', async () => {
    const { key, accountId, inbox, secret } = await notifiedAccount();
    const failing = await receiver(() => ({ status: 500 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'failing', destination: { type: 'url', url: failing.url } });
    const eventId = await sendEvent(endpoint.url, '{"n":1}');
    const { request, body } = await waitForNotification(inbox, 'event.failed');
    expect(failing.requests).toHaveLength(7);
    // Signed with the notification secret, like any delivery.
    const verified = verifyWebhook(request.body, request.headers as Record<string, string>, secret);
    expect(verified.id).toBe(body.id);
    expect(request.headers['content-type']).toBe('application/json');
    expect(body).toMatchObject({ type: 'event.failed', data: { event_id: eventId, endpoint_id: endpoint.id, attempts: 7, last_status: 500 } });
    expect(body.id).toMatch(/^evt_/);
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(body.data).not.toHaveProperty('last_error');
    // The first failure opened an issue (docs/issues.md), which is notified too: once, for all seven failures.
    const { body: opened } = await waitForNotification(inbox, 'issue.opened');
    expect(opened).toMatchObject({ type: 'issue.opened', data: { endpoint_id: endpoint.id, destination_id: endpoint.destinations[0].id, kind: 'http_5xx', event_id: eventId, last_status: 500, failure_count: 1 } });
    // Exactly one of each: once all that was queued has been sent.
    await notificationsSettled(accountId);
    expect(notificationsOf(inbox, 'event.failed')).toHaveLength(1);
    expect(notificationsOf(inbox, 'issue.opened')).toHaveLength(1);
    expect(inbox.requests).toHaveLength(2);

    const events = await waitFor(() => listed(key), (data) => data.length === 2 && data.every((event) => event.status === 'delivered'), 'notifications delivered');
    expect(events.map((event) => event.type).sort()).toEqual(['event.failed', 'issue.opened']);
    expect(events.find((event) => event.type === 'event.failed')).toMatchObject({ id: body.id, type: 'event.failed', method: 'POST', content_type: 'application/json', attempt_count: 1 });
    expect(events.find((event) => event.type === 'issue.opened')).toMatchObject({ id: opened.id, attempt_count: 1 });
    const detail = await api(relay.baseUrl, 'GET', `/v1/events/${body.id}`, { key });
    expect(detail.body.attempts).toHaveLength(1);
    expect(detail.body.attempts[0]).toMatchObject({ trigger: 'auto', response_status: 200 });
    expect(JSON.parse(detail.body.body)).toEqual(body);
    // GET /v1/events shows the user's events, not the notifications.
    const userEvents = (await api(relay.baseUrl, 'GET', '/v1/events', { key })).body.data;
    expect(userEvents.map((event: any) => event.id)).toEqual([eventId]);
    expect(await listed(key, '?type=event.failed')).toHaveLength(1);
    expect(await listed(key, '?type=issue.opened')).toHaveLength(1);
    expect(await listed(key, '?type=plan.changed')).toHaveLength(0);

    // Replay works on a notification like on any event.
    const replayed = await api(relay.baseUrl, 'POST', `/v1/events/replay/${body.id}`, { key, json: {} });
    expect(replayed.status).toBe(200);
    expect(replayed.body.attempts.map((attempt: any) => attempt.trigger)).toEqual(['auto', 'replay']);
    expect(inbox.requests.filter((r) => r.headers['webhook-id'] === body.id)).toHaveLength(2);
  });

  it('sends endpoint.disabled when a user endpoint answers 410', async () => {
    const { key, inbox } = await notifiedAccount();
    const gone = await receiver(() => ({ status: 410 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'gone', destination: { type: 'url', url: gone.url } });
    await sendEvent(endpoint.url, '{"n":2}');
    const { body } = await waitForNotification(inbox, 'endpoint.disabled');
    expect(body.data).toEqual({ endpoint_id: endpoint.id, reason: 'gone_410', disabled_at: expect.stringMatching(/Z$/) });
    const after = await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key });
    expect(after.body.status).toBe('disabled');
    expect(body.data.disabled_at).toBe(after.body.updated_at);
  });

  it('retries a notification its receiver refused, like any event', async () => {
    // The 410 disables the endpoint and also opens an issue (http_4xx): two notifications. The receiver refuses
    // endpoint.disabled twice and takes the issue.opened at once, so each one's attempts are known.
    let refused = 0;
    const { key, inbox } = await notifiedAccount((request) => ({ status: JSON.parse(request.body.toString()).type === 'endpoint.disabled' && refused++ < 2 ? 503 : 200 }));
    const gone = await receiver(() => ({ status: 410 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'gone', destination: { type: 'url', url: gone.url } });
    await sendEvent(endpoint.url, '{}');
    await inbox.waitFor(4);
    const notifications = await waitFor(() => listed(key), (data) => data.length === 2 && data.every((event) => event.status === 'delivered'), 'notifications delivered');
    const disabled = notifications.find((event) => event.type === 'endpoint.disabled');
    const opened = notifications.find((event) => event.type === 'issue.opened');
    expect(disabled.attempt_count).toBe(3);
    expect(opened.attempt_count).toBe(1);
    // Every try of the refused one carries its one id.
    expect(notificationsOf(inbox, 'endpoint.disabled').map(({ request }) => request.headers['webhook-id'])).toEqual([disabled.id, disabled.id, disabled.id]);
    expect(notificationsOf(inbox, 'issue.opened').map(({ request }) => request.headers['webhook-id'])).toEqual([opened.id]);
  });

  it('disables the notification URL when it answers 410, without notifying about it', async () => {
    const { key, accountId, inbox } = await notifiedAccount(() => ({ status: 410 }));
    await relay.orm.em.fork().transactional((em) => enqueueNotification(em, { accountId, type: 'plan.changed', data: { from_plan: 'free', to_plan: 'pro', changed_at: new Date().toISOString() } }));
    await inbox.waitFor(1);
    await waitFor(async () => (await api(relay.baseUrl, 'GET', '/v1/account/notifications', { key })).body.status, (status) => status === 'disabled', 'notification URL disabled');
    await notificationsSettled(accountId);
    expect(inbox.requests).toHaveLength(1);
    expect(await sqlRows(relay, 'select * from notification_outbox where account_id = ?', [accountId])).toHaveLength(0);
    // Setting the URL again makes it active.
    inbox.respond = () => ({ status: 200 });
    const again = await api(relay.baseUrl, 'PUT', '/v1/account/notifications', { key, json: { url: inbox.url } });
    expect(again.body.status).toBe('active');
  });

  it('delivers plan.changed and usage.threshold notifications queued with enqueueNotification in a transaction, not when it rolls back', async () => {
    const { key, accountId, inbox, secret } = await notifiedAccount();
    const changedAt = new Date().toISOString();
    await relay.orm.em.fork().transactional(async (em) => {
      await enqueueNotification(em, { accountId, type: 'usage.threshold', data: { month: '2026-11', threshold: 0.8, events_accepted: 8000, events_per_month: 10_000 } });
      await enqueueNotification(em, { accountId, type: 'plan.changed', data: { from_plan: 'free', to_plan: 'pro', changed_at: changedAt } });
    });
    // A transaction that rolls back sends nothing.
    await relay.orm.em.fork().transactional(async (em) => {
      await enqueueNotification(em, { accountId, type: 'plan.changed', data: { from_plan: 'pro', to_plan: 'enterprise', changed_at: changedAt } });
      throw new Error('rolled back');
    }).catch(() => undefined);
    await inbox.waitFor(2);
    const usage = await waitForNotification(inbox, 'usage.threshold');
    expect(usage.body).toMatchObject({ account_id: accountId, data: { month: '2026-11', threshold: 0.8, events_accepted: 8000, events_per_month: 10_000 } });
    const plan = await waitForNotification(inbox, 'plan.changed');
    expect(plan.body.data).toEqual({ from_plan: 'free', to_plan: 'pro', changed_at: changedAt });
    verifyWebhook(plan.request.body, plan.request.headers as Record<string, string>, secret);
    await notificationsSettled(accountId);
    expect(inbox.requests).toHaveLength(2);
    // Queued in order, so listed in order (newest first).
    expect((await listed(key)).map((event) => event.type)).toEqual(['plan.changed', 'usage.threshold']);
    // Notifications do not count toward the monthly allowance.
    const usageRows = await sqlRows(relay, 'select coalesce(sum(events_accepted), 0)::int as n from account_usage where account_id = ?', [accountId]);
    expect(usageRows[0].n).toBe(0);
  });

  it('queues one event.failed when a listener\'s answer makes a delivery failed, however often it is recorded', async () => {
    const { key, accountId } = await signUp(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'cli' });
    const eventId = await sendEvent(endpoint.url, '{}');
    const [claimed] = (await claimForListener(relay.orm, { destinationId: endpoint.destinations[0].id, accountId, fromEventId: '', limit: 1, leaseMs: 60_000 })).deliveries;
    expect(claimed!.id).toBe(eventId);
    const answer = () => ({
      delivery: { ...claimed!, autoAttempts: 6 },
      attempt: { id: newId('attempt'), startedAt: new Date(), durationMs: 3, responseStatus: 502, responseBody: null, error: null, failureKind: 'http_5xx' as const },
      next: { status: 'failed' as const, autoAttempts: 7, nextAttemptAt: null },
      health: 'failed' as const,
    });
    // The same answer recorded twice (as a lost lease would): the delivery became failed once.
    const recorder = new AttemptRecorder(relay.orm);
    expect(await recorder.record(answer())).toEqual({ held: true, eventStatus: 'failed' });
    expect(await recorder.record(answer())).toEqual({ held: false, eventStatus: null });
    const queued = await sqlRows(relay, 'select type, data from notification_outbox where account_id = ?', [accountId]);
    expect(queued).toEqual([{ type: 'event.failed', data: { event_id: eventId, endpoint_id: endpoint.id, destination_id: endpoint.destinations[0].id, attempts: 1, last_status: 502 } }]);
  });

  it('sends plan.changed when the plan changes', async () => {
    const { key, accountId, inbox } = await notifiedAccount();
    const changed = await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'pro' } });
    expect(changed.status).toBe(200);
    const { body } = await waitForNotification(inbox, 'plan.changed');
    expect(body.data).toEqual({ from_plan: 'free', to_plan: 'pro', changed_at: changed.body.plan_history[0].changed_at });
    // Asking for the plan it is on changes nothing, and notifies nothing.
    await api(relay.baseUrl, 'POST', '/v1/account/plan', { key, json: { plan: 'pro' } });
    await notificationsSettled(accountId);
    expect(notificationsOf(inbox, 'plan.changed')).toHaveLength(1);
  });

  it('sends usage.threshold at 80% and 100% of the monthly events, once each', async () => {
    const { key, accountId, inbox } = await notifiedAccount();
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'metered' });
    const setUsage = (n: number) => sqlRows(relay, `
      insert into account_usage (account_id, month, events_accepted) values (?, date_trunc('month', now() at time zone 'UTC')::date, ?)
      on conflict (account_id, month) do update set events_accepted = excluded.events_accepted`, [accountId, n]);
    await setUsage(7_998);
    await sendEvent(endpoint.url, '{}'); // 7,999: below 80%
    await sendEvent(endpoint.url, '{}'); // 8,000: 80%
    await sendEvent(endpoint.url, '{}');
    const eighty = await waitForNotification(inbox, 'usage.threshold');
    const month = new Date().toISOString().slice(0, 7);
    expect(eighty.body.data).toEqual({ month, threshold: 0.8, events_accepted: 8_000, events_per_month: 10_000 });
    await setUsage(9_999);
    await sendEvent(endpoint.url, '{}'); // 10,000: 100%
    expect((await fetch(endpoint.url, { method: 'POST', body: '{}' })).status).toBe(429);
    await waitFor(async () => notificationsOf(inbox, 'usage.threshold').length, (n) => n >= 2, 'the 100% notification');
    await notificationsSettled(accountId);
    expect(notificationsOf(inbox, 'usage.threshold').map((entry) => entry.body.data)).toEqual([
      { month, threshold: 0.8, events_accepted: 8_000, events_per_month: 10_000 },
      { month, threshold: 1, events_accepted: 10_000, events_per_month: 10_000 },
    ]);
  });

  it('drops notifications of an account without a notification URL', async () => {
    const { key, accountId } = await signUp(relay.baseUrl);
    const gone = await receiver(() => ({ status: 410 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'gone', destination: { type: 'url', url: gone.url } });
    await sendEvent(endpoint.url, '{}');
    await gone.waitFor(1);
    // The 410 recorded (and endpoint.disabled queued with it), then drained: each row dropped, or made an event, in the drain's transaction.
    await waitFor(async () => (await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key })).body.status, (status) => status === 'disabled', 'endpoint disabled');
    await waitFor(() => sqlRows(relay, 'select * from notification_outbox where account_id = ?', [accountId]), (rows) => rows.length === 0, 'outbox drained');
    expect(await sqlRows(relay, 'select id from event where account_id = ? and endpoint_id <> ?', [accountId, endpoint.id])).toHaveLength(0);
    expect(await listed(key)).toEqual([]);
  });

  it('keeps notifications listed after the URL is cleared, and sends no more', async () => {
    const { key, accountId, inbox } = await notifiedAccount();
    await relay.orm.em.fork().transactional((em) => enqueueNotification(em, { accountId, type: 'plan.changed', data: { from_plan: 'free', to_plan: 'pro', changed_at: new Date().toISOString() } }));
    await inbox.waitFor(1);
    expect((await api(relay.baseUrl, 'DELETE', '/v1/account/notifications', { key })).status).toBe(204);
    await relay.orm.em.fork().transactional((em) => enqueueNotification(em, { accountId, type: 'plan.changed', data: { from_plan: 'pro', to_plan: 'free', changed_at: new Date().toISOString() } }));
    await notificationsSettled(accountId);
    expect(inbox.requests).toHaveLength(1);
    expect(await listed(key)).toHaveLength(1);
  });

  it('refuses a private notification URL unless the relay allows them', async () => {
    const strict = await startTestRelay({ allowPrivateDestinations: false });
    try {
      const { key } = await signUp(strict.baseUrl);
      expectProblem(await api(strict.baseUrl, 'PUT', '/v1/account/notifications', { key, json: { url: 'http://127.0.0.1:9/hook' } }), 422, 'destination_not_allowed');
    } finally {
      await strict.close();
    }
  });
});

describe('bulk replay', () => {
  it('replays the account\'s own failed events, not its failed notifications', async () => {
    const { key, accountId } = await notifiedAccount(() => ({ status: 500 }));
    const failing = await receiver(() => ({ status: 500 }));
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'fails', destination: { type: 'url', url: failing.url } });
    const id = await sendEvent(endpoint.url, '{"type":"x"}');
    // The event fails after its retries. Its first failure opened an issue, whose issue.opened
    // notification fails too, and so does the event.failed notification queued when it failed.
    await waitFor(
      () => sqlRows(relay, `select e.type from delivery d join event e on e.id = d.event_id
                            where d.account_id = ? and d.status = 'failed' order by e.type`, [accountId]),
      (rows) => rows.map((row) => row.type).join() === 'event.failed,issue.opened,x',
      'the event and both its notifications failed',
      20_000,
    );
    const replayed = await api(relay.baseUrl, 'POST', '/v1/events/replay', { key, json: { status: 'failed' } });
    expect(replayed.status).toBe(202);
    expect(replayed.body).toMatchObject({ replayed: 1 });
    const queued = await sqlRows(relay, "select event_id as id from delivery where account_id = ? and next_trigger = 'replay'", [accountId]);
    expect(queued.map((row) => row.id)).toEqual([id]);
  });
});
