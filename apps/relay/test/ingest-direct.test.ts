/**
 * Ingest's direct path (apps/relay/src/routes/ingest/direct.ts): which requests it takes,
 * and that each answer it gives is the one the Fastify routes give the same request:
 * status, headers and body, refusals included.
 */
import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectIngest } from '../src/routes/ingest/direct.ts';
import type { IngestReceiver } from '../src/routes/ingest/receive.ts';
import { api, createEndpoint, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';

const MAX_PAYLOAD = 4096;
const GITHUB_SECRET = 'direct-secret';

let relay: TestRelay;
let key: string;

beforeAll(async () => {
  relay = await startTestRelay({ maxPayloadBytes: MAX_PAYLOAD });
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
});
afterAll(async () => relay.close());

describe('which requests the direct path takes', () => {
  let closing = false;
  const direct = new DirectIngest({ receiver: {} as IngestReceiver, maxPayloadBytes: MAX_PAYLOAD, closing: () => closing, log: console as never });
  const request = (method: string, url: string, headers: Record<string, string> = {}) => ({ method, url, headers }) as IncomingMessage;

  it('ingest URLs as endpoints hand them out, with a suffix, a query, any method ingest answers and a usual content type', () => {
    expect(direct.serves(request('POST', '/v1/ingest/AbC-_09xyz', { 'content-type': 'application/json' }))).toBe(true);
    expect(direct.serves(request('PUT', '/v1/ingest/AbC/hooks/github?x=1&y=%20', { 'content-type': 'text/plain; charset=utf-8' }))).toBe(true);
    expect(direct.serves(request('GET', '/v1/ingest/AbC?hub.challenge=1', { 'content-type': 'not a type' }))).toBe(true);
    expect(direct.serves(request('DELETE', '/v1/ingest/AbC/'))).toBe(true);
    expect(direct.serves(request('POST', `/v1/ingest/${'a'.repeat(100)}`))).toBe(true);
  });

  it('leaves to Fastify what it would answer differently: other paths and methods, encoded or odd URLs, a refused content type, a forwarded host, a closing relay', () => {
    expect(direct.serves(request('POST', '/v1/endpoints'))).toBe(false);
    expect(direct.serves(request('TRACE', '/v1/ingest/AbC'))).toBe(false);
    expect(direct.serves(request('POST', '/v1/ingest/'))).toBe(false);
    expect(direct.serves(request('POST', '/v1/ingest/A%42C'))).toBe(false);
    expect(direct.serves(request('POST', '/v1/ingest/AbC/a%2Fb'))).toBe(false);
    expect(direct.serves(request('POST', '/v1/ingest/AbC#x'))).toBe(false);
    expect(direct.serves(request('POST', '/v1/ingest/Ab.C'))).toBe(false);
    expect(direct.serves(request('POST', `/v1/ingest/${'a'.repeat(101)}`))).toBe(false);
    expect(direct.serves(request('POST', '/v1/ingest/AbC', { 'content-type': 'bogus' }))).toBe(false);
    expect(direct.serves(request('POST', '/v1/ingest/AbC', { 'content-type': 'text/plain x' }))).toBe(false);
    expect(direct.serves(request('POST', '/v1/ingest/AbC', { 'x-forwarded-host': 'hooks.example.com' }))).toBe(false);
    closing = true;
    expect(direct.serves(request('POST', '/v1/ingest/AbC'))).toBe(false);
  });
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** An answer with what differs between two requests by nature (ids, date) replaced. */
function comparable(answer: Answer): Answer {
  const headers = { ...answer.headers };
  delete headers.date;
  for (const name of ['x-request-id', 'x-hook-event-id']) if (headers[name] !== undefined) headers[name] = '(id)';
  return { status: answer.status, headers, body: answer.body.replace(/\b(evt|req)_[0-9A-Z]{26}\b/g, '$1_(id)') };
}

/**
 * Sends the request twice: as is (the direct path), and with an X-Forwarded-Host naming the
 * same host, which the direct path leaves to Fastify (this relay trusts no proxy, so the
 * host is the same to it). `vary` makes each send its own (a dedupe key).
 */
async function bothWays(url: string, init: { method?: string; headers?: Record<string, string>; body?: string }, vary: (way: 'direct' | 'fastify') => Record<string, string> = () => ({})): Promise<[Answer, Answer]> {
  const send = async (way: 'direct' | 'fastify'): Promise<Answer> => {
    const forwarded = way === 'fastify' ? { 'x-forwarded-host': new URL(url).hostname } : {};
    const response = await fetch(url, { method: init.method ?? 'POST', headers: { ...init.headers, ...forwarded, ...vary(way) }, body: init.body });
    return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
  };
  const direct = await send('direct');
  const fastify = await send('fastify');
  return [comparable(direct), comparable(fastify)];
}

describe('the direct path answers as the routes do', () => {
  it('a stored event, a duplicate, a custom response, a handshake, GET and HEAD, a suffix and a query', async () => {
    const plain = await createEndpoint(relay.baseUrl, key, { name: 'plain' });
    const custom = await createEndpoint(relay.baseUrl, key, { name: 'custom', response: { status: 202, headers: { 'content-type': 'application/xml', 'x-app': 'yes' }, body: '<ok id="{{event_id}}"/>' }, dedupe: { header: 'x-delivery' } });
    const slack = await createEndpoint(relay.baseUrl, key, { name: 'slack', handshake: { provider: 'slack' } });
    const json = { 'content-type': 'application/json' };
    const cases: [string, Answer, Answer][] = [
      ['stored', ...await bothWays(plain.url, { headers: json, body: '{"type":"a.b"}' })],
      ['no content type', ...await bothWays(plain.url, { body: 'raw bytes' })],
      ['suffix and query', ...await bothWays(`${plain.url}/github/push?x=1`, { method: 'PUT', headers: json, body: '{}' })],
      ['GET', ...await bothWays(`${plain.url}?ping=1`, { method: 'GET' })],
      ['HEAD', ...await bothWays(plain.url, { method: 'HEAD' })],
      ['custom response', ...await bothWays(custom.url, { body: 'x' }, (way) => ({ 'x-delivery': `first-${way}` }))],
      ['custom response to a duplicate', ...await bothWays(custom.url, { body: 'x' }, (way) => ({ 'x-delivery': `first-${way}` }))],
      ['handshake', ...await bothWays(slack.url, { headers: json, body: '{"type":"url_verification","challenge":"c-1"}' })],
    ];
    for (const [name, direct, fastify] of cases) expect({ name, ...direct }).toEqual({ name, ...fastify });
    expect(cases.find(([name]) => name === 'custom response to a duplicate')![1].headers['x-hook-event-status']).toBe('duplicate');
  });

  it('refusals: unknown id, disabled endpoint, a bad signature, a body over HOOK_MAX_PAYLOAD, a refused handshake', async () => {
    const disabled = await createEndpoint(relay.baseUrl, key, { name: 'off' });
    await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${disabled.id}`, { key, json: { status: 'disabled' } });
    const verified = await createEndpoint(relay.baseUrl, key, { name: 'signed', verification: { provider: 'github', secret: GITHUB_SECRET, mode: 'reject' } });
    const meta = await createEndpoint(relay.baseUrl, key, { name: 'meta', handshake: { provider: 'meta', secret: 'right-token' } });
    const badSignature = `sha256=${createHmac('sha256', 'other').update('{}').digest('hex')}`;
    const cases: [string, Answer, Answer][] = [
      ['unknown', ...await bothWays(`${relay.baseUrl}/v1/ingest/NoSuchIngestId`, { body: 'x' })],
      ['disabled', ...await bothWays(disabled.url, { body: 'x' })],
      ['bad signature', ...await bothWays(verified.url, { headers: { 'content-type': 'application/json', 'x-hub-signature-256': badSignature }, body: '{}' })],
      ['too large', ...await bothWays(verified.url, { headers: { 'content-type': 'application/json' }, body: 'x'.repeat(MAX_PAYLOAD + 1) })],
      ['refused handshake', ...await bothWays(`${meta.url}?hub.mode=subscribe&hub.challenge=1&hub.verify_token=wrong`, { method: 'GET' })],
    ];
    expect(cases.map(([, direct]) => direct.status)).toEqual([404, 410, 401, 413, 403]);
    for (const [name, direct, fastify] of cases) expect({ name, ...direct }).toEqual({ name, ...fastify });
  });
});
