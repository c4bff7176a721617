/**
 * Queue destinations end to end: a real relay and its delivery worker publishing to the
 * machine's real brokers (RabbitMQ, NATS JetStream, Redis Streams, Mosquitto). For each, a
 * destination added through the API (with auth basic where the broker signs in), twenty
 * events ingested (one not UTF-8), and the messages a consumer reads: each body byte for
 * byte, the event headers (webhook-id, webhook-timestamp, webhook-signature) carried as the
 * broker carries headers, the signature verifying with the destination's secret, and every
 * event `delivered` in the API. Also: per key, an ordered destination's messages are in the
 * stream in send order; an event over a NATS server's max_payload fails with its size.
 *
 * A broker that is down fails its own describe with one line naming it and how to start it.
 */
import { connect as connectAmqp, type Channel, type ChannelModel } from 'amqplib';
import { connect as connectNats, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { Redis } from 'ioredis';
import { connectAsync, type IPublishPacket, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '@hook/client';
import { api, createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';
import { BODY, broker, requireReachable, uniqueSuffix } from './support.ts';

const RABBITMQ = broker('RabbitMQ', 'HOOK_TEST_AMQP_URL', 'amqp://guest:guest@127.0.0.1:5672', 'rabbitmq-server -detached');
const NATS = broker(
  'NATS',
  'HOOK_TEST_NATS_URL',
  'nats://127.0.0.1:4222',
  'start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server',
);
const REDIS = broker(
  'Redis',
  'HOOK_TEST_REDIS_URL',
  'redis://127.0.0.1:6379',
  'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis',
);
const MOSQUITTO = broker('Mosquitto', 'HOOK_TEST_MQTT_URL', 'mqtt://127.0.0.1:1883', 'mosquitto -d -c /etc/mosquitto/mosquitto.conf');

/** Long waits between retries: every delivery seen here is the first attempt, or one a test asked for. */
const SLOW_SCHEDULE = [3_600_000, 3_600_000, 3_600_000];
const EVENT_COUNT = 20;
/** The one event of the twenty whose body is not UTF-8. */
const BINARY_EVENT = 7;
/** How long twenty events may take to reach a broker and be recorded delivered. */
const DELIVERED_TIMEOUT_MS = 20_000;

const suffix = uniqueSuffix();
let relay: TestRelay;
let key: string;

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: SLOW_SCHEDULE, deliveryTimeoutMs: 10_000 }, { workerPollMs: 20 });
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
});

afterAll(async () => {
  await relay?.close();
});

/** One message as a consumer read it from the broker. */
interface ConsumedMessage {
  body: Buffer;
  headers: Record<string, string>;
}

async function call(method: string, path: string, json?: unknown): Promise<any> {
  const response = await api(relay.baseUrl, method, path, { key, ...(json === undefined ? {} : { json }) });
  if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body;
}

/** An endpoint whose one destination is `body`'s (the `hook listen` destination it is made with is deleted), and that destination's signing secret. */
async function endpointWith(body: Record<string, unknown>): Promise<{ endpoint: any; destination: any; secret: string }> {
  const endpoint = await createEndpoint(relay.baseUrl, key, { name: `brokers ${suffix}` });
  const destination = await call('POST', `/v1/endpoints/${endpoint.id}/destinations`, body);
  await call('DELETE', `/v1/destinations/${endpoint.destinations[0].id}`);
  const { secret } = await call('GET', `/v1/destinations/${destination.id}/secret`);
  return { endpoint, destination, secret };
}

/** Twenty events to the endpoint, one after the other; their ids and bodies. */
async function sendTwenty(endpoint: any, broker: string): Promise<Map<string, Buffer>> {
  const sent = new Map<string, Buffer>();
  for (let n = 0; n < EVENT_COUNT; n++) {
    const binary = n === BINARY_EVENT;
    const body = binary ? BODY : Buffer.from(`{ "n" : ${n}, "broker":"${broker}" }\n`);
    sent.set(await sendEvent(endpoint.url, body, { 'content-type': binary ? 'application/octet-stream' : 'application/json' }), body);
  }
  return sent;
}

