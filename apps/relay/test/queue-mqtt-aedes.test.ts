/**
 * MQTT destinations against an in-process broker (aedes), so `npm test` covers the queue
 * publisher on a machine with only Node: the payload arrives byte for byte, the broker's
 * PUBACK is success, one connection serves many messages and is opened again after it
 * dropped, and every failure (too large, broker down, wrong sign-in, no answer, private
 * address) is a clear error, never a throw. aedes speaks MQTT 3.1.1 only, so this also covers
 * the fall back from MQTT 5 and what it carries (no headers); MQTT 5 user properties are
 * covered against Mosquitto in test/brokers/mqtt.test.ts.
 */
import type { LookupAddress } from 'node:dns';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import { connectAsync, type IPublishPacket, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueuePublisher } from '../src/delivery/queues/index.ts';
import type { QueueDestination, QueueMessage } from '../src/delivery/queues/types.ts';

/** JSON whitespace a re-serialisation would lose, and bytes that are not UTF-8. */
const BODY = Buffer.concat([Buffer.from('{ "type" : "order.paid",\n\t"amount": [ 1 , 2.50 ] }  \r\n'), Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3])]);
const HEADERS = { 'webhook-id': 'msg_2mqttAedes', 'webhook-timestamp': '1767225600', 'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=', 'content-type': 'application/json' };
const MESSAGE: QueueMessage = { body: BODY, headers: HEADERS };

let broker: Aedes;
let server: Server;
let url: string;
let subscriber: MqttClient;
const received: IPublishPacket[] = [];
const publishers: QueuePublisher[] = [];

type PublisherOptions = ConstructorParameters<typeof QueuePublisher>[0];

function publisher(options: Partial<PublisherOptions> = {}): QueuePublisher {
  const created = new QueuePublisher({ timeoutMs: options.timeoutMs ?? 5000, allowPrivateDestinations: options.allowPrivateDestinations ?? true, ...(options.resolve ? { resolve: options.resolve } : {}) });
  publishers.push(created);
  return created;
}

function destination(topic: string, overrides: Partial<QueueDestination> = {}): QueueDestination {
  return { url, target: { type: 'mqtt', topic }, auth: null, tls: null, ...overrides };
}

async function listen(target: Server): Promise<number> {
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  return (target.address() as AddressInfo).port;
}

beforeAll(async () => {
  broker = await Aedes.createBroker({
    // No username: anonymous, as most brokers on a private network. A username: only hook/secret.
    authenticate: (_client, username, password, done) => {
      if (username === undefined || (username === 'hook' && password?.toString() === 'secret')) return done(null, true);
      done(Object.assign(new Error('bad user name or password'), { returnCode: 4 }) as AuthenticateError, null);
    },
  });
  server = createServer(broker.handle);
  url = `mqtt://127.0.0.1:${await listen(server)}`;
  subscriber = await connectAsync(url, { protocolVersion: 4, clientId: 'aedes-test-subscriber', reconnectPeriod: 0 });
  subscriber.on('message', (_topic, _payload, packet) => received.push(packet));
  await subscriber.subscribeAsync('hook/#', { qos: 1 });
});

