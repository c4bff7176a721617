/**
 * A destination's delivery options through a real relay (issue 31, docs/delivery.md):
 * v1a (ed25519) signatures checked by an independent verifier and by @hook/client's, a
 * rotation that signs with both keys, sign-in (basic, static headers, OAuth2 client
 * credentials) checked by real local servers, mTLS to an https receiver that requires a
 * client certificate, delayed deliveries pending with their due time, and the checks an
 * option passes before it is stored. Secrets given are never in any answer.
 */
import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '@hook/client';
import { startReceiver, type Receiver } from '@hook/test/receiver';
import { api, createEndpoint, expectProblem, sendEvent, signUp, startTestRelay, type ApiResponse, type TestRelay } from '@hook/test/relay';

const fixture = (name: string): string => readFileSync(new URL(`fixtures/tls/${name}`, import.meta.url), 'utf8');

let relay: TestRelay;
let key: string;
const receivers: Receiver[] = [];
const servers: Server[] = [];
/** Every API answer of this file, to check that no secret given comes back. */
const answers: string[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: [3_600_000], deliveryTimeoutMs: 2000 }, { workerPollMs: 20 });
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
});
afterAll(async () => {
  await relay.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

async function call(method: string, path: string, json?: unknown): Promise<ApiResponse> {
  const response = await api(relay.baseUrl, method, path, { key, ...(json === undefined ? {} : { json }) });
  answers.push(JSON.stringify(response.body));
  return response;
}

async function receiver(respond?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const started = await startReceiver(respond);
  receivers.push(started);
  return started;
}

/** An endpoint (held for `hook listen`) with one more destination, made with `body`. */
async function destinationWith(body: Record<string, unknown>): Promise<{ endpoint: any; destination: any }> {
  const endpoint = await createEndpoint(relay.baseUrl, key);
  const created = await call('POST', `/v1/endpoints/${endpoint.id}/destinations`, body);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { endpoint, destination: created.body };
}

async function deliveryOf(eventId: string, destinationId: string): Promise<any> {
  const event = (await call('GET', `/v1/events/${eventId}`)).body;
  return event.deliveries.find((delivery: any) => delivery.destination_id === destinationId);
}

describe('v1a (ed25519) signatures', () => {
  it('signs with the destination key; receivers verify with the public key shown, by node:crypto alone and by @hook/client', async () => {
    const at = await receiver();
    const { endpoint, destination } = await destinationWith({ destination: { type: 'url', url: at.url }, signature_scheme: 'v1a' });
    expect(destination.signature_scheme).toBe('v1a');
    expect(destination.public_key).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    const secret = (await call('GET', `/v1/destinations/${destination.id}/secret`)).body;
    expect(secret.secret).toMatch(/^whsk_/);
    expect(secret.public_key).toBe(destination.public_key);

    const body = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0xff, 0x7d]); // not UTF-8: signed as the bytes it is
    await sendEvent(endpoint.url, body, { 'content-type': 'application/octet-stream' });
    const [request] = await at.waitFor(1);
    const signature = String(request!.headers['webhook-signature']);
    expect(signature).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    // An independent check: the public key as a JWK, the signed content as the spec says.
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(destination.public_key.slice('whpk_'.length), 'base64').toString('base64url') }, format: 'jwk' });
    const signed = Buffer.concat([Buffer.from(`${request!.headers['webhook-id']}.${request!.headers['webhook-timestamp']}.`), request!.body]);
    expect(request!.body).toEqual(body);
    expect(verifySignature(null, signed, publicKey, Buffer.from(signature.slice('v1a,'.length), 'base64'))).toBe(true);
    expect(verifyWebhook(request!.body, request!.headers, destination.public_key).id).toBe(request!.headers['webhook-id']);
    expect(() => verifyWebhook(Buffer.from('{"a":1}'), request!.headers, destination.public_key)).toThrow();
  });

  it('a change of scheme is a rotation: both keys sign for 24 hours, and the secret route shows both public keys', async () => {
    const at = await receiver();
    const { endpoint, destination } = await destinationWith({ destination: { type: 'url', url: at.url } });
    const v1 = (await call('GET', `/v1/destinations/${destination.id}/secret`)).body;
    expect(v1.public_key).toBeNull();
    const changed = await call('PATCH', `/v1/destinations/${destination.id}`, { signature_scheme: 'v1a' });
    expect(changed.status).toBe(200);
    const after = (await call('GET', `/v1/destinations/${destination.id}/secret`)).body;
    expect(after.previous_secret).toBe(v1.secret);
    expect(after.public_key).toBe(changed.body.public_key);
    await sendEvent(endpoint.url, '{"rotating":true}');
    const [request] = await at.waitFor(1);
    const schemes = String(request!.headers['webhook-signature']).split(' ').map((part) => part.split(',')[0]).sort();
    expect(schemes).toEqual(['v1', 'v1a']);
    // A receiver that knows only one of them accepts the delivery.
    expect(() => verifyWebhook(request!.body, request!.headers, v1.secret)).not.toThrow();
    expect(() => verifyWebhook(request!.body, request!.headers, after.public_key)).not.toThrow();
    // Rotating a v1a destination makes a new key pair.
    const rotated = (await call('POST', `/v1/destinations/${destination.id}/rotate-secret`, {})).body;
    expect(rotated.secret).toMatch(/^whsk_/);
    expect(rotated.public_key).not.toBe(after.public_key);
    expect(rotated.previous_public_key).toBe(after.public_key);
  });
});

