/**
 * Handshakes answered at the ingest URL (docs/sources.md, Handshakes) against a real relay
 * and PostgreSQL, with the providers' published example values: each is answered at once,
 * stored marked with its provider, and not delivered (no delivery rows, status filtered;
 * a URL destination's receiver gets nothing). Endpoints without a handshake keep today's answers.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { api, expectProblem, sqlRows, type TestRelay, useRelayWithReceiver } from '@hook/test/relay';
import type { Receiver } from '@hook/test/receiver';

let relay: TestRelay;
let receiver: Receiver;
let key: string;
useRelayWithReceiver((started) => ({ relay, receiver, key } = started));

async function endpointWith(name: string, handshake: Record<string, unknown> | null) {
  const created = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name, destination: { type: 'url', url: `${receiver.url}/${name}` }, handshake } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as { id: string; url: string; handshake: any };
}

/** The only stored event of an endpoint: marked with the provider, no deliveries, status filtered. */
async function expectStoredHandshake(endpointId: string, provider: string) {
  const rows = await sqlRows(relay, 'select id, handshake, delivery_count from event where endpoint_id = ?', [endpointId]);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ handshake: provider, delivery_count: 0 });
  expect(await sqlRows(relay, 'select 1 from delivery where event_id = ?', [rows[0].id])).toHaveLength(0);
  const shown = await api(relay.baseUrl, 'GET', `/v1/events/${rows[0].id}`, { key });
  expect(shown.body).toMatchObject({ handshake: provider, status: 'filtered', type: `${provider}.handshake` });
}

