/**
 * RabbitMQ (AMQP 0-9-1) destinations, over amqplib. A message is published on a confirm
 * channel to the destination's exchange with its routing key, `mandatory` so that a message
 * no queue takes comes back instead of vanishing:
 * - the body is the AMQP body, byte for byte;
 * - every event header (webhook-id, webhook-timestamp, webhook-signature, content-type, …) is
 *   in the message's `headers` table; content-type is also the `contentType` property,
 *   webhook-id the `messageId` (consumers deduplicate on it) and webhook-timestamp the
 *   `timestamp`; the message is `persistent` (delivery mode 2).
 * Success is the broker's publisher confirm (basic.ack). A nack, a returned message
 * (basic.return: no queue bound for the routing key) or a channel the broker closed (no such
 * exchange, access refused) fails the attempt with the broker's reason.
 *
 * The limit is RabbitMQ's max_message_size, 128 MiB unless the operator changed it; the
 * broker does not tell a client its value, so a lowered one shows as the broker's own error.
 */
import { connect, credentials, type ChannelModel, type ConfirmChannel, type Message } from 'amqplib';
import type { QueueTarget } from '@hook/core';
import type { QueueMessage } from './types.ts';
import type { BrokerConnection, BrokerConnectOptions, QueueDriver } from './index.ts';

/** RabbitMQ's default max_message_size (since 3.8). */
const RABBITMQ_MAX_MESSAGE_BYTES = 128 * 1024 * 1024;
/** Asked for in the connection tune: RabbitMQ's own default, so large bodies go in few frames. */
const FRAME_MAX_BYTES = 131_072;

export const amqpDriver: QueueDriver = {
  broker: 'RabbitMQ',
  schemes: { 'amqp:': { secure: false, port: 5672 }, 'amqps:': { secure: true, port: 5671 } },
  connect: connectAmqp,
};

async function connectAmqp(options: BrokerConnectOptions): Promise<BrokerConnection> {
  const { url, auth, tls } = options;
  // Without auth the AMQP convention applies: guest/guest (which RabbitMQ accepts only from its own host).
  const username = auth?.username ?? 'guest';
  const password = auth?.password ?? 'guest';
  let model: ChannelModel;
  try {
    model = await connect(
      { protocol: options.secure ? 'amqps' : 'amqp', hostname: options.address, port: options.port, vhost: url.pathname.slice(1) || '/', frameMax: FRAME_MAX_BYTES },
      {
        credentials: credentials.plain(username, password),
        timeout: options.timeoutMs,
        clientProperties: { connection_name: 'hook relay' },
        ...(options.servername ? { servername: options.servername } : {}),
        ...(tls?.ca ? { ca: tls.ca } : {}),
        ...(tls?.client_certificate ? { cert: tls.client_certificate } : {}),
        ...(tls?.client_key ? { key: tls.client_key } : {}),
      },
    );
  } catch (error) {
    const text = describeAmqpError(error, username);
    // A socket's error keeps its code (ECONNREFUSED …) for the publisher's words.
    throw text === (error as Error)?.message ? error : new Error(text, { cause: error });
  }
  return new AmqpConnection(model);
}

/** A returned message waiting for the confirm of its publish, which RabbitMQ sends right after the return. */
interface Returned {
  exchange: string;
  routingKey: string;
  messageId: string | undefined;
  replyCode: number;
  replyText: string;
}

class AmqpConnection implements BrokerConnection {
  readonly limit = {
    bytes: RABBITMQ_MAX_MESSAGE_BYTES,
    holder: 'RabbitMQ',
    setting: 'max_message_size, its default',
    fix: 'raise max_message_size in rabbitmq.conf if this broker allows more',
  };
  readonly dropped: Promise<string>;
  readonly #model: ChannelModel;
  /** The confirm channel, opened again after the broker closed it (a publish to a missing exchange closes the channel, not the connection). */
  #channel: Promise<ConfirmChannel> | null = null;
  /** Why the broker closed a channel: the reason a publish on it failed. */
  readonly #channelErrors = new WeakMap<ConfirmChannel, Error>();
  readonly #returned: Returned[] = [];

  constructor(model: ChannelModel) {
    this.#model = model;
    this.dropped = new Promise((resolve) => {
      // An 'error' is always followed by 'close'; listening keeps it from being thrown.
      model.on('error', () => {});
      model.on('close', (error?: Error) => resolve(error ? describeAmqpError(error) : 'the connection closed'));
      model.on('blocked', () => {});
    });
  }

