/**
 * The bench's side of queue destinations (bench:delivery's phase 5): for each broker type,
 * a target no other run uses, made ready before the relay publishes to it, and a consumer
 * that reports every message's `webhook-id`, body and arrival time. How each driver
 * carries the headers (apps/relay/src/delivery/queues/*.ts) decides where the id is read:
 *
 * - amqp: an exchange (direct) with an exclusive queue bound for the routing key, consumed
 *   with acknowledgements; the id is the `webhook-id` entry of the message's headers table
 *   (also its messageId).
 * - nats: a JetStream stream (memory storage) capturing the subject, read by an ordered
 *   consumer; the id is the `webhook-id` message header.
 * - redis: XREAD (blocking, 1,000 entries at a time) on the stream; the id is in the
 *   entry's `headers` field, one JSON object.
 * - mqtt: a QoS 1 subscription over MQTT 5; the id is the `webhook-id` user property.
 *
 * A broker that does not answer on its port is reported (null), not an error: benches may
 * skip what the machine lacks. Each consumer removes what it made when closed.
 */
import { randomBytes } from 'node:crypto';
import { connect as tcpConnect } from 'node:net';
import { connect as amqpConnect } from 'amqplib';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { Redis } from 'ioredis';
import { connectAsync as mqttConnect } from 'mqtt';

export const QUEUE_TYPES = ['amqp', 'nats', 'redis', 'mqtt'] as const;
export type QueueType = (typeof QUEUE_TYPES)[number];

/** Where each broker listens on this machine (the services the issue names). */
export const BROKER_URLS: Record<QueueType, string> = {
  amqp: 'amqp://127.0.0.1:5672',
  nats: 'nats://127.0.0.1:4222',
  redis: 'redis://127.0.0.1:6379',
  mqtt: 'mqtt://127.0.0.1:1883',
};

/** The brokers' names, for the report. */
export const BROKER_NAMES: Record<QueueType, string> = { amqp: 'RabbitMQ', nats: 'NATS JetStream', redis: 'Redis Streams', mqtt: 'Mosquitto (MQTT)' };

/** One message as consumed: the `webhook-id` it carried (undefined: none), its body, performance.now() on arrival. */
export type OnMessage = (id: string | undefined, body: Buffer, atMs: number) => void;

export interface QueueConsumer {
  /** The `destination` of the endpoint that publishes to this consumer's target. */
  destination: Record<string, unknown>;
  close(): Promise<void>;
}

/** How long the bench waits for a broker's port before calling it unreachable. */
const REACH_TIMEOUT_MS = 2000;
/** Redis: entries per XREAD, and how long one blocks (so that closing never waits longer). */
const REDIS_READ_COUNT = 1000;
const REDIS_BLOCK_MS = 500;
/** RabbitMQ: unacknowledged messages the broker may push ahead of our acks. */
const AMQP_PREFETCH = 1000;

/** Whether anything accepts a TCP connection at the broker's address. */
export function brokerReachable(type: QueueType): Promise<boolean> {
  const url = new URL(BROKER_URLS[type]);
  return new Promise((done) => {
    const socket = tcpConnect({ host: url.hostname, port: Number(url.port), timeout: REACH_TIMEOUT_MS });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      done(false);
    });
    socket.once('error', () => done(false));
  });
}

