/**
 * `hook events export --fixture` and `hook send --fixture` against a real relay: a
 * stored event saved as a fixture file and sent again arrives byte for byte — body
 * bytes (binary, and JSON that is not canonical), method, path, query and the headers
 * that may travel — and files that are not fixtures are refused with a clear error.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { api, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let key: string;
let source: any;
let target: any;
const user = new HookUser();

beforeAll(async () => {
  relay = await startTestRelay();
  key = (await user.json(['signup', '--api-url', relay.baseUrl])).api_key;
  source = await user.json(['endpoints', 'create', 'captured']);
  target = await user.json(['endpoints', 'create', 'replayed']);
});

afterAll(async () => {
  await relay?.close();
  user.remove();
});

async function storedEvent(id: string): Promise<any> {
  const response = await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key });
  expect(response.status).toBe(200);
  return response.body;
}

function bodyBytes(event: any): Buffer {
  return Buffer.from(event.body, event.body_encoding === 'base64' ? 'base64' : 'utf8');
}

/** The headers a resend carries over: all but the ones about one connection (and the client's own content-length and host). */
function travelling(headers: Record<string, string>): Record<string, string> {
  const { host: _host, 'content-length': _length, connection: _connection, ...rest } = headers;
  return rest;
}

/** Sends a request to an ingest URL as a provider would, with raw bytes; returns the stored event's id. */
async function ingest(url: string, body: Buffer, headers: Record<string, string>, method = 'POST'): Promise<string> {
  const response = await fetch(url, { method, headers, body });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

describe('fixtures: hook events export, hook send --fixture', () => {
  it('sends a binary body again byte for byte, with its method, path, query and headers', async () => {
    const binary = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37 + 11) % 256));
    const originalId = await ingest(`${source.url}/hooks/acme?delivery=7&x=%20y`, binary, {
      'content-type': 'application/octet-stream',
      'x-acme-signature': 'sha256=0badc0ffee',
      'x-acme-delivery': 'd-42',
      'user-agent': 'Acme-Webhooks/3.1',
    }, 'PUT');
    const file = join(user.home, 'binary.fixture.json');
    const exported = await user.json(['events', 'export', originalId, '--fixture', file]);
    expect(exported).toEqual({ event_id: originalId, file, method: 'PUT', path: '/hooks/acme', query: 'delivery=7&x=%20y', content_type: 'application/octet-stream', body_encoding: 'base64', size: 512 });

    const fixture = JSON.parse(readFileSync(file, 'utf8'));
    expect(fixture).toMatchObject({ hook_fixture: 1, event_id: originalId, endpoint_id: source.id, method: 'PUT', path: '/hooks/acme', query: 'delivery=7&x=%20y', body_encoding: 'base64', body: binary.toString('base64') });
    expect(fixture.headers).toMatchObject({ 'x-acme-signature': 'sha256=0badc0ffee', 'user-agent': 'Acme-Webhooks/3.1' });

    const sent = await user.json(['send', '--fixture', file, '--endpoint', 'replayed']);
    expect(sent).toMatchObject({ id: expect.stringMatching(/^evt_/), endpoint_id: target.id });
    const [original, again] = [await storedEvent(originalId), await storedEvent(sent.id)];
    expect(bodyBytes(again).equals(binary)).toBe(true);
    expect(again).toMatchObject({ endpoint_id: target.id, method: 'PUT', path: '/hooks/acme', query: 'delivery=7&x=%20y', content_type: 'application/octet-stream', size: 512 });
    expect(travelling(again.headers)).toEqual(travelling(original.headers));
  });

  it('keeps JSON that is not canonical exactly as it came, and the text output names both events', async () => {
    const odd = Buffer.from('{"b":  1,\n "a": [1,2 ,3],\t"n": 1.50, "e": "\\u00e9 é",  "dup": 1, "dup": 2}\r\n\n', 'utf8');
    const originalId = await ingest(source.url, odd, { 'content-type': 'application/json; charset=utf-8', 'x-github-event': 'push' });
    const file = join(user.home, 'odd.fixture.json');
    const saved = await user.run(['events', 'export', originalId, '--fixture', file]);
    expect(saved.code).toBe(0);
    expect(saved.stdout).toBe(`Saved ${originalId} (POST /, application/json; charset=utf-8, ${odd.length} B) to ${file}.\n`);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ body_encoding: 'utf8', body: odd.toString('utf8') });

    const resent = await user.run(['send', 'replayed', '--fixture', file]);
    expect(resent.code).toBe(0);
    const newId = /as (evt_\w+) to replayed/.exec(resent.stdout)?.[1];
    expect(newId, resent.stdout).toBeDefined();
    const again = await storedEvent(newId!);
    expect(bodyBytes(again).equals(odd)).toBe(true);
    expect(again.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'x-github-event': 'push' });
  });

  it('lets -H and --path change a fixture, and refuses --data and -X beside it', async () => {
    const originalId = await ingest(`${source.url}/a?b=c`, Buffer.from('{"type":"order.paid"}'), { 'content-type': 'application/json', 'x-tenant': 'one' });
    const file = join(user.home, 'change.fixture.json');
    await user.json(['events', 'export', originalId, '--fixture', file]);
    const sent = await user.json(['send', '--fixture', file, '--endpoint', target.id, '-H', 'x-tenant: two', '--path', '/elsewhere']);
    const again = await storedEvent(sent.id);
    expect(again).toMatchObject({ path: '/elsewhere', query: '', type: 'order.paid' });
    expect(again.headers['x-tenant']).toBe('two');

    for (const extra of [['--data', '{}'], ['-X', 'PATCH']]) {
      const refused = await user.run(['send', '--fixture', file, '--endpoint', target.id, ...extra, '--json']);
      expect(refused.code).toBe(2);
      expect(JSON.parse(refused.stderr)).toMatchObject({ code: 'usage_error', detail: expect.stringContaining('--fixture') });
    }
  });

  it('refuses a file that is not a fixture, or is missing, with the error and the fix', async () => {
    const notFixture = join(user.home, 'payload.json');
    writeFileSync(notFixture, '{"type":"order.paid"}');
    const refused = await user.run(['send', '--fixture', notFixture, '--endpoint', target.id, '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: 'fixture_invalid', detail: `${notFixture} is not a Hook fixture: it has no "hook_fixture": 1`, fix: expect.stringContaining('hook events export') });

    const badBody = join(user.home, 'bad-body.json');
    writeFileSync(badBody, JSON.stringify({ hook_fixture: 1, method: 'POST', path: '', query: '', headers: {}, body_encoding: 'base64', body: 'not base64!' }));
    const bad = await user.run(['send', '--fixture', badBody, '--endpoint', target.id]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('is not base64');

    const missing = await user.run(['send', '--fixture', join(user.home, 'nope.json'), '--endpoint', target.id, '--json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: 'input_unreadable', detail: expect.stringContaining('no such file') });

    const unwritable = await user.run(['events', 'export', (await user.json(['send', 'captured'])).id, '--fixture', join(user.home, 'no-such-dir', 'f.json'), '--json']);
    expect(unwritable.code).toBe(1);
    expect(JSON.parse(unwritable.stderr)).toMatchObject({ code: 'output_unwritable' });
  });
});
