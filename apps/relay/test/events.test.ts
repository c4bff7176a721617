import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createEndpoint, expectProblem, readJson, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
let key: string;
let orders: { id: string; url: string };
let refunds: { id: string; url: string };
const sent: { id: string; endpoint: string; type: string | null }[] = [];

async function send(endpoint: { id: string; url: string }, body: string, headers: Record<string, string> = {}): Promise<void> {
  const response = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const accepted = await readJson(response);
  sent.push({ id: accepted.id, endpoint: endpoint.id, type: headers['x-event-type'] ?? (JSON.parse(body).type as string | undefined) ?? null });
}

beforeAll(async () => {
  relay = await startTestRelay();
  ({ key } = await signUp(relay.baseUrl));
  orders = await createEndpoint(relay.baseUrl, key, { name: 'orders' });
  refunds = await createEndpoint(relay.baseUrl, key, { name: 'refunds', destination: { type: 'url', url: 'http://127.0.0.1:9/unused' } });
  for (let i = 0; i < 4; i++) await send(orders, JSON.stringify({ type: i % 2 ? 'order.paid' : 'order.created', i }));
  for (let i = 0; i < 3; i++) await send(refunds, JSON.stringify({ i }), { 'x-event-type': 'refund.issued' });
});
afterAll(async () => relay.close());

describe('event history', () => {
  it('lists newest first without bodies', async () => {
    const response = await api(relay.baseUrl, 'GET', '/v1/events?limit=100', { key });
    expect(response.status).toBe(200);
    expect(response.body.data.map((event: { id: string }) => event.id)).toEqual(sent.map((event) => event.id).reverse());
    const first = response.body.data[0];
    expect(first).not.toHaveProperty('body');
    expect(first).toMatchObject({ endpoint_id: refunds.id, type: 'refund.issued', method: 'POST', status: 'pending', attempt_count: 0 });
    expect(first.received_at).toMatch(/Z$/);
  });

  it('filters by endpoint, type and status, and pages', async () => {
    const byEndpoint = await api(relay.baseUrl, 'GET', `/v1/events?endpoint_id=${orders.id}`, { key });
    expect(byEndpoint.body.data).toHaveLength(4);
    expect(byEndpoint.body.data.every((event: { endpoint_id: string }) => event.endpoint_id === orders.id)).toBe(true);

    const byType = await api(relay.baseUrl, 'GET', '/v1/events?type=order.paid', { key });
    expect(byType.body.data.map((event: { id: string }) => event.id)).toEqual(sent.filter((event) => event.type === 'order.paid').map((event) => event.id).reverse());

    expect((await api(relay.baseUrl, 'GET', '/v1/events?status=pending', { key })).body.data).toHaveLength(7);
    expect((await api(relay.baseUrl, 'GET', '/v1/events?status=delivered', { key })).body.data).toHaveLength(0);
    const badStatus = expectProblem(await api(relay.baseUrl, 'GET', '/v1/events?status=done', { key }), 400, 'validation_failed');
    expect(badStatus.errors[0]).toEqual({ field: 'query.status', message: 'must be one of: pending, delivered, retrying, failed, filtered, or several separated by commas (failed,retrying)' });

    const page1 = await api(relay.baseUrl, 'GET', '/v1/events?limit=5', { key });
    const page2 = await api(relay.baseUrl, 'GET', `/v1/events?limit=5&cursor=${page1.body.next_cursor}`, { key });
    expect(page1.body.data).toHaveLength(5);
    expect(page2.body.data).toHaveLength(2);
    expect(page2.body.next_cursor).toBeNull();
    expect([...page1.body.data, ...page2.body.data].map((event: { id: string }) => event.id)).toEqual(sent.map((event) => event.id).reverse());
  });

  it('schedules URL destinations now and leaves CLI destinations waiting for a listener', async () => {
    const list = (await api(relay.baseUrl, 'GET', '/v1/events?limit=100', { key })).body.data;
    for (const event of list) {
      if (event.endpoint_id === refunds.id) expect(event.next_attempt_at).toBe(event.received_at);
      else expect(event.next_attempt_at).toBeNull();
    }
  });

  it('returns the whole record for one event', async () => {
    const response = await api(relay.baseUrl, 'GET', `/v1/events/${sent[0]!.id}`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: sent[0]!.id,
      endpoint_id: orders.id,
      type: 'order.created',
      method: 'POST',
      path: '',
      query: '',
      body: '{"type":"order.created","i":0}',
      body_encoding: 'utf8',
      content_type: 'application/json',
      size: 30,
      status: 'pending',
      attempt_count: 0,
      next_attempt_at: null,
      attempts: [],
    });
    expect(response.body.headers['content-type']).toBe('application/json');
    expect(response.body).not.toHaveProperty('body_truncated');
  });

  it('returns only the start of a body with body_limit, never half a UTF-8 character', async () => {
    // "é" is two bytes: 9 bytes of "aéééé…" end inside the fifth é, so 8 come back, still text.
    const text = `a${'é'.repeat(1000)}`;
    const accepted = await readJson(await fetch(orders.url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: text }));
    const start = await api(relay.baseUrl, 'GET', `/v1/events/${accepted.id}?body_limit=10`, { key });
    expect(start.body).toMatchObject({ body: 'aéééé', body_encoding: 'utf8', body_truncated: true, size: 2001 });
    expect((await api(relay.baseUrl, 'GET', `/v1/events/${accepted.id}?body_limit=9`, { key })).body).toMatchObject({ body: 'aéééé', body_truncated: true });
    expect((await api(relay.baseUrl, 'GET', `/v1/events/${accepted.id}?body_limit=2001`, { key })).body).toMatchObject({ body: text, body_truncated: false });
    expect((await api(relay.baseUrl, 'GET', `/v1/events/${accepted.id}`, { key })).body.body).toBe(text);
    expectProblem(await api(relay.baseUrl, 'GET', `/v1/events/${accepted.id}?body_limit=-1`, { key }), 400, 'validation_failed');
  });

  it('answers 404 for unknown events and endpoints', async () => {
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/events/evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', { key }), 404, 'event_not_found');
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/events?endpoint_id=ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', { key }), 404, 'endpoint_not_found');
    expectProblem(await api(relay.baseUrl, 'GET', '/v1/events/ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', { key }), 400, 'validation_failed');
  });
});