afterAll(async () => {
  await Promise.all(publishers.map((p) => p.close()));
  await subscriber?.endAsync();
  await new Promise<void>((resolve) => broker?.close(() => resolve()));
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

async function receivedOn(topic: string, count = 1): Promise<IPublishPacket[]> {
  await expect.poll(() => received.filter((p) => p.topic === topic).length).toBeGreaterThanOrEqual(count);
  return received.filter((p) => p.topic === topic);
}

describe('MQTT queue destination (aedes, MQTT 3.1.1)', () => {
  it('publishes the body byte for byte with QoS 1 and answers ok on the PUBACK, saying the headers were not carried', async () => {
    const result = await publisher().publish(destination('hook/orders'), MESSAGE);
    expect(result).toMatchObject({ status: null, kind: 'ok', error: null, retryAfterMs: null });
    expect(result.body).toMatch(/^MQTT broker acknowledged \(PUBACK\): topic hook\/orders; the broker speaks MQTT 3\.1\.1 only, so the headers \(webhook-id, signature\) were not carried$/);
    const [packet] = await receivedOn('hook/orders');
    expect(Buffer.compare(packet!.payload as Buffer, BODY)).toBe(0);
    expect(packet!.qos).toBe(1);
    // MQTT 3.1.1 has no properties: nothing of the headers arrives.
    expect(packet!.properties).toBeUndefined();
  });

  it('keeps one connection for many messages, and opens a new one after the broker dropped it', async () => {
    const queue = publisher();
    const connections: Client[] = [];
    const onClient = (client: Client): void => {
      if (client.id.startsWith('hook-relay-')) connections.push(client);
    };
    broker.on('client', onClient);
    try {
      for (let i = 0; i < 3; i++) expect(await queue.publish(destination('hook/reuse'), MESSAGE)).toMatchObject({ kind: 'ok' });
      expect(connections).toHaveLength(1);
      const dropped = new Promise((resolve) => broker.once('clientDisconnect', resolve));
      connections[0]!.close();
      await dropped;
      // The publisher hears of the drop on its own socket's close; wait on what it does next, not on a clock.
      await expect.poll(async () => (await queue.publish(destination('hook/reuse'), MESSAGE)).kind).toBe('ok');
      expect(connections).toHaveLength(2);
      await receivedOn('hook/reuse', 4);
    } finally {
      broker.removeListener('client', onClient);
    }
  });

  it('signs in with the destination username and password, and a wrong password is a clear error', async () => {
    const queue = publisher();
    const good = await queue.publish(destination('hook/signed', { auth: { type: 'basic', username: 'hook', password: 'secret' } }), MESSAGE);
    expect(good).toMatchObject({ kind: 'ok' });
    const bad = await queue.publish(destination('hook/signed', { auth: { type: 'basic', username: 'hook', password: 'wrong' } }), MESSAGE);
    expect(bad).toMatchObject({ status: null, kind: 'broker_error', body: null });
    expect(bad.error).toBe(`could not connect to MQTT broker at ${url.slice('mqtt://'.length)}: the MQTT broker refused the sign-in of user "hook" (Connection refused: Bad username or password): check the destination's username and password`);
  });

  it('fails a message larger than MQTT allows, naming its size and the limit, without sending it', async () => {
    const huge: QueueMessage = { body: Buffer.alloc(256 * 1024 * 1024), headers: HEADERS };
    const result = await publisher().publish(destination('hook/huge'), huge);
    expect(result).toMatchObject({ status: null, kind: 'broker_error', body: null });
    expect(result.error).toMatch(/^the event is 256 MiB \(\d+ bytes\); MQTT takes at most 256 MiB \(268435460 bytes\) \(the largest packet the protocol allows\); a message this large cannot go over MQTT, or deliver to a URL destination$/);
    expect(received.some((p) => p.topic === 'hook/huge')).toBe(false);
  });

  it('answers a clear error when the broker is down, never throwing', async () => {
    const closed = createServer();
    const port = await listen(closed);
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = await publisher().publish(destination('hook/down', { url: `mqtt://127.0.0.1:${port}` }), MESSAGE);
    expect(result).toMatchObject({ status: null, kind: 'connection_refused', body: null });
    expect(result.error).toMatch(new RegExp(`^could not connect to MQTT broker at 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*is the broker running`));
  });

  it('gives up on a broker that never answers after the time limit', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    const port = await listen(silent);
    try {
      const result = await publisher({ timeoutMs: 300 }).publish(destination('hook/silent', { url: `mqtt://127.0.0.1:${port}` }), MESSAGE);
      // The publisher's own limit is a timeout; mqtt.js's connack timeout, an error without a code, the broker's failure.
      expect(result).toMatchObject({ kind: expect.stringMatching(/^(timeout|broker_error)$/), error: expect.stringMatching(/no answer within 300 ms \(HOOK_DELIVERY_TIMEOUT\)|could not connect .*connack timeout/i) });
      expect(result.durationMs).toBeLessThan(2000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('refuses a private or loopback broker address unless private destinations are allowed', async () => {
    const hosted = publisher({ allowPrivateDestinations: false });
    const byAddress = await hosted.publish(destination('hook/private'), MESSAGE);
    expect(byAddress).toMatchObject({ kind: 'broker_error', body: null });
    expect(byAddress.error).toBe('destination 127.0.0.1 resolves to 127.0.0.1, a private, loopback or link-local address; the relay operator can allow these with HOOK_ALLOW_PRIVATE_DESTINATIONS=true');

    // A public-looking name whose DNS answer is private is refused the same way.
    const resolve = ((_hostname: string, _options: unknown, callback: (error: Error | null, addresses: LookupAddress[]) => void) =>
      callback(null, [{ address: '10.1.2.3', family: 4 }])) as unknown as PublisherOptions['resolve'];
    const byName = await publisher({ allowPrivateDestinations: false, resolve }).publish(destination('hook/private', { url: 'mqtt://broker.example.com:1883' }), MESSAGE);
    expect(byName.error).toBe('destination broker.example.com resolves to 10.1.2.3, a private, loopback or link-local address; the relay operator can allow these with HOOK_ALLOW_PRIVATE_DESTINATIONS=true');
    expect(received.some((p) => p.topic === 'hook/private')).toBe(false);
  });

  it('fails a URL that is not an MQTT URL with a clear error', async () => {
    const result = await publisher().publish(destination('hook/x', { url: 'http://127.0.0.1:1883' }), MESSAGE);
    expect(result).toMatchObject({ kind: 'broker_error', error: 'the broker URL "http://127.0.0.1:1883" of a mqtt destination must start with mqtt:// or mqtts://' });
  });
});
