import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createEndpoint, expectProblem, readJson, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

const MAX_PAYLOAD = 64 * 1024;

let relay: TestRelay;
let key: string;
let endpoint: { id: string; url: string };

beforeAll(async () => {
  relay = await startTestRelay({ maxPayloadBytes: MAX_PAYLOAD });
  ({ key } = await signUp(relay.baseUrl));
  endpoint = await createEndpoint(relay.baseUrl, key, { name: 'ingest' });
});
afterAll(async () => relay.close());

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  sawContinue: boolean;
}

/** A request written by hand with node:http, to control framing (chunked, Expect: 100-continue). */
function rawRequest(url: string, options: { method?: string; headers?: Record<string, string>; chunks?: Buffer[]; waitForContinue?: boolean }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let sawContinue = false;
    const request = httpRequest(url, { method: options.method ?? 'POST', headers: options.headers }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (chunk: Buffer) => parts.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(parts).toString('utf8'), sawContinue }));
    });
    request.on('error', reject);
    const send = (): void => {
      for (const chunk of options.chunks ?? []) request.write(chunk);
      request.end();
    };
    if (options.waitForContinue) {
      request.on('continue', () => {
        sawContinue = true;
        send();
      });
    } else {
      send();
    }
  });
}

async function storedEvent(id: string): Promise<any> {
  const response = await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key });
  expect(response.status).toBe(200);
  return response.body;
}

function storedBytes(event: { body: string; body_encoding: string }): Buffer {
  return event.body_encoding === 'base64' ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
}

