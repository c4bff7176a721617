import type { ListenEvent } from '@hook/db';
import type { FinishedAttempt } from '../delivery/attempt.ts';

/** Someone watching an account's events live: a tail or listen session. */
export interface StreamSubscriber {
  accountId: string;
  onEvent?(event: ListenEvent): void;
  onAttempt?(finished: FinishedAttempt): void;
}

/**
 * This process's live stream fan-out: ingest announces each stored event and the
 * delivery code each recorded attempt, and every session watching that account hears
 * it. In memory and per process; sessions catch up on what other processes stored from
 * the database (see ListenSession).
 */
export class StreamHub {
  readonly #byAccount = new Map<string, Set<StreamSubscriber>>();

  /** Whether anyone watches this account (so ingest can skip building the announcement). */
  watches(accountId: string): boolean {
    return this.#byAccount.has(accountId);
  }

  /** Starts announcing to a subscriber; returns the function that stops it. */
  subscribe(subscriber: StreamSubscriber): () => void {
    let subscribers = this.#byAccount.get(subscriber.accountId);
    if (!subscribers) this.#byAccount.set(subscriber.accountId, (subscribers = new Set()));
    subscribers.add(subscriber);
    return () => {
      subscribers.delete(subscriber);
      if (subscribers.size === 0 && this.#byAccount.get(subscriber.accountId) === subscribers) this.#byAccount.delete(subscriber.accountId);
    };
  }

  /** An event was committed. */
  eventStored(event: ListenEvent): void {
    for (const subscriber of this.#byAccount.get(event.accountId) ?? []) subscriber.onEvent?.(event);
  }

  /** An attempt was recorded. */
  attemptFinished(finished: FinishedAttempt): void {
    for (const subscriber of this.#byAccount.get(finished.accountId) ?? []) subscriber.onAttempt?.(finished);
  }
}

/** How the stream shows an event (no body). */
export function eventSummary(event: ListenEvent) {
  return {
    id: event.id,
    endpoint_id: event.endpointId,
    type: event.type,
    method: event.method,
    path: event.path,
    query: event.query,
    content_type: event.contentType,
    size: event.size,
    received_at: event.receivedAt.toISOString(),
    status: event.status,
  };
}