/** Makes the target ready on the broker of `type` and starts consuming from it. */
export async function startQueueConsumer(type: QueueType, onMessage: OnMessage): Promise<QueueConsumer> {
  const suffix = `${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
  switch (type) {
    case 'amqp':
      return startAmqp(suffix, onMessage);
    case 'nats':
      return startNats(suffix, onMessage);
    case 'redis':
      return startRedis(suffix, onMessage);
    case 'mqtt':
      return startMqtt(suffix, onMessage);
  }
}

async function startAmqp(suffix: string, onMessage: OnMessage): Promise<QueueConsumer> {
  const exchange = `hook-bench-${suffix}`;
  const routingKey = 'bench';
  const model = await amqpConnect(BROKER_URLS.amqp);
  model.on('error', () => {});
  const channel = await model.createChannel();
  await channel.assertExchange(exchange, 'direct', { durable: false, autoDelete: false });
  const { queue } = await channel.assertQueue('', { exclusive: true, durable: false });
  await channel.bindQueue(queue, exchange, routingKey);
  await channel.prefetch(AMQP_PREFETCH);
  await channel.consume(queue, (message) => {
    if (!message) return;
    const atMs = performance.now();
    const id = message.properties.headers?.['webhook-id'];
    onMessage(typeof id === 'string' ? id : undefined, message.content, atMs);
    channel.ack(message);
  }, { noAck: false });
  return {
    destination: { type: 'amqp', url: BROKER_URLS.amqp, exchange, routing_key: routingKey },
    async close() {
      await channel.deleteExchange(exchange).catch(() => {});
      await model.close().catch(() => {});
    },
  };
}

async function startNats(suffix: string, onMessage: OnMessage): Promise<QueueConsumer> {
  const stream = `HOOK_BENCH_${suffix}`;
  const subject = `hook.bench.${suffix}`;
  const nc: NatsConnection = await natsConnect({ servers: new URL(BROKER_URLS.nats).host, name: 'hook bench consumer' });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [subject], storage: StorageType.Memory });
  const consumer = await jetstream(nc).consumers.get(stream);
  const messages = await consumer.consume();
  const reading = (async () => {
    for await (const message of messages) {
      const atMs = performance.now();
      onMessage(message.headers?.get('webhook-id') || undefined, Buffer.from(message.data), atMs);
    }
  })();
  return {
    destination: { type: 'nats', url: BROKER_URLS.nats, subject },
    async close() {
      await messages.close().catch(() => {});
      await reading.catch(() => {});
      await jsm.streams.delete(stream).catch(() => {});
      await nc.close().catch(() => {});
    },
  };
}

async function startRedis(suffix: string, onMessage: OnMessage): Promise<QueueConsumer> {
  const stream = `hook-bench:${suffix}`;
  const url = new URL(BROKER_URLS.redis);
  const client = new Redis({ host: url.hostname, port: Number(url.port), lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  await client.connect();
  let stopped = false;
  const reading = (async () => {
    let lastId = '0';
    while (!stopped) {
      const answer = (await client.xreadBuffer('COUNT', REDIS_READ_COUNT, 'BLOCK', REDIS_BLOCK_MS, 'STREAMS', stream, lastId)) as [Buffer, [Buffer, Buffer[]][]][] | null;
      if (!answer) continue;
      const atMs = performance.now();
      for (const [, entries] of answer) {
        for (const [entryId, fields] of entries) {
          lastId = entryId.toString();
          let body: Buffer | undefined;
          let id: string | undefined;
          for (let i = 0; i + 1 < fields.length; i += 2) {
            const name = fields[i]!.toString();
            if (name === 'body') body = fields[i + 1];
            else if (name === 'headers') {
              const value: unknown = JSON.parse(fields[i + 1]!.toString('utf8'))['webhook-id'];
              if (typeof value === 'string') id = value;
            }
          }
          onMessage(id, body ?? Buffer.alloc(0), atMs);
        }
      }
    }
  })();
  return {
    destination: { type: 'redis', url: BROKER_URLS.redis, stream },
    async close() {
      stopped = true;
      await reading.catch(() => {});
      await client.del(stream).catch(() => {});
      await client.quit().catch(() => client.disconnect());
    },
  };
}

async function startMqtt(suffix: string, onMessage: OnMessage): Promise<QueueConsumer> {
  const topic = `hook-bench/${suffix}`;
  const client = await mqttConnect(BROKER_URLS.mqtt, { protocolVersion: 5, clientId: `hook-bench-${suffix}`, clean: true, reconnectPeriod: 0 });
  client.on('error', () => {});
  client.on('message', (_topic, payload, packet) => {
    const atMs = performance.now();
    const id = packet.properties?.userProperties?.['webhook-id'];
    onMessage(typeof id === 'string' ? id : undefined, payload, atMs);
  });
  await client.subscribeAsync(topic, { qos: 1 });
  return {
    destination: { type: 'mqtt', url: BROKER_URLS.mqtt, topic },
    async close() {
      await client.endAsync().catch(() => {});
    },
  };
}
