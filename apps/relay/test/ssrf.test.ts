/**
 * Server-side request forgery: deliveries never reach private, loopback, link-local or
 * metadata addresses in hosted mode, whatever DNS answers at delivery time (rebinding),
 * and never follow redirects (a receiver cannot bounce a delivery to an internal URL).
 */
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createEndpoint, readJson, signUp, startTestRelay, type TestRelay } from '../../../test/support/relay.ts';
import { startReceiver, type Receiver } from '../../../test/support/receiver.ts';

const FAST_SCHEDULE = [60_000, 60_000, 60_000, 60_000, 60_000, 60_000];

async function attemptsOf(relay: TestRelay, key: string, id: string, count: number): Promise<any[]> {
  const deadline = Date.now() + 8000;
  for (;;) {
    const event = (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body;
    if (event.attempts.length >= count) return event.attempts;
    if (Date.now() > deadline) throw new Error(`event ${id} has ${event.attempts.length} of ${count} attempts`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('DNS rebinding', () => {
  let relay: TestRelay;
  let receiver: Receiver;
  // What "DNS" answers for rebind.example.test at delivery time; the test changes it.
  let answer: LookupAddress[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    relay = await startTestRelay({ allowPrivateDestinations: false, deliveryTimeoutMs: 500, retryScheduleMs: FAST_SCHEDULE }, {
      workerPollMs: 20,
      resolveDestination: ((hostname: string, _options: unknown, callback: (error: Error | null, addresses: LookupAddress[]) => void) => {
        if (hostname !== 'rebind.example.test') return callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
        callback(null, answer);
      }) as never,
    });
  });
  afterAll(async () => {
    await relay.close();
    await receiver.close();
  });

  it('refuses the connection when the name resolves to a private address at delivery, after a public answer before', async () => {
    const { key } = await signUp(relay.baseUrl);
    const port = new URL(receiver.url).port;
    // Accepted at creation: the name does not resolve to anything private then.
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'rebind', destination: { type: 'url', url: `http://rebind.example.test:${port}/hook` } });

    answer = [{ address: '93.184.216.34', family: 4 }]; // public: allowed (unreachable from this machine, which is fine)
    const id = (await readJson(await fetch(endpoint.url, { method: 'POST', body: 'first' }))).id as string;
    const [first] = await attemptsOf(relay, key, id, 1);
    expect(first.error).not.toMatch(/private, loopback or link-local/);

    for (const rebound of [
      [{ address: '127.0.0.1', family: 4 }],
      [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }], // one bad answer among good ones
      [{ address: '169.254.169.254', family: 4 }], // cloud metadata
      [{ address: '::ffff:127.0.0.1', family: 6 }],
    ]) {
      answer = rebound;
      const before = (await attemptsOf(relay, key, id, 1)).length;
      expect((await api(relay.baseUrl, 'POST', `/v1/events/replay/${id}`, { key })).status).toBe(200);
      const attempts = await attemptsOf(relay, key, id, before + 1);
      expect(attempts.at(-1)).toMatchObject({ response_status: null, error: expect.stringMatching(/resolves to .*private, loopback or link-local/) });
    }
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('private destinations in other spellings', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startTestRelay({ allowPrivateDestinations: false });
  });
  afterAll(async () => relay.close());

  it('refuses loopback, private, shared, link-local, metadata and NAT64 addresses however they are written', async () => {
    const { key } = await signUp(relay.baseUrl);
    const spellings = [
      'http://127.1/x', 'http://0177.0.0.1/x', 'http://2130706433/x', 'http://0x7f000001/x', 'http://0.0.0.0/x', 'http://localhost./x',
      'http://evil@127.0.0.1/x', 'http://[::1]/x', 'http://[::ffff:127.0.0.1]/x', 'http://[::ffff:7f00:1]/x', 'http://100.64.0.1/x',
      'http://172.16.5.4/x', 'http://192.168.1.1/x', 'http://169.254.169.254/latest/meta-data/', 'http://[fd00::1]/x', 'http://[fe80::1]/x',
      'http://[64:ff9b::a9fe:a9fe]/x',
    ];
    for (const url of spellings) {
      const response = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'x', destination: { type: 'url', url } } });
      expect({ url, status: response.status, code: response.body.code }).toEqual({ url, status: 422, code: 'destination_not_allowed' });
    }
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'public', destination: { type: 'url', url: 'https://example.com/hook' } });
    for (const url of ['http://127.1/x', 'http://[::ffff:7f00:1]/x']) {
      const response = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { destination: { type: 'url', url } } });
      expect(response.status).toBe(422);
    }
  });
});

describe('redirects', () => {
  let relay: TestRelay;
  let target: Receiver;
  let redirector: Receiver;

  beforeAll(async () => {
    target = await startReceiver();
    redirector = await startReceiver((request) => ({ status: 307, headers: { location: `${target.url}${request.url}` } }));
    relay = await startTestRelay({ allowPrivateDestinations: true, retryScheduleMs: FAST_SCHEDULE }, { workerPollMs: 20 });
  });
  afterAll(async () => {
    await relay.close();
    await target.close();
    await redirector.close();
  });

  it('are never followed: the 3xx is the attempt, a failure, and the Location is not contacted', async () => {
    const { key } = await signUp(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'redirects', destination: { type: 'url', url: `${redirector.url}/hook` } });
    const id = (await readJson(await fetch(endpoint.url, { method: 'POST', body: '{"type":"x"}', headers: { 'content-type': 'application/json' } }))).id as string;
    const [attempt] = await attemptsOf(relay, key, id, 1);
    expect(attempt).toMatchObject({ response_status: 307, n: 1 });
    expect((await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body.status).toBe('retrying');
    await redirector.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(target.requests).toHaveLength(0);
  });
});
