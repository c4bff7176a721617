/**
 * What an attempt came to is decided once, where it happened (SendResult.kind), and read
 * from there by the recorded attempt (`failure_kind`), its issue, metrics and traces. Here
 * each kind is made by a real failure against a local server (a closed port, a server that
 * never answers, TLS spoken to a plain port, a private address, a name that does not
 * resolve, a 503), and checked against the metrics label it counts as; then once through
 * the relay, from the attempt to the REST shapes and /metrics.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliverySender } from '../src/delivery/sender.ts';
import { deliveryOutcome } from '../src/plugins/metrics.ts';
import { api, createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '@hook/test/relay';
import { closedPort } from '@hook/test/receiver';


function portOf(server: { address(): unknown }): number {
  return (server.address() as { port: number }).port;
}

describe('the kind of an attempt, from real failures', () => {
  const sockets = new Set<Socket>();
  // Takes connections and never answers on them.
  const silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  // A plain HTTP server: answers 503 on /busy, 200 elsewhere.
  const plain: Server = createHttpServer((request, response) => {
    request.resume();
    response.writeHead(request.url === '/busy' ? 503 : 200, { 'content-type': 'text/plain' }).end(request.url === '/busy' ? 'busy' : 'ok');
  });
  const open = (): DeliverySender => new DeliverySender({ timeoutMs: 400, allowPrivateDestinations: true });

  beforeAll(async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    plain.closeAllConnections();
    await new Promise<void>((resolve) => plain.close(() => resolve()));
  });

  const send = (sender: DeliverySender, url: string) => sender.send(url, { 'content-type': 'application/json' }, Buffer.from('{}'));

  it('a 2xx is ok (delivered); a 503 is http_5xx (failed_status)', async () => {
    const sender = open();
    try {
      const ok = await send(sender, `http://127.0.0.1:${portOf(plain)}/hooks`);
      expect([ok.status, ok.kind, deliveryOutcome(ok.kind)]).toEqual([200, 'ok', 'delivered']);
      const busy = await send(sender, `http://127.0.0.1:${portOf(plain)}/busy`);
      expect([busy.status, busy.kind, deliveryOutcome(busy.kind)]).toEqual([503, 'http_5xx', 'failed_status']);
    } finally {
      await sender.close();
    }
  });

  it('a closed port is connection_refused (network_error)', async () => {
    const sender = open();
    try {
      const result = await send(sender, `http://127.0.0.1:${await closedPort()}/hooks`);
      expect([result.status, result.kind, deliveryOutcome(result.kind)]).toEqual([null, 'connection_refused', 'network_error']);
      expect(result.error).toMatch(/ECONNREFUSED/);
    } finally {
      await sender.close();
    }
  });

  it('a server that never answers is a timeout (timeout)', async () => {
    const sender = open();
    try {
      const result = await send(sender, `http://127.0.0.1:${portOf(silent)}/hooks`);
      expect([result.status, result.kind, deliveryOutcome(result.kind)]).toEqual([null, 'timeout', 'timeout']);
      expect(result.error).toBe('no answer within 400 ms (HOOK_DELIVERY_TIMEOUT)');
    } finally {
      await sender.close();
    }
  });

  it('TLS spoken to a plain HTTP port is tls (network_error)', async () => {
    const sender = open();
    try {
      const result = await send(sender, `https://127.0.0.1:${portOf(plain)}/hooks`);
      expect([result.status, result.kind, deliveryOutcome(result.kind)]).toEqual([null, 'tls', 'network_error']);
    } finally {
      await sender.close();
    }
  });

  it('a private address is refused as a network_error, by its literal and by what its name resolves to', async () => {
    const sender = new DeliverySender({
      timeoutMs: 400,
      allowPrivateDestinations: false,
      resolve: ((_name: string, _options: unknown, callback: (error: null, addresses: { address: string; family: number }[]) => void) =>
        callback(null, [{ address: '127.0.0.1', family: 4 }])) as never,
    });
    try {
      for (const url of [`http://127.0.0.1:${portOf(plain)}/hooks`, `http://rebinding.example:${portOf(plain)}/hooks`]) {
        const result = await send(sender, url);
        expect([result.status, result.kind, deliveryOutcome(result.kind)], url).toEqual([null, 'network_error', 'network_error']);
        expect(result.error, url).toMatch(/private, loopback or link-local/);
      }
    } finally {
      await sender.close();
    }
  });

  it('a name that does not resolve is dns (network_error), from the resolver\'s code', async () => {
    const sender = new DeliverySender({
      timeoutMs: 400,
      allowPrivateDestinations: false,
      resolve: ((name: string, _options: unknown, callback: (error: NodeJS.ErrnoException) => void) =>
        callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND', hostname: name }))) as never,
    });
    try {
      const result = await send(sender, 'http://nowhere.example/hooks');
      expect([result.status, result.kind, deliveryOutcome(result.kind)]).toEqual([null, 'dns', 'network_error']);
    } finally {
      await sender.close();
    }
  });
});

describe('the kind of an attempt, through the relay', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startTestRelay({ retryScheduleMs: [60_000] }, { workerPollMs: 20 });
  });
  afterAll(async () => {
    await relay.close();
  });

  it('a refused destination: the attempt\'s failure_kind, the list\'s error_class and the metrics label all come from the kind the sender set', async () => {
    const { key } = await signUp(relay.baseUrl);
    const scrape = async (): Promise<number> => {
      const text = await (await fetch(`${relay.baseUrl}/metrics`)).text();
      return Number(/^hook_delivery_attempts_total\{outcome="network_error"\} (\S+)$/m.exec(text)?.[1] ?? 0);
    };
    const before = await scrape();
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'refused', destination: { type: 'url', url: `http://127.0.0.1:${await closedPort()}/hooks` } });
    const id = await sendEvent(endpoint.url, '{}');
    await expect.poll(async () => (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body.status, { timeout: 15_000, interval: 50 }).toBe('retrying');
    const event = (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body;
    expect(event.attempts).toEqual([expect.objectContaining({ response_status: null, failure_kind: 'connection_refused', error: expect.stringMatching(/ECONNREFUSED/) })]);
    const listed = (await api(relay.baseUrl, 'GET', `/v1/events?endpoint_id=${endpoint.id}`, { key })).body.data;
    expect(listed).toEqual([expect.objectContaining({ id, last_attempt: expect.objectContaining({ response_status: null, error_class: 'network_error' }) })]);
    await expect.poll(scrape, { timeout: 5_000, interval: 50 }).toBe(before + 1);
  });
});