describe('ingest', () => {
  const samples: [string, string | undefined, Buffer][] = [
    ['JSON, with odd spacing kept', 'application/json', Buffer.from('{ "type" : "order.created",\n  "amount":1.50, "z":1,"a":2 }')],
    ['form-encoded', 'application/x-www-form-urlencoded', Buffer.from('a=1&b=%20two&a=3')],
    ['XML', 'application/xml', Buffer.from('<?xml version="1.0"?><event><id>7</id></event>')],
    ['plain text with multibyte UTF-8', 'text/plain; charset=utf-8', Buffer.from('héllo wörld ✓ 🎉')],
    ['binary', 'application/octet-stream', randomBytes(4096)],
    ['empty', 'application/json', Buffer.alloc(0)],
    ['no content type', undefined, Buffer.from('raw bytes, no type')],
  ];

  for (const [label, contentType, body] of samples) {
    it(`stores ${label} byte-exact and answers after commit`, async () => {
      const response = await rawRequest(endpoint.url, { headers: contentType ? { 'content-type': contentType } : {}, chunks: body.length ? [body] : [] });
      expect(response.status).toBe(200);
      const accepted = JSON.parse(response.body);
      expect(accepted).toEqual({ id: expect.stringMatching(/^evt_[0-9A-Z]{26}$/), status: 'pending' });

      // Committed before the answer: another connection sees the row right away.
      const rows = await sqlRows(relay, 'select body from event where id = ?', [accepted.id]);
      expect(rows).toHaveLength(1);
      expect(Buffer.compare(rows[0].body, body)).toBe(0);

      const event = await storedEvent(accepted.id);
      expect(Buffer.compare(storedBytes(event), body)).toBe(0);
      expect(event.size).toBe(body.length);
      expect(event.content_type).toBe(contentType ?? null);
      expect(event.endpoint_id).toBe(endpoint.id);
      expect(event.attempts).toEqual([]);
    });
  }

  it('returns binary bodies as base64 and text as utf8', async () => {
    const binary = await rawRequest(endpoint.url, { headers: { 'content-type': 'image/png' }, chunks: [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00])] });
    expect((await storedEvent(JSON.parse(binary.body).id)).body_encoding).toBe('base64');
    const text = await rawRequest(endpoint.url, { headers: { 'content-type': 'text/plain' }, chunks: [Buffer.from('plain')] });
    expect(await storedEvent(JSON.parse(text.body).id)).toMatchObject({ body: 'plain', body_encoding: 'utf8' });
  });

  it('takes chunked transfer encoding', async () => {
    const chunks = [Buffer.from('{"type":"chunked",'), Buffer.from('"part":2,'), Buffer.from('"end":true}')];
    const response = await rawRequest(endpoint.url, { headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, chunks });
    expect(response.status).toBe(200);
    const event = await storedEvent(JSON.parse(response.body).id);
    expect(event.body).toBe(Buffer.concat(chunks).toString());
    expect(event.type).toBe('chunked');
    expect(event.headers['transfer-encoding']).toBe('chunked');
  });

  it('answers Expect: 100-continue and then stores the body', async () => {
    const body = Buffer.from('{"type":"continued"}');
    const response = await rawRequest(endpoint.url, {
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), expect: '100-continue' },
      chunks: [body],
      waitForContinue: true,
    });
    expect(response.sawContinue).toBe(true);
    expect(response.status).toBe(200);
    expect((await storedEvent(JSON.parse(response.body).id)).body).toBe(body.toString());
  });

  it('records method, path suffix, raw query and headers (repeats kept)', async () => {
    const response = await rawRequest(`${endpoint.url}/stripe/v2?b=2&a=1&a=3`, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain', 'X-Custom-Header': 'Value', 'x-event-type': 'invoice.paid' },
      chunks: [Buffer.from('x')],
    });
    const event = await storedEvent(JSON.parse(response.body).id);
    expect(event).toMatchObject({ method: 'PUT', path: '/stripe/v2', query: 'b=2&a=1&a=3', type: 'invoice.paid' });
    expect(event.headers['x-custom-header']).toBe('Value');

    const encoded = `${endpoint.url.replace(/\/([^/]+)$/, (_, id: string) => `/%${id.charCodeAt(0).toString(16).toUpperCase()}${id.slice(1)}`)}/a%20b/?q=%20`;
    const encodedEvent = await storedEvent((await readJson(await fetch(encoded, { method: 'POST', body: 'x' }))).id);
    expect(encodedEvent).toMatchObject({ path: '/a%20b/', query: 'q=%20' });

    const repeated = await fetch(endpoint.url, { method: 'DELETE', headers: [['x-dup', 'one'], ['x-dup', 'two']] });
    const repeatedEvent = await storedEvent((await readJson(repeated)).id);
    expect(repeatedEvent).toMatchObject({ method: 'DELETE', path: '', query: '' });
    expect(repeatedEvent.headers['x-dup']).toBe('one, two');

    // header names that are also names of Object.prototype's properties are kept as any other
    // (written on a socket by hand: fetch drops a header named __proto__)
    const { host, pathname } = new URL(endpoint.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(endpoint.url).port), '127.0.0.1', () => {
        socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\n__proto__: p\r\nConstructor: c\r\ntoString: t\r\nhasOwnProperty: h\r\nconstructor: d\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx`);
      });
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer, answer).toMatch(/^HTTP\/1.1 200 /);
    const trickyEvent = await storedEvent(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).id);
    expect(trickyEvent.headers).toMatchObject({ constructor: 'c, d', tostring: 't', hasownproperty: 'h' });
    expect(Object.entries(trickyEvent.headers), JSON.stringify(trickyEvent.headers)).toContainEqual(['__proto__', 'p']);
  });

  it('accepts GET, HEAD and OPTIONS and stores them as events', async () => {
    for (const method of ['GET', 'OPTIONS']) {
      const response = await fetch(`${endpoint.url}?challenge=abc`, { method });
      expect(response.status).toBe(200);
      expect((await storedEvent((await readJson(response)).id)).method).toBe(method);
    }
    const head = await fetch(endpoint.url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const events = await api(relay.baseUrl, 'GET', `/v1/events?endpoint_id=${endpoint.id}&limit=1`, { key });
    expect(events.body.data[0].method).toBe('HEAD');
  });

  it('takes the event type from the header, then a top-level JSON type, else null', async () => {
    const fromBody = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"user.signup"}' });
    expect((await storedEvent((await readJson(fromBody)).id)).type).toBe('user.signup');
    const none = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"data":{"type":"nested"}}' });
    expect((await storedEvent((await readJson(none)).id)).type).toBeNull();
    const broken = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":' });
    expect(broken.status).toBe(200);
    expect((await storedEvent((await readJson(broken)).id)).body).toBe('{"type":');
  });

  it('refuses unknown ingest ids with 404 and disabled endpoints with 410', async () => {
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/ingest/not-a-real-id', { rawBody: 'x' }), 404, 'ingest_not_found');
    expectProblem(await api(relay.baseUrl, 'POST', `/v1/ingest/${'a'.repeat(300)}`, { rawBody: 'x' }), 414, 'url_too_long');
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/ingest/%E0%A4%A', { rawBody: 'x' }), 400, 'bad_request');
    const disabled = await createEndpoint(relay.baseUrl, key, { name: 'off' });
    await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${disabled.id}`, { key, json: { status: 'disabled' } });
    const ingestPath = new URL(disabled.url).pathname;
    const problem = expectProblem(await api(relay.baseUrl, 'POST', ingestPath, { rawBody: 'x' }), 410, 'endpoint_disabled');
    expect(problem.detail).toContain(disabled.id);
    const count = await sqlRows(relay, 'select count(*)::int as n from event where endpoint_id = ?', [disabled.id]);
    expect(count[0].n).toBe(0);
  });

  it('refuses bodies over HOOK_MAX_PAYLOAD with 413, declared or chunked', async () => {
    const big = randomBytes(MAX_PAYLOAD + 1);
    const declared = await rawRequest(endpoint.url, { headers: { 'content-type': 'application/octet-stream', 'content-length': String(big.length) }, chunks: [big] });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toMatchObject({ code: 'payload_too_large', detail: expect.stringContaining(String(MAX_PAYLOAD)) });
    const chunked = await rawRequest(endpoint.url, { headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' }, chunks: [big.subarray(0, 40_000), big.subarray(40_000)] });
    expect(chunked.status).toBe(413);
    const exact = await rawRequest(endpoint.url, { headers: { 'content-type': 'application/octet-stream' }, chunks: [big.subarray(0, MAX_PAYLOAD)] });
    expect(exact.status).toBe(200);
  });

  it('loses nothing under concurrent ingest (group commit)', async () => {
    const burst = await createEndpoint(relay.baseUrl, key, { name: 'burst' });
    const bodies = Array.from({ length: 200 }, (_, i) => `{"n":${i}}`);
    const responses = await Promise.all(bodies.map((body) => fetch(burst.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })));
    expect(responses.every((response) => response.status === 200)).toBe(true);
    const ids = await Promise.all(responses.map(async (response) => (await readJson(response)).id));
    const rows = await sqlRows(relay, 'select id, convert_from(body, \'UTF8\') as body from event where endpoint_id = ?', [burst.id]);
    expect(rows).toHaveLength(200);
    const bodyById = new Map(rows.map((row: { id: string; body: string }) => [row.id, row.body]));
    ids.forEach((id, i) => expect(bodyById.get(id)).toBe(bodies[i]));
  });
});
