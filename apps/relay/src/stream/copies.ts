/**
 * Mirror copies: a copy shows what was sent, prepared once, where it was sent. When a
 * `hook listen` session sends a delivery, the other sessions of its destination get the
 * very `delivery` message it sent; when a URL destination that a session mirrors (an
 * endpoint without a `cli` destination) is sent a delivery, the mirroring sessions get
 * the request it was sent (app.ts, AttemptContext.onSend). In this process directly
 * (ListenerRegistry.mirror); in the others as a `copy` fact on the stream channel that
 * carries the message whole (peers.ts, in parts when it is larger than one payload). No
 * process prepares a copy again: a destination's transformation runs once per attempt,
 * and its CPU is charged once.
 */
import { STREAM_PROTOCOL_VERSION, type DeliveryMessage } from '@hook/core';
import type { OutgoingDelivery } from '../delivery/attempt.ts';
import { eventSummary, type StreamHub } from './hub.ts';
import type { ListenerRegistry } from './listeners.ts';

/** The `delivery` message a listener gets for an outgoing delivery. */
export function deliveryMessage(outgoing: OutgoingDelivery, deliveryId: string): DeliveryMessage {
  const { delivery, request } = outgoing;
  const event = eventSummary(delivery);
  if (request !== null) {
    // What a transformation made of the request.
    if (outgoing.newType) event.type = outgoing.newType.type;
    event.path = request.path;
    event.query = request.query;
    event.content_type = request.headers['content-type'] ?? null;
    event.size = outgoing.body.length;
  }
  return {
    type: 'delivery',
    version: STREAM_PROTOCOL_VERSION,
    delivery_id: deliveryId,
    attempt: delivery.attemptCount + 1,
    event,
    headers: outgoing.headers,
    body_base64: outgoing.body.toString('base64'),
  };
}

/** A delivery to a URL is going out: the sessions mirroring its destination, here and elsewhere, are shown what it sends. */
export function copyUrlDelivery(hub: StreamHub, listeners: ListenerRegistry, outgoing: OutgoingDelivery): void {
  const { delivery } = outgoing;
  if (!hub.mirrored(delivery.destinationId)) return;
  const message = deliveryMessage(outgoing, '');
  listeners.mirror(delivery.destinationId, null, message);
  hub.copySent(delivery.accountId, delivery.destinationId, message);
}