/** The statuses of the endpoint's events, once all `count` are delivered. */
async function expectAllDelivered(endpointId: string, count: number): Promise<any[]> {
  const statuses = async () => (await call('GET', `/v1/events?endpoint_id=${endpointId}&limit=100`)).data.map((event: any) => event.status);
  await expect.poll(statuses, { timeout: DELIVERED_TIMEOUT_MS }).toEqual(Array.from({ length: count }, () => 'delivered'));
  return (await call('GET', `/v1/events?endpoint_id=${endpointId}&limit=100`)).data;
}

/**
 * Every sent event arrived once, byte for byte, with its event headers, signed with the
 * destination's secret; and the API shows one attempt, answered by the broker's acknowledgement.
 */
async function expectDelivered(sent: Map<string, Buffer>, messages: ConsumedMessage[], secret: string, acknowledgement: RegExp): Promise<void> {
  expect(messages).toHaveLength(sent.size);
  expect(messages.map((message) => message.headers['webhook-id']).sort()).toEqual([...sent.keys()].sort());
  for (const message of messages) {
    const id = message.headers['webhook-id']!;
    expect(Buffer.compare(message.body, sent.get(id)!), `the body of ${id}`).toBe(0);
    expect(message.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(message.headers['webhook-signature']).toMatch(/^v1,/);
    expect(verifyWebhook(message.body, message.headers, secret).id).toBe(id);
  }
  const binaryId = [...sent].find(([, body]) => body === BODY)![0];
  const event = await call('GET', `/v1/events/${binaryId}`);
  expect(event).toMatchObject({ status: 'delivered', body_encoding: 'base64', body: BODY.toString('base64') });
  expect(event.attempts).toHaveLength(1);
  expect(event.attempts[0]).toMatchObject({ n: 1, trigger: 'auto', response_status: null, error: null, response_body: expect.stringMatching(acknowledgement) });
}

describe('RabbitMQ (exchange and bound queue, auth basic guest/guest)', () => {
  const EXCHANGE = `hook-relay-test-${suffix}`;
  const QUEUE = `hook-relay-test-${suffix}`;
  const brokerUrl = new URL(RABBITMQ.url);
  const auth = { type: 'basic', username: decodeURIComponent(brokerUrl.username) || 'guest', password: decodeURIComponent(brokerUrl.password) || 'guest' };
  brokerUrl.username = '';
  brokerUrl.password = '';
  let admin: ChannelModel;
  let channel: Channel;

  beforeAll(async () => {
    await requireReachable(RABBITMQ);
    admin = await connectAmqp(RABBITMQ.url);
    channel = await admin.createChannel();
    await channel.assertExchange(EXCHANGE, 'direct', { durable: false, autoDelete: false });
    await channel.assertQueue(QUEUE, { durable: false, autoDelete: false });
    await channel.bindQueue(QUEUE, EXCHANGE, 'orders');
  });

  afterAll(async () => {
    if (channel) {
      await channel.deleteQueue(QUEUE).catch(() => {});
      await channel.deleteExchange(EXCHANGE).catch(() => {});
    }
    await admin?.close();
  });

  it('delivers twenty events as messages in the bound queue, signed, headers in the headers table', async () => {
    const { endpoint, destination, secret } = await endpointWith({ destination: { type: 'amqp', url: brokerUrl.href, exchange: EXCHANGE, routing_key: 'orders' }, auth });
    expect(destination).toMatchObject({ destination: { type: 'amqp', url: brokerUrl.href, exchange: EXCHANGE, routing_key: 'orders' }, auth: { type: 'basic', username: auth.username, secret_set: true } });
    const sent = await sendTwenty(endpoint, 'amqp');
    await expectAllDelivered(endpoint.id, EVENT_COUNT);

    const messages: ConsumedMessage[] = [];
    const messageIds: unknown[] = [];
    await expect.poll(async () => {
      for (let got = await channel.get(QUEUE, { noAck: true }); got; got = await channel.get(QUEUE, { noAck: true })) {
        messageIds.push(got.properties.messageId);
        messages.push({ body: got.content, headers: Object.fromEntries(Object.entries(got.properties.headers ?? {}).map(([name, value]) => [name, String(value)])) });
      }
      return messages.length;
    }).toBe(EVENT_COUNT);
    // webhook-id is also the AMQP message-id, which consumers deduplicate on.
    expect(messageIds).toEqual(messages.map((message) => message.headers['webhook-id']));
    await expectDelivered(sent, messages, secret, new RegExp(`^RabbitMQ confirmed: exchange ${EXCHANGE}, routing key orders$`));
  });
});

describe('NATS JetStream (a stream capturing the subject)', () => {
  const STREAM = `HOOK_RELAY_TEST_${suffix}`;
  const SUBJECT = `hook.relay-test.${suffix}.orders`;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    await requireReachable(NATS);
    nc = await connectNats({ servers: new URL(NATS.url).host });
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: STREAM, subjects: [SUBJECT], storage: StorageType.Memory });
  });

  afterAll(async () => {
    await jsm?.streams.delete(STREAM).catch(() => {});
    await nc?.close();
  });

  it('delivers twenty events into the stream, signed, headers as NATS headers; an event over max_payload fails with its size', async () => {
    const { endpoint, destination, secret } = await endpointWith({ destination: { type: 'nats', url: NATS.url, subject: SUBJECT } });
    expect(destination).toMatchObject({ destination: { type: 'nats', url: NATS.url, subject: SUBJECT }, auth: null });
    const sent = await sendTwenty(endpoint, 'nats');
    await expectAllDelivered(endpoint.id, EVENT_COUNT);

    await expect.poll(async () => (await jsm.streams.info(STREAM)).state.messages).toBe(EVENT_COUNT);
    const messages: ConsumedMessage[] = [];
    for (let seq = 1; seq <= EVENT_COUNT; seq++) {
      const stored = (await jsm.streams.getMessage(STREAM, { seq }))!;
      const headers = Object.fromEntries(stored.header.keys().map((name) => [name, stored.header.get(name)]));
      // webhook-id is also Nats-Msg-Id: the stream's duplicate window drops a redelivery.
      expect(headers['Nats-Msg-Id']).toBe(headers['webhook-id']);
      messages.push({ body: Buffer.from(stored.data), headers });
    }
    await expectDelivered(sent, messages, secret, new RegExp(`^NATS JetStream stored it: stream ${STREAM}, sequence \\d+$`));

    const maxPayload = nc.info!.max_payload;
    const large = await sendEvent(endpoint.url, Buffer.alloc(maxPayload + 1, 'a'), { 'content-type': 'text/plain' });
    await expect.poll(async () => (await call('GET', `/v1/events/${large}`)).status).toBe('retrying');
    const [attempt] = (await call('GET', `/v1/events/${large}`)).attempts;
    expect(attempt).toMatchObject({ response_status: null, response_body: null });
    expect(attempt.error).toMatch(new RegExp(`^the event is [\\d.]+ MiB \\(\\d+ bytes\\); this NATS server takes at most [\\d.]+ (MiB|KiB) \\(${maxPayload} bytes\\) \\(max_payload, counting the headers\\); raise max_payload in the server configuration, or deliver to a URL destination$`));
    expect((await jsm.streams.info(STREAM)).state.messages).toBe(EVENT_COUNT);
  });
});