describe('handshakes', () => {
  it('slack url_verification: the challenge comes back as text; stored, not delivered', async () => {
    const endpoint = await endpointWith('slack', { provider: 'slack' });
    expect(endpoint.handshake).toEqual({ provider: 'slack', secret_set: false, secret_hint: null });
    // Slack's published example (api.slack.com/events/url_verification).
    const answer = await fetch(endpoint.url, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: '{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}',
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await answer.text()).toBe('3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P');
    await expectStoredHandshake(endpoint.id, 'slack');
    // An ordinary Slack event still goes the usual way: stored and delivered.
    const event = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"event_callback","event":{"type":"app_mention"}}' });
    expect(await event.json()).toMatchObject({ status: 'pending' });
    const delivered = await receiver.waitFor(1);
    // Only the ordinary event: the handshake before it was never delivered.
    expect(delivered.map((request) => [request.url, request.body.toString()])).toEqual([[expect.stringMatching(/\/slack$/), '{"type":"event_callback","event":{"type":"app_mention"}}']]);
  });

  it('meta: hub.challenge echoed when hub.verify_token matches, 403 handshake_refused (nothing stored) when not', async () => {
    const endpoint = await endpointWith('meta', { provider: 'meta', secret: 'meatyhamhock' });
    expect(endpoint.handshake).toEqual({ provider: 'meta', secret_set: true, secret_hint: 'hock' });
    const wrong = await fetch(`${endpoint.url}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=guessed`);
    expect(wrong.status).toBe(403);
    expect((await wrong.json() as { code: string }).code).toBe('handshake_refused');
    // Meta's published example (developers.facebook.com/docs/graph-api/webhooks/getting-started).
    const answer = await fetch(`${endpoint.url}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock`);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('1158201444');
    await expectStoredHandshake(endpoint.id, 'meta');
  });

  it('an echoed challenge never runs: slack\'s and meta\'s echoes, and refusals, carry the sandbox policy and nosniff', async () => {
    const html = '<script>document.title="ran"</script>';
    const slack = await endpointWith('slack-echo', { provider: 'slack' });
    const meta = await endpointWith('meta-echo', { provider: 'meta', secret: 'tok' });
    const answers = {
      slack: await fetch(slack.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'url_verification', challenge: html }) }),
      meta: await fetch(`${meta.url}?hub.mode=subscribe&hub.verify_token=tok&hub.challenge=${encodeURIComponent(html)}`),
      'meta refused': await fetch(`${meta.url}?hub.mode=subscribe&hub.verify_token=guessed&hub.challenge=${encodeURIComponent(html)}`),
    };
    for (const [label, answer] of Object.entries(answers)) {
      expect(answer.headers.get('x-content-type-options'), label).toBe('nosniff');
      expect(answer.headers.get('content-security-policy'), label).toBe("sandbox; default-src 'none'; frame-ancestors 'none'");
      if (label !== 'meta refused') expect(await answer.text(), label).toBe(html);
    }
  });

  it('graph: validationToken returned URL-decoded as text/plain, for POST and GET', async () => {
    const endpoint = await endpointWith('graph', { provider: 'graph' });
    const token = 'Validation: Testing client application reachability for subscription Request-Id: 7e4c4b37-0f4a-4d9a-9c0b-2c8c2e6f0a11';
    const answer = await fetch(`${endpoint.url}?validationToken=${encodeURIComponent(token)}`, { method: 'POST' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/plain');
    expect(await answer.text()).toBe(token);
    await expectStoredHandshake(endpoint.id, 'graph');
  });

  it('dropbox: the challenge as text/plain with X-Content-Type-Options: nosniff', async () => {
    const endpoint = await endpointWith('dropbox', { provider: 'dropbox' });
    const answer = await fetch(`${endpoint.url}?challenge=SbRFCxM0QMiwqkHVvQvHPEr3ozJG10KBbWWAHrDOlHM`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/plain');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await answer.text()).toBe('SbRFCxM0QMiwqkHVvQvHPEr3ozJG10KBbWWAHrDOlHM');
    await expectStoredHandshake(endpoint.id, 'dropbox');
  });

  it('zoom endpoint.url_validation: {plainToken, encryptedToken: hex HMAC-SHA256(secret token, plainToken)}', async () => {
    const secret = 'xBj9tNgzRxiy1VbJRF6wtQ';
    const endpoint = await endpointWith('zoom', { provider: 'zoom', secret });
    const answer = await fetch(endpoint.url, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: '{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event_ts":1654503849680,"event":"endpoint.url_validation"}',
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ plainToken: 'qgg8vlvZRS6UYooatFL8Aw', encryptedToken: createHmac('sha256', secret).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex') });
    await expectStoredHandshake(endpoint.id, 'zoom');
  });

  it('twitter CRC: {"response_token": "sha256=" + base64 HMAC-SHA256(consumer secret, crc_token)}', async () => {
    const secret = 'consumer-secret-for-tests';
    const endpoint = await endpointWith('twitter', { provider: 'twitter', secret });
    const answer = await fetch(`${endpoint.url}?crc_token=9b4507b3-9040-4669-9ec0-3f6bbf2e4b3a&nonce=MTUzMjc2OTc4NTk1Nw`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ response_token: `sha256=${createHmac('sha256', secret).update('9b4507b3-9040-4669-9ec0-3f6bbf2e4b3a').digest('base64')}` });
    await expectStoredHandshake(endpoint.id, 'twitter');
  });

  it('without a handshake configured, the same requests are stored and delivered as before', async () => {
    const endpoint = await endpointWith('plain', null);
    expect(endpoint.handshake).toBeNull();
    const get = await fetch(`${endpoint.url}?challenge=abc`);
    expect(await get.json()).toMatchObject({ status: 'pending' });
    const rows = await sqlRows(relay, 'select handshake, delivery_count from event where endpoint_id = ?', [endpoint.id]);
    expect(rows).toEqual([{ handshake: null, delivery_count: 1 }]);
  });

  it('a secret is required for meta, zoom and twitter and refused for the others; null turns the handshake off', async () => {
    const missing = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'bad', handshake: { provider: 'zoom' } } });
    expect(expectProblem(missing, 400, 'validation_failed').errors).toEqual([{ field: 'body.handshake.secret', message: expect.stringContaining('required') }]);
    const extra = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'bad', handshake: { provider: 'slack', secret: 's' } } });
    expect(expectProblem(extra, 400, 'validation_failed').errors[0].field).toBe('body.handshake.secret');
    expectProblem(await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'bad', handshake: { provider: 'paypal' } } }), 400, 'validation_failed');
    const endpoint = await endpointWith('off', { provider: 'dropbox' });
    const off = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { handshake: null } });
    expect(off.body.handshake).toBeNull();
    expect(await (await fetch(`${endpoint.url}?challenge=abc`)).json()).toMatchObject({ status: 'pending' });
  });
});
