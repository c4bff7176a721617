/**
 * `hook notifications set|get|events|clear` against a real relay and a real receiver:
 * the URL is set, a failure notification arrives signed with the secret the CLI shows,
 * and is listed; errors keep their exit codes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '@hook/client';
import { HookUser } from '../support/cli.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { api, createEndpoint, sendEvent, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let inbox: Receiver;
let failing: Receiver;
const user = new HookUser();
let key: string;

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: [20, 20, 20, 20, 20, 20], deliveryTimeoutMs: 1000 }, { workerPollMs: 20 });
  inbox = await startReceiver();
  failing = await startReceiver(() => ({ status: 500 }));
  key = (await user.json(['signup', '--api-url', relay.baseUrl])).api_key;
});

afterAll(async () => {
  await relay?.close();
  await inbox?.close();
  await failing?.close();
  user.remove();
});

describe('hook notifications', () => {
  it('get before set fails with notifications_not_configured', async () => {
    const text = await user.run(['notifications', 'get']);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain('no notification URL');
    const json = await user.run(['notifications', 'get', '--json']);
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr).code).toBe('notifications_not_configured');
  });

  it('set, then a failed event is notified, signed, and listed by events', async () => {
    const set = await user.json(['notifications', 'set', inbox.url]);
    expect(set).toMatchObject({ url: inbox.url, status: 'active', secret: expect.stringMatching(/^whsec_/) });
    const text = await user.run(['notifications', 'get']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/URL:\s+http:\/\/127\.0\.0\.1/);
    expect(text.stdout).toContain(set.secret);

    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'failing', destination: { type: 'url', url: failing.url } });
    const eventId = await sendEvent(endpoint.url, '{"order":1}');
    // Two notifications: the first failure opens an issue (issue.opened), the spent retries fail the event (event.failed).
    const deliveries = await inbox.waitFor(2, 15_000);
    const bodies = deliveries.map((received) => JSON.parse(received.body.toString()));
    expect(bodies.map((body) => body.type).sort()).toEqual(['event.failed', 'issue.opened']);
    expect(bodies.find((body) => body.type === 'issue.opened')).toMatchObject({ data: { event_id: eventId, endpoint_id: endpoint.id, kind: 'http_5xx' } });
    const delivery = deliveries[bodies.findIndex((body) => body.type === 'event.failed')];
    const notification = bodies.find((body) => body.type === 'event.failed');
    expect(notification).toMatchObject({ type: 'event.failed', data: { event_id: eventId, endpoint_id: endpoint.id } });
    expect(verifyWebhook(delivery!.body, delivery!.headers as Record<string, string>, set.secret).id).toBe(notification.id);

    let page: any;
    await expect.poll(async () => (page = await user.json(['notifications', 'events', '--type', 'event.failed'])).data[0]?.status, { timeout: 10_000 }).toBe('delivered');
    expect(page.data).toEqual([expect.objectContaining({ id: notification.id, type: 'event.failed', status: 'delivered' })]);
    expect((await user.json(['notifications', 'events', '--type', 'plan.changed'])).data).toEqual([]);
    const listed = await user.run(['notifications', 'events']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(notification.id);
    // Not among the user's own events.
    expect((await user.json(['events', 'list'])).data.map((event: any) => event.id)).toEqual([eventId]);
  });

  it('rejects an unknown --type as a usage error', async () => {
    const result = await user.run(['notifications', 'events', '--type', 'nope']);
    expect(result.code).toBe(2);
  });

  it('clear stops notifications', async () => {
    const cleared = await user.json(['notifications', 'clear']);
    expect(cleared).toEqual({ cleared: true });
    expect((await api(relay.baseUrl, 'GET', '/v1/account/notifications', { key })).status).toBe(404);
    const again = await user.run(['notifications', 'clear']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('no notification URL');
  });
});