describe('Redis Streams (nothing to create: XADD makes the stream)', () => {
  const STREAM = `hook-relay-test:${suffix}:orders`;
  const ORDERED = `hook-relay-test:${suffix}:ordered`;
  let redis: Redis;

  beforeAll(async () => {
    await requireReachable(REDIS);
    redis = new Redis(REDIS.url, { lazyConnect: true });
    await redis.connect();
  });

  afterAll(async () => {
    await redis?.del(STREAM, ORDERED);
    redis?.disconnect();
  });

  it('delivers twenty events as stream entries, signed, headers as one JSON field', async () => {
    const { endpoint, destination, secret } = await endpointWith({ destination: { type: 'redis', url: REDIS.url, stream: STREAM } });
    expect(destination).toMatchObject({ destination: { type: 'redis', url: REDIS.url, stream: STREAM, max_len: null } });
    const sent = await sendTwenty(endpoint, 'redis');
    await expectAllDelivered(endpoint.id, EVENT_COUNT);

    const entries = await redis.xrangeBuffer(STREAM, '-', '+');
    const messages = entries.map(([, fields]): ConsumedMessage => {
      expect([fields[0]!.toString(), fields[2]!.toString()]).toEqual(['body', 'headers']);
      return { body: fields[1]!, headers: JSON.parse(fields[3]!.toString()) };
    });
    await expectDelivered(sent, messages, secret, new RegExp(`^Redis stored it: stream ${STREAM}, entry \\d+-\\d+$`));
  });

  it('keeps each key\'s events in send order in the stream when the destination is ordered', async () => {
    const KEYS = ['alpha', 'beta', 'gamma'];
    const PER_KEY = 8;
    const { endpoint, destination } = await endpointWith({ destination: { type: 'redis', url: REDIS.url, stream: ORDERED }, ordering: { key: { header: 'x-key' } } });
    expect(destination.ordering).toEqual({ key: { header: 'x-key' }, on_give_up: 'block' });
    for (let seq = 0; seq < PER_KEY; seq++) {
      for (const orderingKey of KEYS) await sendEvent(endpoint.url, JSON.stringify({ key: orderingKey, seq }), { 'content-type': 'application/json', 'x-key': orderingKey });
    }
    await expectAllDelivered(endpoint.id, KEYS.length * PER_KEY);

    const entries = await redis.xrangeBuffer(ORDERED, '-', '+');
    const bodies = entries.map(([, fields]) => JSON.parse(fields[1]!.toString()) as { key: string; seq: number });
    expect(bodies).toHaveLength(KEYS.length * PER_KEY);
    const sequence = Array.from({ length: PER_KEY }, (_, seq) => seq);
    for (const orderingKey of KEYS) expect(bodies.filter((body) => body.key === orderingKey).map((body) => body.seq), orderingKey).toEqual(sequence);
  });
});