describe('sign-in to the receiver', () => {
  it('basic and static headers: the receiver sees them on every delivery, and refuses a delivery without', async () => {
    const expected = `Basic ${Buffer.from('hook:s3cret-basic').toString('base64')}`;
    const at = await receiver((request) => ({ status: request.headers.authorization === expected && request.headers['x-api-key'] === undefined ? 200 : 401 }));
    const { endpoint, destination } = await destinationWith({ destination: { type: 'url', url: at.url }, auth: { type: 'basic', username: 'hook', password: 's3cret-basic' } });
    expect(destination.auth).toEqual({ type: 'basic', username: 'hook', secret_set: true });
    const id = await sendEvent(endpoint.url, '{"n":1}');
    await expect.poll(async () => (await deliveryOf(id, destination.id))?.status).toBe('delivered');

    const headers = await receiver((request) => ({ status: request.headers['x-api-key'] === 's3cret-header' ? 200 : 401 }));
    const updated = await call('PATCH', `/v1/destinations/${destination.id}`, { destination: { type: 'url', url: headers.url }, auth: { type: 'headers', headers: { 'X-Api-Key': 's3cret-header' } } });
    expect(updated.body.auth).toEqual({ type: 'headers', header_names: ['x-api-key'], secret_set: true });
    const second = await sendEvent(endpoint.url, '{"n":2}');
    await expect.poll(async () => (await deliveryOf(second, destination.id))?.status).toBe('delivered');

    // Removed, the receiver's 401 is the attempt's answer.
    expect((await call('PATCH', `/v1/destinations/${destination.id}`, { auth: null })).body.auth).toBeNull();
    const third = await sendEvent(endpoint.url, '{"n":3}');
    await expect.poll(async () => (await deliveryOf(third, destination.id))?.status).toBe('retrying');
    expect((await call('GET', `/v1/events/${third}`)).body.attempts.at(-1).response_status).toBe(401);
  });

  it('OAuth2 client credentials: the token is fetched once, sent as a bearer token, and fetched again after a 401', async () => {
    const tokens: string[] = [];
    const tokenServer = createHttpServer((request, response) => {
      let form = '';
      request.on('data', (chunk) => (form += chunk));
      request.on('end', () => {
        const basic = Buffer.from(String(request.headers.authorization).replace(/^Basic /, ''), 'base64').toString();
        const params = new URLSearchParams(form);
        if (basic !== 'client-1:s3cret-oauth' || params.get('grant_type') !== 'client_credentials' || params.get('scope') !== 'webhooks') {
          response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
          return;
        }
        tokens.push(`token-${tokens.length + 1}`);
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: tokens.at(-1), token_type: 'Bearer', expires_in: 3600 }));
      });
    });
    servers.push(tokenServer);
    await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
    const tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/oauth/token`;
    // The receiver takes only the newest token: an older one is answered 401.
    const at = await receiver((request) => ({ status: request.headers.authorization === `Bearer ${tokens.at(-1)}` ? 200 : 401 }));
    const { endpoint, destination } = await destinationWith({
      destination: { type: 'url', url: at.url },
      auth: { type: 'oauth2', token_url: tokenUrl, client_id: 'client-1', client_secret: 's3cret-oauth', scope: 'webhooks' },
    });
    expect(destination.auth).toEqual({ type: 'oauth2', token_url: tokenUrl, client_id: 'client-1', scope: 'webhooks', audience: null, secret_set: true });
    const first = await sendEvent(endpoint.url, '{"n":1}');
    const second = await sendEvent(endpoint.url, '{"n":2}');
    await expect.poll(async () => [(await deliveryOf(first, destination.id))?.status, (await deliveryOf(second, destination.id))?.status]).toEqual(['delivered', 'delivered']);
    expect(tokens).toEqual(['token-1']);
    // The authorisation server revokes it (a new one is current): the next delivery gets a 401, fetches a token and goes again.
    tokens.push('revoked-elsewhere');
    const third = await sendEvent(endpoint.url, '{"n":3}');
    await expect.poll(async () => (await deliveryOf(third, destination.id))?.status).toBe('delivered');
    expect(tokens.at(-1)).toBe('token-3');
    expect(at.requests.at(-1)!.headers.authorization).toBe('Bearer token-3');
  });
});

describe('mTLS', () => {
  it('presents the destination\'s client certificate to a receiver that requires one, trusting the CA given', async () => {
    const seen: string[] = [];
    const server = createHttpsServer({ key: fixture('server.key'), cert: fixture('server.crt'), ca: fixture('ca.crt'), requestCert: true, rejectUnauthorized: true }, (request, response) => {
      seen.push(String((request.socket as import('node:tls').TLSSocket).getPeerCertificate().subject.CN));
      request.resume();
      request.on('end', () => response.end('ok'));
    });
    servers.push(server as unknown as Server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const { endpoint, destination } = await destinationWith({ destination: { type: 'url', url }, tls: { ca: fixture('ca.crt') } });
    const refused = await sendEvent(endpoint.url, '{"n":1}');
    await expect.poll(async () => (await deliveryOf(refused, destination.id))?.status).toBe('retrying');
    expect((await call('GET', `/v1/events/${refused}`)).body.attempts.at(-1).error).toMatch(/client certificate/);

    const updated = await call('PATCH', `/v1/destinations/${destination.id}`, { tls: { client_certificate: fixture('client.crt'), client_key: fixture('client.key') } });
    expect(updated.body.tls).toEqual({ client_certificate: fixture('client.crt'), client_key_set: true, ca: fixture('ca.crt') });
    const accepted = await sendEvent(endpoint.url, '{"n":2}');
    await expect.poll(async () => (await deliveryOf(accepted, destination.id))?.status).toBe('delivered');
    expect(seen.length).toBeGreaterThan(0);
  });
});

describe('delayed delivery', () => {
  it('holds each event for its delay: pending, due at received + delay, then delivered', async () => {
    const at = await receiver();
    const { endpoint, destination } = await destinationWith({ destination: { type: 'url', url: at.url }, delay_seconds: 2 });
    expect(destination.delay_seconds).toBe(2);
    const sentAt = Date.now();
    const id = await sendEvent(endpoint.url, '{"later":true}');
    const waiting = await deliveryOf(id, destination.id);
    expect(waiting.status).toBe('pending');
    const event = (await call('GET', `/v1/events/${id}`)).body;
    const dueMs = Date.parse(waiting.next_attempt_at) - Date.parse(event.received_at);
    expect(dueMs).toBeGreaterThanOrEqual(2000);
    expect(dueMs).toBeLessThan(2100);
    const [request] = await at.waitFor(1, 10_000);
    expect(request!.receivedAtMs - sentAt).toBeGreaterThanOrEqual(1900);
    // Without the delay, the next is due when it is received.
    await call('PATCH', `/v1/destinations/${destination.id}`, { delay_seconds: null });
    const nextSentAt = Date.now();
    await sendEvent(endpoint.url, '{"later":false}');
    const [, second] = await at.waitFor(2, 10_000);
    expect(second!.receivedAtMs - nextSentAt).toBeLessThan(1900);
  });
});

describe('checks before an option is stored', () => {
  it('refuses options a destination type does not take, half a client certificate, and a broker URL with a password', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const add = (body: unknown) => call('POST', `/v1/endpoints/${endpoint.id}/destinations`, body);
    expect(expectProblem(await add({ destination: { type: 'cli' }, ordering: { key: null } }), 400, 'validation_failed').errors[0].field).toBe('body.ordering');
    expect(expectProblem(await add({ destination: { type: 'cli' }, auth: { type: 'bearer', token: 's3cret-cli' } }), 400, 'validation_failed').errors[0].field).toBe('body.auth');
    expect(expectProblem(await add({ destination: { type: 'url', url: 'https://example.com' }, tls: { client_certificate: fixture('client.crt') } }), 400, 'validation_failed').errors[0].field).toBe('body.tls.client_key');
    const password = expectProblem(await add({ destination: { type: 'mqtt', url: 'mqtt://user:s3cret-url@127.0.0.1:1883', topic: 'orders' } }), 400, 'validation_failed');
    expect(password.errors[0]).toMatchObject({ field: 'body.destination.url', message: expect.stringMatching(/auth/) });
    expect(expectProblem(await add({ destination: { type: 'amqp', url: 'amqp://127.0.0.1:5672', exchange: 'x', routing_key: 'y' }, auth: { type: 'bearer', token: 's3cret-amqp' } }), 400, 'validation_failed').errors[0].field).toBe('body.auth.type');
    expect(expectProblem(await add({ destination: { type: 'url', url: 'https://example.com', topic: 'x' } }), 400, 'validation_failed').errors[0]).toEqual({ field: 'body.destination.topic', message: 'is not a field of a url destination (it takes url)' });
    expect(expectProblem(await add({ destination: { type: 'url', url: 'https://example.com' }, delay_seconds: 86_401 }), 400, 'validation_failed').errors[0].field).toBe('body.delay_seconds');
  });

  it('no secret given in this file is in any answer', () => {
    const all = answers.join('\n');
    for (const secret of ['s3cret-basic', 's3cret-header', 's3cret-oauth', 's3cret-url', 's3cret-cli', 's3cret-amqp', fixture('client.key').split('\n')[1]!]) expect(all).not.toContain(secret);
  });
});
