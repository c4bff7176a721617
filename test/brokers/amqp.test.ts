/**
 * RabbitMQ destinations against a real RabbitMQ (AMQP 0-9-1): the body byte for byte, the
 * headers in the headers table and the AMQP properties, success on the publisher confirm,
 * and the broker's refusals in words: a message no queue takes (returned), an exchange that
 * does not exist, a wrong password, a message over max_message_size.
 */
import { connect, type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueueDestination } from '../../apps/relay/src/delivery/queues/types.ts';
import { BODY, HEADERS, broker, localPublisher, message, requireReachable, uniqueSuffix } from './support.ts';

const RABBITMQ = broker('RabbitMQ', 'HOOK_TEST_AMQP_URL', 'amqp://guest:guest@127.0.0.1:5672', 'rabbitmq-server -detached');
/** The destination URL holds no password (auth does): the broker URL less its credentials. */
const brokerUrl = new URL(RABBITMQ.url);
const auth = { type: 'basic' as const, username: decodeURIComponent(brokerUrl.username) || 'guest', password: decodeURIComponent(brokerUrl.password) || 'guest' };
brokerUrl.username = '';
brokerUrl.password = '';

const suffix = uniqueSuffix();
const EXCHANGE = `hook-test-${suffix}`;
const QUEUE = `hook-test-${suffix}`;
const publisher = localPublisher();
let admin: ChannelModel;
let channel: Channel;

function destination(overrides: Partial<{ exchange: string; routing_key: string }> = {}, rest: Partial<QueueDestination> = {}): QueueDestination {
  return { url: brokerUrl.href, target: { type: 'amqp', exchange: EXCHANGE, routing_key: 'orders', ...overrides }, auth, tls: null, ...rest };
}

beforeAll(async () => {
  await requireReachable(RABBITMQ);
  admin = await connect(RABBITMQ.url);
  channel = await admin.createChannel();
  await channel.assertExchange(EXCHANGE, 'direct', { durable: false, autoDelete: false });
  await channel.assertQueue(QUEUE, { durable: false, autoDelete: false });
  await channel.bindQueue(QUEUE, EXCHANGE, 'orders');
});

afterAll(async () => {
  await publisher.close();
  if (channel) {
    await channel.deleteQueue(QUEUE).catch(() => {});
    await channel.deleteExchange(EXCHANGE).catch(() => {});
  }
  await admin?.close();
});

/** The next message in the test queue, waiting for it to arrive. */
async function nextMessage(): Promise<GetMessage> {
  let got: GetMessage | false = false;
  await expect.poll(async () => (got = await channel.get(QUEUE, { noAck: true }))).toBeTruthy();
  return got as unknown as GetMessage;
}

describe('RabbitMQ queue destination', () => {
  it('publishes the body byte for byte with the headers and properties, and answers ok on the confirm', async () => {
    const result = await publisher.publish(destination(), message());
    expect(result).toMatchObject({ status: null, kind: 'ok', body: `RabbitMQ confirmed: exchange ${EXCHANGE}, routing key orders`, error: null, retryAfterMs: null });
    const got = await nextMessage();
    expect(Buffer.compare(got.content, BODY)).toBe(0);
    expect(got.fields).toMatchObject({ exchange: EXCHANGE, routingKey: 'orders' });
    expect(got.properties).toMatchObject({ contentType: 'application/json', messageId: HEADERS['webhook-id'], timestamp: 1767225600, deliveryMode: 2 });
    expect(got.properties.headers).toEqual(HEADERS);
  });

  it('fails a message no queue is bound for: RabbitMQ returned it', async () => {
    const result = await publisher.publish(destination({ routing_key: 'nobody' }), message());
    expect(result).toMatchObject({ status: null, kind: 'broker_error', body: null });
    expect(result.error).toBe(`RabbitMQ returned the message: no queue is bound to exchange ${EXCHANGE}, routing key nobody; bind a queue to the exchange for this routing key or change the destination's routing key`);
  });

  it('fails a message to an exchange that does not exist, and the next message on the connection goes through', async () => {
    const missing = await publisher.publish(destination({ exchange: `${EXCHANGE}-missing` }), message());
    expect(missing).toMatchObject({ kind: 'broker_error', body: null });
    expect(missing.error).toBe(`RabbitMQ refused the message: no exchange '${EXCHANGE}-missing' in vhost '/' (404 NOT_FOUND); create it or change the destination`);
    // The broker closed the channel, not the connection: the publisher opens another channel.
    expect(await publisher.publish(destination(), message())).toMatchObject({ kind: 'ok' });
    expect(Buffer.compare((await nextMessage()).content, BODY)).toBe(0);
  });

  it('fails with a clear error when the password is wrong', async () => {
    const result = await publisher.publish(destination({}, { auth: { type: 'basic', username: auth.username, password: `${auth.password}-wrong` } }), message());
    expect(result).toMatchObject({ kind: 'broker_error', body: null });
    expect(result.error).toBe(`could not connect to RabbitMQ at ${brokerUrl.host}: RabbitMQ refused the sign-in of user "${auth.username}" (ACCESS_REFUSED): check the destination's username and password`);
  });

  it('fails a message over RabbitMQ max_message_size without sending it', async () => {
    const result = await publisher.publish(destination(), message({ body: Buffer.alloc(128 * 1024 * 1024 + 1) }));
    expect(result).toMatchObject({ kind: 'broker_error', body: null });
    expect(result.error).toBe(
      'the event is 128 MiB (134217729 bytes); RabbitMQ takes at most 128 MiB (134217728 bytes) (max_message_size, its default); raise max_message_size in rabbitmq.conf if this broker allows more, or deliver to a URL destination',
    );
    expect((await channel.checkQueue(QUEUE)).messageCount).toBe(0);
  });
});