describe('Mosquitto (MQTT 5: a subscriber on the topic)', () => {
  const TOPIC = `hook-relay-test/${suffix}/orders`;
  let subscriber: MqttClient;
  const received: IPublishPacket[] = [];

  beforeAll(async () => {
    await requireReachable(MOSQUITTO);
    subscriber = await connectAsync(MOSQUITTO.url, { protocolVersion: 5, clientId: `hook-relay-test-${suffix}`, reconnectPeriod: 0 });
    subscriber.on('message', (_topic, _payload, packet) => received.push(packet));
    await subscriber.subscribeAsync(TOPIC, { qos: 1 });
  });

  afterAll(async () => {
    await subscriber?.endAsync();
  });

  it('delivers twenty events as QoS 1 messages, signed, headers as user properties', async () => {
    const { endpoint, destination, secret } = await endpointWith({ destination: { type: 'mqtt', url: MOSQUITTO.url, topic: TOPIC } });
    expect(destination).toMatchObject({ destination: { type: 'mqtt', url: MOSQUITTO.url, topic: TOPIC } });
    const sent = await sendTwenty(endpoint, 'mqtt');
    await expectAllDelivered(endpoint.id, EVENT_COUNT);

    await expect.poll(() => received.length).toBe(EVENT_COUNT);
    const messages = received.map((packet): ConsumedMessage => {
      expect(packet.qos).toBe(1);
      const headers = Object.fromEntries(Object.entries(packet.properties?.userProperties ?? {}).map(([name, value]) => [name, String(value)]));
      expect(packet.properties?.contentType).toBe(headers['content-type']);
      return { body: packet.payload as Buffer, headers };
    });
    await expectDelivered(sent, messages, secret, new RegExp(`^MQTT broker acknowledged \\(PUBACK\\): topic ${TOPIC}$`));
  });
});
