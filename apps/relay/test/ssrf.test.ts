/**
 * Server-side request forgery: deliveries never reach private, loopback, link-local or
 * metadata addresses in hosted mode, whatever DNS answers at delivery time (rebinding),
 * and never follow redirects (a receiver cannot bounce a delivery to an internal URL).
 */
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { api, createEndpoint, expectProblem, readJson, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';
import { startReceiver, type Receiver } from '@hook/test/receiver';

const FAST_SCHEDULE = [60_000, 60_000, 60_000, 60_000, 60_000, 60_000];

/** The event's attempts once it has at least `count`. */
function attemptsOf(relay: TestRelay, key: string, id: string, count: number): Promise<any[]> {
  return vi.waitFor(async () => {
    const { attempts } = (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body;
    expect(attempts.length, `event ${id}'s attempts`).toBeGreaterThanOrEqual(count);
    return attempts;
  }, { timeout: 8000, interval: 20 });
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

  it('refuses IPv6 transition addresses that lead to a private IPv4 address, and still connects to global IPv6', async () => {
    const { key } = await signUp(relay.baseUrl);
    const port = new URL(receiver.url).port;
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'transition', destination: { type: 'url', url: `http://rebind.example.test:${port}/hook` } });
    answer = [{ address: '2606:4700:4700::1111', family: 6 }]; // global unicast: connected to (unreachable from here, which is fine)
    const id = (await readJson(await fetch(endpoint.url, { method: 'POST', body: 'first' }))).id as string;
    const [first] = await attemptsOf(relay, key, id, 1);
    expect(first.error).not.toMatch(/private, loopback or link-local/);
    for (const address of [
      '0:0:0:0:0:ffff:a00:1', // IPv4-mapped ::ffff:0:0/96, 10.0.0.1
      '::a00:1', // IPv4-compatible ::/96, 10.0.0.1
      '64:ff9b:1::7f00:1', // local-use NAT64 64:ff9b:1::/48, 127.0.0.1
      '2002:a00:1::1', // 6to4 2002::/16, 10.0.0.1
      'fec0::1', // site-local fec0::/10
    ]) {
      answer = [{ address, family: 6 }];
      const before = (await attemptsOf(relay, key, id, 1)).length;
      expect((await api(relay.baseUrl, 'POST', `/v1/events/replay/${id}`, { key })).status).toBe(200);
      const attempts = await attemptsOf(relay, key, id, before + 1);
      expect({ address, attempt: attempts.at(-1) }).toMatchObject({ address, attempt: { response_status: null, error: expect.stringMatching(/resolves to .*private, loopback or link-local/) } });
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
    // IPv6 transition prefixes carrying a private IPv4 address, and site-local IPv6.
    for (const url of ['http://[0:0:0:0:0:ffff:a00:1]/x', 'http://[::a00:1]/x', 'http://[::7f00:1]/x', 'http://[64:ff9b:1::a00:1]/x', 'http://[2002:a00:1::1]/x', 'http://[2002:7f00:1::]/x', 'http://[fec0::1]/x']) {
      const response = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'x', destination: { type: 'url', url } } });
      expect({ url, status: response.status, code: response.body.code }).toEqual({ url, status: 422, code: 'destination_not_allowed' });
    }
    expect((await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'v6', destination: { type: 'url', url: 'http://[2606:4700:4700::1111]/hook' } } })).status).toBe(201);
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
    // The attempt is recorded once its exchange is over: a followed redirect would have reached the target before.
    expect(target.requests).toHaveLength(0);
  });
});

describe('a destination URL no request can be sent to', () => {
  const UNPARSABLE = 'http://127.0.0.1%09:29081/';
  for (const allowPrivateDestinations of [false, true]) {
    describe(`with HOOK_ALLOW_PRIVATE_DESTINATIONS=${allowPrivateDestinations}`, () => {
      let relay: TestRelay;
      beforeAll(async () => {
        relay = await startTestRelay({ allowPrivateDestinations });
      });
      afterAll(async () => relay.close());

      it('is refused with 422 destination_url_invalid and a fix, as an endpoint, destination or notification URL, and never stored', async () => {
        const { key } = await signUp(relay.baseUrl);
        const refusals = [
          ['body.destination.url', await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'x', destination: { type: 'url', url: UNPARSABLE } } })],
        ] as const;
        const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'kept', destination: { type: 'url', url: 'https://example.com/hook' } });
        const more = [
          ['body.destination.url', await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { destination: { type: 'url', url: UNPARSABLE } } })],
          ['body.destination.url', await api(relay.baseUrl, 'POST', `/v1/endpoints/${endpoint.id}/destinations`, { key, json: { destination: { type: 'url', url: UNPARSABLE } } })],
          ['body.url', await api(relay.baseUrl, 'PUT', '/v1/account/notifications', { key, json: { url: UNPARSABLE } })],
        ] as const;
        for (const [field, response] of [...refusals, ...more]) {
          const problem = expectProblem(response, 422, 'destination_url_invalid');
          expect(problem.fix).toMatch(/http\(s\) URL/);
          expect(problem.errors).toEqual([{ field, message: expect.stringMatching(/not a URL a request can be sent to/) }]);
        }
        expect(await sqlRows(relay, "select count(*)::int as n from destination where position('%09' in url) > 0")).toEqual([{ n: 0 }]);
        expectProblem(await api(relay.baseUrl, 'GET', '/v1/account/notifications', { key }), 404, 'notifications_not_configured');
      });
    });
  }
});
