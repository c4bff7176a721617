/**
 * The typed REST client against a real relay: every route it wraps, the shapes it
 * returns, and the relay's problems surfacing as HookApiError.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHookClient, HookApiError, type Endpoint, type HookClient } from '@hook/client';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let receiver: Receiver;
let client: HookClient;

beforeAll(async () => {
  relay = await startTestRelay({ allowPrivateDestinations: true }, { workerPollMs: 20 });
  receiver = await startReceiver();
  const anonymous = createHookClient({ apiUrl: relay.baseUrl });
  const signup = await anonymous.accounts.create();
  await anonymous.close();
  client = createHookClient({ apiUrl: relay.baseUrl, apiKey: signup.api_key });
  await client.account.changePlan('pro'); // the file makes more endpoints than free allows
});

afterAll(async () => {
  await client?.close();
  await receiver?.close();
  await relay?.close();
});

async function apiError(promise: Promise<unknown>): Promise<HookApiError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof HookApiError)) throw new Error(`expected a HookApiError, got ${String(error)}`);
  return error;
}

describe('accounts and keys', () => {
  it('signs up, reads the account, and manages keys', async () => {
    const anonymous = createHookClient({ apiUrl: relay.baseUrl });
    const signup = await anonymous.accounts.create();
    await anonymous.close();
    expect(signup.api_key).toMatch(/^hk_/);
    expect(signup.account).toMatchObject({ plan: 'free' });

    const own = createHookClient({ apiUrl: relay.baseUrl, apiKey: signup.api_key });
    try {
      expect((await own.account.get()).account.id).toBe(signup.account.id);
      const created = await own.apiKeys.create({ name: 'ci' });
      expect(created).toMatchObject({ name: 'ci', prefix: created.api_key.slice(0, 11) });
      const keys = await own.apiKeys.list();
      expect(keys.data.map((key) => key.id)).toContain(created.id);
      await own.apiKeys.delete(created.id);
      expect((await own.apiKeys.list()).data).toHaveLength(1);
      const last = await apiError(own.apiKeys.delete(keys.data.find((key) => key.id !== created.id)!.id));
      expect(last.code).toBe('last_api_key');
      expect(last.status).toBe(409);
    } finally {
      await own.close();
    }
  });

  it('surfaces a refused key as the relay\'s problem document', async () => {
    const stranger = createHookClient({ apiUrl: relay.baseUrl, apiKey: 'hk_not-a-real-key' });
    const error = await apiError(stranger.account.get());
    await stranger.close();
    expect(error.problem).toMatchObject({ status: 401, code: 'invalid_api_key', type: 'urn:hook:error:invalid_api_key' });
    expect(error.fix).not.toBe('');
    expect(error.requestId).toMatch(/^req_/);
  });
});

describe('endpoints', () => {
  let endpoint: Endpoint;

  it('creates, reads, lists, iterates and updates', async () => {
    endpoint = await client.endpoints.create({ name: 'client-orders' });
    expect(endpoint).toMatchObject({ name: 'client-orders', status: 'active', destination: { type: 'cli' } });
    expect(endpoint.url).toMatch(new RegExp(`^${relay.baseUrl}/v1/ingest/`));
    expect(await client.endpoints.get(endpoint.id)).toEqual(endpoint);

    for (let i = 0; i < 3; i++) await client.endpoints.create({ name: `client-extra-${i}` });
    const page = await client.endpoints.list({ limit: 2 });
    expect(page.data).toHaveLength(2);
    expect(page.next_cursor).not.toBeNull();
    const all: string[] = [];
    for await (const each of client.endpoints.iterate(2)) all.push(each.name);
    expect(all).toEqual(['client-extra-2', 'client-extra-1', 'client-extra-0', 'client-orders']);

    const paused = await client.endpoints.update(endpoint.id, { status: 'paused', name: 'client-orders-2' });
    expect(paused).toMatchObject({ status: 'paused', name: 'client-orders-2' });
    const resumed = await client.endpoints.update(endpoint.id, { status: 'active', destination: { type: 'url', url: receiver.url } });
    expect(resumed.destination).toEqual({ type: 'url', url: receiver.url });
  });

  it('reads and rotates the signing secret', async () => {
    const before = await client.endpoints.secret(endpoint.id);
    expect(before).toMatchObject({ previous_secret: null, previous_secret_expires_at: null });
    const after = await client.endpoints.rotateSecret(endpoint.id);
    expect(after.previous_secret).toBe(before.secret);
    expect(after.secret).toMatch(/^whsec_/);
    expect(after.secret).not.toBe(before.secret);
  });

  it('reports per-field validation errors', async () => {
    const error = await apiError(client.endpoints.create({ name: ' ' }));
    expect(error.code).toBe('validation_failed');
    expect(error.errors).toEqual([{ field: 'body.name', message: 'must not be only spaces' }]);
  });

  it('deletes; the endpoint is then not found', async () => {
    const doomed = await client.endpoints.create({ name: 'client-doomed' });
    await client.endpoints.delete(doomed.id);
    expect((await apiError(client.endpoints.get(doomed.id))).code).toBe('endpoint_not_found');
  });
});

describe('ingest and events', () => {
  it('sends raw bytes to an ingest URL and reads them back exactly', async () => {
    const endpoint = await client.endpoints.create({ name: 'client-raw' });
    const body = Buffer.from([0x00, 0xff, 0x10, 0x80, 0x7b]);
    const accepted = await client.ingest.send(`${endpoint.url}/sub/path?q=1`, {
      method: 'PUT', body, headers: { 'content-type': 'application/octet-stream', 'x-event-type': 'binary.test' },
    });
    expect(accepted.status).toBe('pending');
    const event = await client.events.get(accepted.id);
    expect(event).toMatchObject({ method: 'PUT', path: '/sub/path', query: 'q=1', type: 'binary.test', body_encoding: 'base64', size: 5 });
    expect(Buffer.from(event.body, 'base64').equals(body)).toBe(true);

    const filtered = await client.events.list({ endpoint_id: endpoint.id, type: 'binary.test', status: 'pending' });
    expect(filtered.data.map((each) => each.id)).toEqual([accepted.id]);
    expect(filtered.data[0]).not.toHaveProperty('body');
    expect((await client.events.list({ endpoint_id: endpoint.id, status: 'delivered' })).data).toEqual([]);
  });

  it('refuses an unknown ingest URL with the relay\'s problem', async () => {
    const error = await apiError(client.ingest.send(`${relay.baseUrl}/v1/ingest/nothing-here`, { body: '{}' }));
    expect(error.code).toBe('ingest_not_found');
  });

  it('replays one event now and many in bulk', async () => {
    const endpoint = await client.endpoints.create({ name: 'client-replay', destination: { type: 'url', url: receiver.url } });
    const before = receiver.requests.length;
    const accepted = await client.ingest.send(endpoint.url, { body: '{"type":"replay.me"}', headers: { 'content-type': 'application/json' } });
    await receiver.waitFor(before + 1);
    // The receiver has it a moment before the attempt is recorded; until then a replay is refused (event_in_flight).
    await expect.poll(async () => (await client.events.get(accepted.id)).status, { timeout: 10_000, interval: 10, message: 'the first delivery was never recorded' }).toBe('delivered');

    const replayed = await client.events.replay(accepted.id);
    expect(replayed.id).toBe(accepted.id);
    expect(replayed.attempts.at(-1)).toMatchObject({ trigger: 'replay', response_status: 200 });

    const bulk = await client.events.replayMany({ endpoint_id: endpoint.id, status: 'delivered', since: new Date(Date.now() - 60_000).toISOString() });
    expect(bulk).toEqual({ replayed: 1, deliveries: 1, waiting_for_listener: 0, limit: 10_000, status: ['delivered'] });
    await receiver.waitFor(before + 3);

    let count = 0;
    for await (const each of client.events.iterate({ endpoint_id: endpoint.id })) count += each.id === accepted.id ? 1 : 0;
    expect(count).toBe(1);
  });
});
