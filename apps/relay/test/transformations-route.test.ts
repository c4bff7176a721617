import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createEndpoint, expectProblem, sendEvent, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
let key: string;
let endpoint: { id: string; url: string };
beforeAll(async () => {
  relay = await startTestRelay();
  ({ key } = await signUp(relay.baseUrl));
  endpoint = await createEndpoint(relay.baseUrl, key, { name: 'shop' });
});
afterAll(async () => relay.close());

const test = (json: unknown, options: { key?: string } = {}) => api(relay.baseUrl, 'POST', '/v1/transformations/test', { key: options.key ?? key, json });

describe('POST /v1/transformations/test', () => {
  it('runs code against a stored JSON event: parsed body, its headers and its endpoint in the context', async () => {
    const eventId = await sendEvent(`${endpoint.url}/orders?x=1`, JSON.stringify({ order: 7, card: '4242' }), { 'content-type': 'application/json', 'x-shop-token': 'abc' });
    const code = `addHandler('transform', (request, context) => {
      console.log(context.event_id, context.endpoint.name, request.method, request.path, request.query);
      const { card, ...body } = request.body;
      context.setType('order.paid');
      return { ...request, headers: { 'x-token': request.headers['x-shop-token'] }, body };
    });`;
    const response = await test({ code, event_id: eventId });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ok: true,
      request: { method: 'POST', path: '/orders', query: 'x=1', headers: { 'x-token': 'abc' }, body: { order: 7 } },
      type: 'order.paid',
      logs: [{ level: 'log', message: `${eventId} shop POST /orders x=1` }],
    });
    // Nothing was delivered or changed: the event is as it was.
    const event = await api(relay.baseUrl, 'GET', `/v1/events/${eventId}`, { key });
    expect(event.body.attempts).toEqual([]);
  });

  it('gives a non-JSON event body as a string', async () => {
    const eventId = await sendEvent(endpoint.url, 'amount=5&name=Ada', { 'content-type': 'application/x-www-form-urlencoded' });
    const response = await test({ code: `addHandler('transform', (request) => ({ ...request, body: { raw: request.body } }));`, event_id: eventId });
    expect(response.body.ok, JSON.stringify(response.body)).toBe(true);
    expect(response.body.request.body).toEqual({ raw: 'amount=5&name=Ada' });
  });

  it('runs code against a given request, with defaults', async () => {
    const response = await test({ code: `addHandler('transform', (request, context) => ({ ...request, body: { got: request.body, type: context.type, method: request.method } }));`, request: { body: { a: 1 }, type: 'ping' } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ok: true, request: { method: 'POST', path: '', query: '', headers: {}, body: { got: { a: 1 }, type: 'ping', method: 'POST' } }, logs: [] });
  });

  it('answers 200 with ok false, the error and its line when the code fails', async () => {
    const response = await test({ code: `addHandler('transform', (request) => {\n  console.log('before');\n  return request.body.missing.field;\n});`, request: { body: {} } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ok: false, logs: [{ level: 'log', message: 'before' }], error: { message: "TypeError: cannot read property 'field' of undefined", line: 3 } });
    const looping = await test({ code: `addHandler('transform', () => { for (;;) {} });`, request: {} });
    expect(looping.body).toEqual({ ok: false, logs: [], error: { message: 'Transformation ran longer than 100 ms', line: expect.any(Number) } });
    const syntax = await test({ code: `addHandler('transform', (request) => {\n  return request +;\n});`, request: {} });
    expect(syntax.body.error).toEqual({ message: expect.stringMatching(/^SyntaxError/), line: 2 });
  });

  it("answers 404 event_not_found for an unknown event or another account's", async () => {
    expectProblem(await test({ code: `addHandler('transform', (r) => r);`, event_id: 'evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY' }), 404, 'event_not_found');
    const eventId = await sendEvent(endpoint.url, '{}');
    const other = await signUp(relay.baseUrl);
    expectProblem(await test({ code: `addHandler('transform', (r) => r);`, event_id: eventId }, { key: other.key }), 404, 'event_not_found');
  });

  it('refuses a body without exactly one of event_id and request, or without code', async () => {
    const eventId = await sendEvent(endpoint.url, '{}');
    expectProblem(await test({ code: `addHandler('transform', (r) => r);` }), 400, 'validation_failed');
    expectProblem(await test({ code: `addHandler('transform', (r) => r);`, event_id: eventId, request: {} }), 400, 'validation_failed');
    expectProblem(await test({ event_id: eventId }), 400, 'validation_failed');
    expectProblem(await test({ code: `addHandler('transform', (r) => r);`, request: { path: 'no-slash' } }), 400, 'validation_failed');
  });

  it('needs an API key', async () => {
    const response = await api(relay.baseUrl, 'POST', '/v1/transformations/test', { json: { code: 'x', request: {} } });
    expect(response.status).toBe(401);
  });
});
