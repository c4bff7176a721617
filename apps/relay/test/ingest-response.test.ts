/**
 * Custom responses at ingest (docs/sources.md, "Custom responses") against a real relay
 * and PostgreSQL: a stored request is answered with the endpoint's status, headers and
 * body ({{event_id}} filled in), still delivered; refusals keep their usual answers;
 * out-of-bounds settings are 400s naming the field. Only inert types and headers on the
 * allow list may be set, and every answer on an ingest URL goes sandboxed
 * (docs/security.md, "Tenant-controlled content on the relay's origin").
 */
import { describe, expect, it } from 'vitest';
import { usageMonth } from '@hook/core';
import { api, createEndpoint, expectProblem, signUp, sqlRows, type TestRelay, useRelayWithReceiver } from '@hook/test/relay';
import type { Receiver } from '@hook/test/receiver';

let relay: TestRelay;
let receiver: Receiver;
let key: string;
useRelayWithReceiver((started) => ({ relay, receiver, key } = started));

async function create(body: Record<string, unknown>) {
  return api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: body });
}

describe('custom responses', () => {
  it('a stored request gets the endpoint\'s status, headers and body with the event id; the event is stored and delivered', async () => {
    const created = await create({
      name: 'custom answer',
      destination: { type: 'url', url: `${receiver.url}/hook` },
      response: { status: 202, headers: { 'Content-Type': 'application/json', 'X-Received-By': 'hook' }, body: '{"ok":true,"ref":"{{event_id}}","again":"{{event_id}}"}' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.response).toEqual({ status: 202, headers: { 'content-type': 'application/json', 'x-received-by': 'hook' }, body: '{"ok":true,"ref":"{{event_id}}","again":"{{event_id}}"}' });

    const answer = await fetch(created.body.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' });
    expect(answer.status).toBe(202);
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(answer.headers.get('x-received-by')).toBe('hook');
    const body = JSON.parse(await answer.text());
    expect(body.ok).toBe(true);
    expect(body.ref).toMatch(/^evt_/);
    expect(body.again).toBe(body.ref);

    const rows = await sqlRows(relay, 'select id, body from event where endpoint_id = ?', [created.body.id]);
    expect(rows.map((row) => row.id)).toEqual([body.ref]);
    const delivered = await receiver.waitFor(1);
    expect(delivered[0]!.body.toString()).toBe('{"n":1}');
  });

  it('a body without Content-Type goes as text/plain; an empty response answers 200 with nothing', async () => {
    const text = await create({ name: 'text', response: { body: 'thanks {{event_id}}' } });
    expect(text.body.response).toEqual({ status: 200, headers: {}, body: 'thanks {{event_id}}' });
    const answer = await fetch(text.body.url, { method: 'POST', body: 'x' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await answer.text()).toMatch(/^thanks evt_\w+$/);

    const empty = await create({ name: 'empty', response: { status: 204 } });
    const none = await fetch(empty.body.url, { method: 'POST', body: 'x' });
    expect(none.status).toBe(204);
    expect(await none.text()).toBe('');
  });

  it('refusals keep their usual answer: a disabled endpoint is still 409/410 problem+json, not the custom body', async () => {
    const created = await create({ name: 'disabled', response: { status: 200, body: 'ok' } });
    await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${created.body.id}`, { key, json: { status: 'disabled' } });
    const answer = await fetch(created.body.url, { method: 'POST', body: 'x' });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
  });

  it('an update takes effect at once and null restores the default {"id","status"}', async () => {
    const created = await create({ name: 'switch' });
    expect(created.body.response).toBeNull();
    const before = await fetch(created.body.url, { method: 'POST', body: 'x' });
    expect(await before.json()).toEqual({ id: expect.stringMatching(/^evt_/), status: 'pending' });

    const set = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${created.body.id}`, { key, json: { response: { body: 'got it' } } });
    expect(set.status).toBe(200);
    expect(await (await fetch(created.body.url, { method: 'POST', body: 'x' })).text()).toBe('got it');

    const off = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${created.body.id}`, { key, json: { response: null } });
    expect(off.body.response).toBeNull();
    expect(await (await fetch(created.body.url, { method: 'POST', body: 'x' })).json()).toEqual({ id: expect.stringMatching(/^evt_/), status: 'pending' });
  });

  it('bounds are refused with a 400 naming the field', async () => {
    for (const [label, response, field] of [
      ['status below 200', { status: 302 }, 'body.response.status'],
      ['status above 299', { status: 500 }, 'body.response.status'],
      ['body over 4 KiB', { body: 'é'.repeat(2049) }, 'body.response.body'],
      ['body over 4096 characters', { body: 'x'.repeat(4097) }, 'body.response.body'],
      ['Set-Cookie', { headers: { 'Set-Cookie': 'a=b' } }, 'body.response.headers.Set-Cookie'],
      ['x-hook-*', { headers: { 'X-Hook-Signature': 'v1,forged' } }, 'body.response.headers.X-Hook-Signature'],
      ['hop-by-hop', { headers: { Connection: 'close' } }, 'body.response.headers.Connection'],
      ['Content-Length', { headers: { 'content-length': '1' } }, 'body.response.headers.content-length'],
      ['bad name', { headers: { 'X Bad': 'v' } }, 'body.response.headers.X Bad'],
      ['line break', { headers: { 'X-Split': 'a\r\nSet-Cookie: b=c' } }, 'body.response.headers.X-Split'],
      ['too many', { headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-h${i}`, 'v'])) }, 'body.response.headers'],
      ['unknown field', { code: 200 }, 'body.response'],
    ] as const) {
      const refused = await create({ name: 'bad', response });
      const problem = expectProblem(refused, 400, 'validation_failed');
      expect(JSON.stringify(problem.errors.map((error: any) => error.field)), label).toContain(field);
    }
  });

  it('headers a browser acts on and types a browser could run are refused; the problem names what is allowed', async () => {
    for (const headers of [
      { 'Service-Worker-Allowed': '/' }, { Refresh: '0; url=https://evil.example' }, { 'Clear-Site-Data': '"cookies"' }, { Link: '</x.css>; rel=stylesheet' },
      { Location: 'https://evil.example' }, { 'Access-Control-Allow-Origin': '*' }, { 'Content-Security-Policy': "default-src *" }, { 'X-Frame-Options': 'ALLOWALL' },
      { 'X-Content-Type-Options': 'sniff' }, { 'Permissions-Policy': 'camera=*' }, { 'Cross-Origin-Resource-Policy': 'cross-origin' }, { NEL: '{}' },
      { 'Content-Type': 'text/html' }, { 'Content-Type': 'image/svg+xml' }, { 'Content-Type': 'application/xhtml+xml; charset=utf-8' }, { 'Content-Type': 'text/javascript' },
    ]) {
      const [name] = Object.keys(headers);
      const refused = await create({ name: 'browser-acted', response: { headers, body: '<script>alert(1)</script>' } });
      const problem = expectProblem(refused, 400, 'validation_failed');
      expect(problem.errors.map((error: any) => error.field), name).toEqual([`body.response.headers.${name}`]);
      expect(problem.errors[0].message, name).toMatch(name === 'Content-Type' ? /text\/plain, application\/json, application\/xml, text\/xml/ : /Allowed: content-type, cache-control/);
    }
    const allowed = await create({ name: 'twiml', response: { headers: { 'Content-Type': 'text/xml; charset=utf-8', 'Cache-Control': 'no-store', 'X-Twilio-Ref': 'a' }, body: '<Response/>' } });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(201);
  });

  it('every answer on an ingest URL carries the sandbox policy and nosniff: default, custom, duplicate and refusals alike', async () => {
    const sandboxed = (answer: Response, label: string) => {
      expect(answer.headers.get('content-security-policy'), label).toBe("sandbox; default-src 'none'; frame-ancestors 'none'");
      expect(answer.headers.get('x-content-type-options'), label).toBe('nosniff');
    };
    const plain = await create({ name: 'plain', dedupe: { header: 'x-delivery' } });
    const custom = await create({ name: 'xml', response: { headers: { 'Content-Type': 'application/xml' }, body: '<html xmlns="http://www.w3.org/1999/xhtml"><script>1</script></html>' } });
    const verified = await create({ name: 'verified', verification: { provider: 'github', secret: 'shh' } });
    const disabled = await create({ name: 'off' });
    await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${disabled.body.id}`, { key, json: { status: 'disabled' } });
    const { key: fullKey, accountId } = await signUp(relay.baseUrl);
    const full = await createEndpoint(relay.baseUrl, fullKey, { name: 'full' });
    await sqlRows(relay, 'insert into account_usage (account_id, month, events_accepted) values (?, ?, 1000000000)', [accountId, usageMonth(new Date())]);

    const cases: Array<[string, Promise<Response>, number]> = [
      ['default', fetch(plain.body.url, { method: 'POST', headers: { 'x-delivery': 'd1' }, body: '{}' }), 200],
      ['custom', fetch(custom.body.url, { method: 'POST', body: '{}' }), 200],
      ['HEAD', fetch(custom.body.url, { method: 'HEAD' }), 200],
      ['unknown ingest id (404, thrown before the handler)', fetch(`${relay.baseUrl}/v1/ingest/in_nothing_here`, { method: 'POST', body: '{}' }), 404],
      ['signature invalid (401)', fetch(verified.body.url, { method: 'POST', body: '{}' }), 401],
      ['disabled', fetch(disabled.body.url, { method: 'POST', body: '{}' }), 410],
      ['over the allowance (429)', fetch(full.url, { method: 'POST', body: '{}' }), 429],
      ['too large (413)', fetch(plain.body.url, { method: 'POST', body: Buffer.alloc(10 * 1024 * 1024 + 1) }), 413],
    ];
    for (const [label, answer, status] of cases) {
      const response = await answer;
      expect(response.status, label).toBe(status);
      sandboxed(response, label);
      await response.arrayBuffer();
    }
    const duplicate = await fetch(plain.body.url, { method: 'POST', headers: { 'x-delivery': 'd1' }, body: '{}' });
    expect(await duplicate.json()).toMatchObject({ status: 'duplicate' });
    sandboxed(duplicate, 'duplicate');
  });

  it('every answer to a taken request names the event in X-Hook-Event-Id and X-Hook-Event-Status: default, custom (JSON, text, XML, empty), duplicate, handshake, HEAD', async () => {
    const storedIds = async (endpointId: string) => (await sqlRows(relay, 'select id from event where endpoint_id = ? order by received_at', [endpointId])).map((row) => row.id);
    const named = async (label: string, answer: Promise<Response>, endpointId: string, status: string) => {
      const response = await answer;
      expect(response.ok, label).toBe(true);
      const id = response.headers.get('x-hook-event-id');
      expect(id, label).toMatch(/^evt_/);
      expect(response.headers.get('x-hook-event-status'), label).toBe(status);
      expect(await storedIds(endpointId), label).toContain(id);
      return { id: id!, body: await response.text() };
    };
    const plain = await create({ name: 'plain ids', dedupe: { header: 'x-delivery' } });
    const first = await named('default', fetch(plain.body.url, { method: 'POST', headers: { 'x-delivery': 'k1' }, body: '{}' }), plain.body.id, 'pending');
    expect(JSON.parse(first.body)).toEqual({ id: first.id, status: 'pending' });
    const again = await named('duplicate', fetch(plain.body.url, { method: 'POST', headers: { 'x-delivery': 'k1' }, body: '{}' }), plain.body.id, 'duplicate');
    expect(again.id).toBe(first.id);
    expect(await storedIds(plain.body.id)).toEqual([first.id]);
    await named('HEAD', fetch(plain.body.url, { method: 'HEAD' }), plain.body.id, 'pending');

    for (const [label, response] of [
      ['JSON', { status: 202, headers: { 'Content-Type': 'application/json' }, body: '{"ok":true}' }],
      ['text', { body: 'thanks' }],
      ['XML', { headers: { 'Content-Type': 'text/xml' }, body: '<Response/>' }],
      ['empty 204', { status: 204 }],
    ] as const) {
      const custom = await create({ name: `custom ${label}`, dedupe: { header: 'x-delivery' }, response });
      const taken = await named(`custom ${label}`, fetch(custom.body.url, { method: 'POST', headers: { 'x-delivery': 'k1' }, body: '{}' }), custom.body.id, 'pending');
      const repeated = await named(`custom ${label}, duplicate`, fetch(custom.body.url, { method: 'POST', headers: { 'x-delivery': 'k1' }, body: '{}' }), custom.body.id, 'duplicate');
      expect(repeated.id, label).toBe(taken.id);
    }

    const slack = await create({ name: 'slack ids', handshake: { provider: 'slack' }, response: { body: 'custom' } });
    const handshake = await named('handshake', fetch(slack.body.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"url_verification","challenge":"c1"}' }), slack.body.id, 'handshake');
    expect(handshake.body).toBe('c1');

    // Refusals name no event: nothing was stored.
    const refused = await fetch(`${relay.baseUrl}/v1/ingest/in_nothing_here`, { method: 'POST', body: '{}' });
    expect(refused.status).toBe(404);
    expect(refused.headers.get('x-hook-event-id')).toBeNull();
    expect(refused.headers.get('x-hook-event-status')).toBeNull();
  });

  it('a custom response cannot replace or remove the event id headers, even one stored before x-hook-* was refused', async () => {
    const created = await create({ name: 'legacy ids' });
    const legacy = { status: 200, headers: { 'x-hook-event-id': 'evt_forged', 'X-Hook-Event-Status': 'delivered', 'x-kept': 'yes' }, body: 'ok' };
    await sqlRows(relay, 'update endpoint set response = ? where id = ?', [JSON.stringify(legacy), created.body.id]);
    const answer = await fetch(created.body.url, { method: 'POST', body: '{}' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-kept')).toBe('yes');
    const [stored] = await sqlRows(relay, 'select id from event where endpoint_id = ?', [created.body.id]);
    expect(answer.headers.get('x-hook-event-id')).toBe(stored.id);
    expect(answer.headers.get('x-hook-event-status')).toBe('pending');
    expect(await answer.text()).toBe('ok');
  });

  it('a response stored before the allow list is served without what it may no longer set', async () => {
    const created = await create({ name: 'legacy' });
    // As an endpoint created before the allow list could hold it (the API refuses it now).
    const legacy = { status: 200, headers: { 'content-type': 'text/html', refresh: '0; url=https://evil.example', 'service-worker-allowed': '/', 'x-kept': 'yes' }, body: '<script>document.title = "ran"</script>' };
    await sqlRows(relay, 'update endpoint set response = ? where id = ?', [JSON.stringify(legacy), created.body.id]);
    const answer = await fetch(created.body.url, { method: 'POST', body: '{}' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(answer.headers.get('refresh')).toBeNull();
    expect(answer.headers.get('service-worker-allowed')).toBeNull();
    expect(answer.headers.get('x-kept')).toBe('yes');
    expect(answer.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    expect(await answer.text()).toBe(legacy.body);
  });
});
