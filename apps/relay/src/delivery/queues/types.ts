/**
 * Queue destinations (docs/delivery.md#queue-destinations): an event delivered as a
 * message to a broker. Each type is one module (amqp.ts, nats.ts, redis.ts, mqtt.ts)
 * implementing QueueDriver, plus its tests; index.ts (QueuePublisher) keeps one
 * connection per broker and destination credentials, and routes each message to its
 * type's driver.
 */
import type { DestinationAuth, DestinationTls, QueueTarget } from '@hook/core';

/** Where one message goes: the broker (its URL and sign-in) and the target on it. */
export interface QueueDestination {
  /** The broker's URL: amqp(s)://host:port/vhost, nats://host:port, redis(s)://host:port/db, mqtt(s)://host:port. Never holds a password (auth does). */
  url: string;
  target: QueueTarget;
  /** Broker sign-in: basic (username and password) only; null: none. */
  auth: Extract<DestinationAuth, { type: 'basic' }> | null;
  /** Client certificate and CA for a TLS broker URL; null: the system's CAs, no client certificate. */
  tls: DestinationTls | null;
}

/** One message: the body byte-exact, and the signature and event headers (webhook-id, webhook-timestamp, webhook-signature, content-type, …). */
export interface QueueMessage {
  body: Buffer;
  headers: Record<string, string>;
}