  messageBytes(_target: QueueTarget, message: QueueMessage): number {
    return message.body.length;
  }

  #openChannel(): Promise<ConfirmChannel> {
    if (this.#channel) return this.#channel;
    const opening = this.#model.createConfirmChannel().then((channel) => {
      channel.on('error', (error: Error) => {
        this.#channelErrors.set(channel, error);
      });
      channel.on('close', () => {
        if (this.#channel === opening) this.#channel = null;
      });
      channel.on('return', (message: Message) => {
        this.#returned.push({
          exchange: message.fields.exchange,
          routingKey: message.fields.routingKey,
          messageId: message.properties.messageId as string | undefined,
          replyCode: (message.fields as unknown as { replyCode: number }).replyCode,
          replyText: (message.fields as unknown as { replyText: string }).replyText,
        });
      });
      return channel;
    });
    this.#channel = opening;
    opening.catch(() => {
      if (this.#channel === opening) this.#channel = null;
    });
    return opening;
  }

  async publish(target: QueueTarget, message: QueueMessage): Promise<string> {
    if (target.type !== 'amqp') throw new Error(`an ${target.type} target on a RabbitMQ connection`);
    const { exchange, routing_key: routingKey } = target;
    const channel = await this.#openChannel();
    const messageId = message.headers['webhook-id'];
    const timestamp = Number(message.headers['webhook-timestamp']);
    const where = `${exchange === '' ? 'the default exchange' : `exchange ${exchange}`}, routing key ${routingKey}`;
    return await new Promise<string>((resolve, reject) => {
      const confirmed = (error: unknown): void => {
        if (error) {
          const closedBy = this.#channelErrors.get(channel);
          reject(new Error(closedBy ? `RabbitMQ refused the message: ${describeAmqpError(closedBy)}` : `RabbitMQ refused the message (nack) for ${where}: a queue may be full (overflow reject-publish) or the broker short of resources`));
          return;
        }
        const index = this.#returned.findIndex((r) => r.exchange === exchange && r.routingKey === routingKey && r.messageId === messageId);
        if (index >= 0) {
          const [returned] = this.#returned.splice(index, 1);
          const reason = returned!.replyCode === 312 ? `no queue is bound to ${where}` : `${returned!.replyText} (${returned!.replyCode}) for ${where}`;
          reject(new Error(`RabbitMQ returned the message: ${reason}; bind a queue to the exchange for this routing key or change the destination's routing key`));
          return;
        }
        resolve(`RabbitMQ confirmed: ${where}`);
      };
      try {
        channel.publish(
          exchange,
          routingKey,
          message.body,
          {
            persistent: true,
            mandatory: true,
            headers: message.headers,
            ...(message.headers['content-type'] ? { contentType: message.headers['content-type'] } : {}),
            ...(messageId ? { messageId } : {}),
            timestamp: Number.isSafeInteger(timestamp) ? timestamp : Math.floor(Date.now() / 1000),
          },
          confirmed,
        );
      } catch (error) {
        // amqplib throws when the headers table passes its 64 KiB encoding buffer, or when the channel is closing.
        reject(new Error(`RabbitMQ message not sent: ${(error as Error).message}`));
      }
    });
  }

  async close(): Promise<void> {
    await this.#model.close().catch(() => {});
  }
}

/** The broker's reason in a sentence: amqplib's texts quote the AMQP close frame ("… 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - …"). */
function describeAmqpError(error: unknown, username?: string): string {
  const message = (error as Error)?.message ?? String(error);
  if (/ACCESS.REFUSED/.test(message) && username !== undefined && /Login was refused|authentication/i.test(message)) {
    return `RabbitMQ refused the sign-in of user ${JSON.stringify(username)} (ACCESS_REFUSED): check the destination's username and password`;
  }
  const frame = /(\d{3}) \(([A-Z-]+)\) with message "(.*)"$/s.exec(message);
  if (frame) {
    const [, code, name, text] = frame;
    const detail = text!.replace(/^[A-Z_]+ - /, '');
    const fix = name === 'NOT-FOUND' ? '; create it or change the destination' : name === 'ACCESS-REFUSED' ? '; grant the user access or change the destination' : '';
    return `${detail} (${code} ${name!.replaceAll('-', '_')})${fix}`;
  }
  return message;
}
