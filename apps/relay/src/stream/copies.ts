/**
 * Mirror copies across relay processes. A `hook listen` session that sends a delivery
 * shows it to the other sessions of its destination in this process directly
 * (ListenerRegistry.mirror); sessions in other processes learn of it as a `copy` fact on
 * the stream channel (peers.ts): the event and destination ids and the attempt number,
 * not the body, which would not fit PostgreSQL's 8000-byte NOTIFY payload. Each process
 * with a session of that destination reads the delivery (read-deliveries.ts), prepares
 * it as its destination would get it (transformation, signature: outgoingCopy) and shows
 * it. Likewise a session on an endpoint without a `cli` destination, which mirrors new
 * events, is shown events other processes stored.
 *
 * Reads are batched: the copies that arrive together are read with one statement.
 */
import { STREAM_PROTOCOL_VERSION, type DeliveryMessage } from '@hook/core';
import { readDeliveries, type ClaimedDelivery } from '@hook/db';
import { deliveryHeaders, outgoingCopy, type AttemptContext, type OutgoingDelivery } from '../delivery/attempt.ts';
import { eventSummary } from './hub.ts';
import type { ListenerRegistry } from './listeners.ts';

/** The `delivery` message a listener gets for an outgoing delivery. */
export function deliveryMessage(outgoing: OutgoingDelivery, deliveryId: string): DeliveryMessage {
  const { delivery, request } = outgoing;
  const summary = eventSummary({ ...delivery, status: delivery.status });
  return {
    type: 'delivery',
    version: STREAM_PROTOCOL_VERSION,
    delivery_id: deliveryId,
    attempt: delivery.attemptCount + 1,
    event: request === null ? summary : {
      ...summary,
      ...(outgoing.newType ? { type: outgoing.newType.type } : {}),
      path: request.path, query: request.query, content_type: request.headers['content-type'] ?? null, size: outgoing.body.length,
    },
    headers: outgoing.headers,
    body_base64: outgoing.body.toString('base64'),
  };
}

/** The stored request as it arrived, signed with its destination's secrets: a mirroring session's copy of a new event. */
export function untouchedMessage(delivery: Pick<ClaimedDelivery, 'id' | 'headers' | 'body' | 'secrets'> & Parameters<typeof eventSummary>[0], timestampSeconds: number): DeliveryMessage {
  return {
    type: 'delivery',
    version: STREAM_PROTOCOL_VERSION,
    delivery_id: '',
    attempt: 1,
    event: eventSummary(delivery),
    headers: deliveryHeaders({ id: delivery.id, headers: delivery.headers, body: delivery.body, secrets: delivery.secrets, attemptCount: 0 }, timestampSeconds),
    body_base64: delivery.body.toString('base64'),
  };
}

/** One copy to show: the delivery of `eventId` to `destinationId`, and who gets it. */
interface WantedCopy {
  eventId: string;
  destinationId: string;
  /** The attempt the copy shows (the delivery's count may have moved on since); absent for a new event. */
  attempt?: number;
  /** true: the stored request untouched (a mirroring session's copy of a new event); false: as the destination gets it. */
  untouched: boolean;
  show: (message: DeliveryMessage) => void;
}

export class DeliveryCopies {
  readonly #context: AttemptContext;
  readonly #listeners: ListenerRegistry;
  readonly #onError: (error: unknown) => void;
  #wanted: WantedCopy[] = [];
  #scheduled = false;

  constructor(options: { context: AttemptContext; listeners: ListenerRegistry; onError: (error: unknown) => void }) {
    this.#context = options.context;
    this.#listeners = options.listeners;
    this.#onError = options.onError;
  }

  /** Another process sent a delivery of a `cli` destination: this process's sessions of it see a copy. */
  sentElsewhere(fact: { eventId: string; destinationId: string; attempt: number }): void {
    if (!this.#listeners.has(fact.destinationId)) return;
    this.#want({ ...fact, untouched: false, show: (message) => this.#listeners.mirror(fact.destinationId, null, message) });
  }

  /** Another process stored an event on an endpoint a mirroring session here listens to: it sees the event, signed as `destinationId`'s deliveries are. */
  storedElsewhere(eventId: string, destinationId: string, show: (message: DeliveryMessage) => void): void {
    this.#want({ eventId, destinationId, untouched: true, show });
  }

  #want(copy: WantedCopy): void {
    this.#wanted.push(copy);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const wanted = this.#wanted;
      this.#wanted = [];
      this.#show(wanted).catch(this.#onError);
    });
  }

  async #show(wanted: WantedCopy[]): Promise<void> {
    const read = await readDeliveries(this.#context.orm, wanted);
    const byKey = new Map(read.map((delivery) => [`${delivery.id} ${delivery.destinationId}`, delivery]));
    const nowSeconds = Math.floor((this.#context.now ?? Date.now)() / 1000);
    for (const copy of wanted) {
      const delivery = byKey.get(`${copy.eventId} ${copy.destinationId}`);
      if (!delivery) continue; // removed meanwhile
      if (copy.untouched) {
        copy.show(untouchedMessage({ ...delivery, status: delivery.status }, nowSeconds));
        continue;
      }
      const outgoing = await outgoingCopy(this.#context, { ...delivery, attemptCount: (copy.attempt ?? 1) - 1 });
      if (outgoing) copy.show(deliveryMessage(outgoing, ''));
    }
  }
}
