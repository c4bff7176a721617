/**
 * Ingest on its own host (HOOK_INGEST_URL, docs/deployment.md) against a real relay over
 * HTTP: endpoint URLs are built on the ingest host, which serves ingest and health only
 * (no console, playground or API, whatever the credentials), and ingest is refused on the
 * console's host. The Host header stands for the name a proxy or DNS would route.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

const INGEST_HOST = 'in.hooks-content.test';
const CONSOLE_HOST = 'hooks.test';

let relay: TestRelay;
let key: string;
beforeAll(async () => {
  relay = await startTestRelay({ ingestUrl: `http://${INGEST_HOST}`, publicUrl: `http://${CONSOLE_HOST}` });
  ({ key } = await signUp(relay.baseUrl));
});
afterAll(async () => relay.close());

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: string }

/** A request to the relay's port with `host` as its Host header. */
function onHost(host: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const { port } = new URL(relay.baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, method, path, headers: { host, ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const code = (answer: Answer) => (JSON.parse(answer.body) as { code: string }).code;

describe('HOOK_INGEST_URL', () => {
  it('endpoint URLs are on the ingest host; ingest is served there and refused on the console\'s host', async () => {
    const created = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'apart' } });
    expect(created.body.url).toMatch(new RegExp(`^http://${INGEST_HOST.replace(/\./g, '\\.')}/v1/ingest/`));
    const path = new URL(created.body.url).pathname;

    const taken = await onHost(INGEST_HOST, 'POST', path, { 'content-type': 'application/json' }, '{"n":1}');
    expect(taken.status).toBe(200);
    expect(taken.headers['content-security-policy']).toMatch(/^sandbox;/);

    const refused = await onHost(CONSOLE_HOST, 'POST', path, { 'content-type': 'application/json' }, '{"n":2}');
    expect(refused.status).toBe(421);
    expect(code(refused)).toBe('ingest_host_required');
    expect(JSON.parse(refused.body).detail).toContain(`http://${INGEST_HOST}`);
    expect(refused.headers['content-security-policy']).toMatch(/^sandbox;/);
    expect(await sqlRows(relay, 'select body from event where endpoint_id = ?', [created.body.id])).toHaveLength(1);
  });

  it('the ingest host serves no console, playground or API, with a key or the console\'s cookie; health answers', async () => {
    const session = await onHost(CONSOLE_HOST, 'POST', '/console/session', { 'content-type': 'application/json' }, JSON.stringify({ api_key: key }));
    expect(session.status).toBe(204);
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    // The same cookie and header work on the console's host…
    expect((await onHost(CONSOLE_HOST, 'GET', '/v1/account', { cookie, 'x-hook-console': '1' })).status).toBe(200);
    expect((await onHost(CONSOLE_HOST, 'GET', '/console')).status).toBe(200);
    // …and nothing but ingest and health is served on the ingest host.
    for (const [method, path, headers, body] of [
      ['GET', '/console', {}, undefined],
      ['POST', '/v1/api-keys', { cookie, 'x-hook-console': '1', 'content-type': 'application/json' }, '{"name":"minted"}'],
      ['GET', '/v1/account', { authorization: `Bearer ${key}` }, undefined],
      ['POST', '/console/session', { 'content-type': 'application/json' }, JSON.stringify({ api_key: key })],
      ['GET', '/playground', {}, undefined],
      ['GET', '/', {}, undefined],
      ['GET', '/no-such-page', {}, undefined],
    ] as const) {
      const answer = await onHost(INGEST_HOST.toUpperCase(), method, path, headers, body);
      expect(answer.status, `${method} ${path}`).toBe(421);
      expect(code(answer), `${method} ${path}`).toBe('ingest_host_only');
    }
    const keys = await api(relay.baseUrl, 'GET', '/v1/api-keys', { key });
    expect(keys.body.data.map((listed: { name: string }) => listed.name)).not.toContain('minted');
    expect((await onHost(INGEST_HOST, 'GET', '/healthz')).status).toBe(200);
  });

  it('the playground still sends its test events through ingest, and shows the ingest host\'s URL', async () => {
    const started = await onHost(CONSOLE_HOST, 'POST', '/playground/session');
    expect(started.status).toBe(201);
    const session = JSON.parse(started.body) as { token: string; endpoint: { url: string } };
    expect(session.endpoint.url).toMatch(new RegExp(`^http://${INGEST_HOST.replace(/\./g, '\\.')}/v1/ingest/`));
    const sent = await onHost(CONSOLE_HOST, 'POST', '/playground/events', { authorization: `Bearer ${session.token}`, 'content-type': 'application/json' }, JSON.stringify({ type: 't', payload: '{}' }));
    expect(sent.status, sent.body).toBe(200);
    expect(JSON.parse(sent.body).id).toMatch(/^evt_/);
  });
});
