/**
 * What a destination can be set to beyond "POST with a signature" (docs/delivery.md):
 * how it signs in to its receiver (auth), the client certificate it presents (tls), the
 * broker a queue destination publishes to, how its deliveries are ordered and delayed,
 * and which signature scheme signs them. The shapes here are what the API takes and the
 * attempt path reads; their secret parts are stored sealed and never shown.
 */
import type { DedupeSettings } from './dedupe.ts';

/** Destinations that deliver an event as a message to a broker. */
export const QUEUE_DESTINATION_TYPES = ['amqp', 'nats', 'redis', 'mqtt'] as const;
export type QueueDestinationType = (typeof QUEUE_DESTINATION_TYPES)[number];

export function isQueueDestinationType(type: string): type is QueueDestinationType {
  return (QUEUE_DESTINATION_TYPES as readonly string[]).includes(type);
}

/**
 * Where a queue destination publishes, beside its broker URL (`url`): an AMQP exchange
 * and routing key, a NATS JetStream subject, a Redis stream (with an approximate length
 * cap), an MQTT topic.
 */
export type QueueTarget =
  | { type: 'amqp'; exchange: string; routing_key: string }
  | { type: 'nats'; subject: string }
  | { type: 'redis'; stream: string; max_len: number | null }
  | { type: 'mqtt'; topic: string };

/** How a destination signs in to its receiver; the secret parts (password, token, header values, client secret) are write-only. */
export type DestinationAuth =
  | { type: 'basic'; username: string; password: string }
  | { type: 'bearer'; token: string }
  | { type: 'headers'; headers: Record<string, string> }
  | { type: 'oauth2'; token_url: string; client_id: string; client_secret: string; scope: string | null; audience: string | null };

/** A destination's TLS settings: the client certificate it presents (mTLS) and a CA to trust for a private server. PEM text. */
export interface DestinationTls {
  client_certificate: string | null;
  client_key: string | null;
  ca: string | null;
}

/** What an ordered destination does when an event gives up (failed all its attempts): hold its key until a person acts, or go on to the next. */
export const ORDERING_ON_GIVE_UP = ['block', 'skip'] as const;
export type OrderingOnGiveUp = (typeof ORDERING_ON_GIVE_UP)[number];

/**
 * An ordered destination (docs/delivery.md#ordered-delivery): within a key (read from the
 * event as dedupe reads its key; null: one key for every event), event N+1 is not attempted
 * until event N succeeded or gave up.
 */
export interface OrderingSettings {
  key: DedupeSettings | null;
  on_give_up: OrderingOnGiveUp;
}

/** Signature schemes: Standard Webhooks `v1` (HMAC-SHA256 with a whsec_ secret) or `v1a` (ed25519 with a whsk_ private key). */
export const SIGNATURE_SCHEMES = ['v1', 'v1a'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

/** The longest delay a destination may hold an event for before its first attempt. */
export const DELIVERY_DELAY_MAX_SECONDS = 86_400;
