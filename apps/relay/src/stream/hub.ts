import type { DeliveryMessage, EventStatus } from '@hook/core';
import type { ReceivedEvent } from '@hook/db';
import type { FinishedAttempt } from '../delivery/attempt.ts';

/** Someone watching an account's events live: a tail or listen session. */
/** A request just stored, as ingest hands it to the live stream; `claimedHere`: its delivery went to this process's worker or a listen session at once. */
export type StoredEvent = ReceivedEvent & { status: EventStatus; claimedHere?: boolean };

export interface StreamSubscriber {
  accountId: string;
  /** An event this process stored (with its body). */
  onEvent?(event: StoredEvent): void;
  /**
   * An event stored by any process, as the stream shows it. A subscriber with `onEvent`
   * as well gets this only for events stored by other processes.
   */
  onEventSummary?(summary: EventSummary): void;
  /** An attempt recorded by any process. */
  onAttempt?(finished: FinishedAttempt): void;
}

/** What one process tells the others (peers.ts): an event stored or an attempt recorded there. */
export type StreamFact =
  | { kind: 'event'; accountId: string; event: EventSummary }
  | { kind: 'attempt'; finished: FinishedAttempt }
  /** A delivery went out (to a listener, or a URL a mirroring session watches): sessions of its destination in other processes show a copy (copies.ts). */
  | CopyFact;

/** A copy of what was sent, prepared where it was sent: the `delivery` message as is (its `delivery_id` is the receiving session's to give). */
export interface CopyFact { kind: 'copy'; accountId: string; destinationId: string; message: DeliveryMessage }

/** The other relay processes, as the hub sees them (peers.ts). */
export interface StreamPeers {
  /** Whether a session on another process watches this account. */
  watch(accountId: string): boolean;
  /** Hands a fact to the other processes. */
  publish(fact: StreamFact): void;
  /** The set of accounts watched in this process changed. */
  localWatchesChanged(): void;
}

/**
 * This process's live stream fan-out: ingest announces each stored event and the
 * delivery code each recorded attempt, and every session watching that account hears
 * it. With peers (peers.ts), facts for accounts watched in other processes go to them
 * too, and theirs come here: tail sessions see every process. Listen sessions get this
 * process's events whole (they need the body); another process's event wakes them to
 * read it from the database at once (see ListenSession).
 */
export class StreamHub {
  readonly #byAccount = new Map<string, Set<StreamSubscriber>>();
  /** Accounts → how many of their sessions here want other processes' facts. */
  readonly #wantingPeers = new Map<string, number>();
  #peers: StreamPeers | undefined;
  #onCopy: ((fact: CopyFact) => void) | undefined;

  /** Shares facts with the other relay processes from now on. */
  connectPeers(peers: StreamPeers): void {
    this.#peers = peers;
  }

  /** Hands other processes' `copy` facts to this process's sessions (copies.ts). */
  receiveCopiesWith(onCopy: (fact: CopyFact) => void): void {
    this.#onCopy = onCopy;
  }

  /** Whether anyone, here or in another process, watches this account (so ingest can skip building the announcement). */
  watches(accountId: string): boolean {
    return this.#byAccount.has(accountId) || (this.#peers?.watch(accountId) ?? false);
  }

  /** Whether a session in this process wants other processes' facts for this account (tail and listen sessions do). */
  watchesHere(accountId: string): boolean {
    return this.#wantingPeers.has(accountId);
  }

  /** The accounts whose facts this process wants from the others. */
  watchedAccounts(): string[] {
    return [...this.#wantingPeers.keys()];
  }

  /** Starts announcing to a subscriber; returns the function that stops it. */
  subscribe(subscriber: StreamSubscriber): () => void {
    const { accountId } = subscriber;
    let subscribers = this.#byAccount.get(accountId);
    if (!subscribers) this.#byAccount.set(accountId, (subscribers = new Set()));
    subscribers.add(subscriber);
    const wantsPeers = Boolean(subscriber.onEventSummary ?? subscriber.onAttempt);
    if (wantsPeers) {
      const count = this.#wantingPeers.get(accountId) ?? 0;
      this.#wantingPeers.set(accountId, count + 1);
      if (count === 0) this.#peers?.localWatchesChanged();
    }
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      subscribers.delete(subscriber);
      if (subscribers.size === 0 && this.#byAccount.get(accountId) === subscribers) this.#byAccount.delete(accountId);
      if (wantsPeers) {
        const count = this.#wantingPeers.get(accountId)! - 1;
        if (count > 0) {
          this.#wantingPeers.set(accountId, count);
        } else {
          this.#wantingPeers.delete(accountId);
          this.#peers?.localWatchesChanged();
        }
      }
    };
  }

  /** An event was committed in this process. */
  eventStored(event: StoredEvent): void {
    let summary: EventSummary | undefined;
    for (const subscriber of this.#byAccount.get(event.accountId) ?? []) {
      // A subscriber that takes whole events here hears summaries only of other processes' events.
      if (subscriber.onEvent) subscriber.onEvent(event);
      else if (subscriber.onEventSummary) subscriber.onEventSummary((summary ??= eventSummary(event)));
    }
    if (this.#peers?.watch(event.accountId)) this.#peers.publish({ kind: 'event', accountId: event.accountId, event: summary ?? eventSummary(event) });
  }

  /** An attempt was recorded in this process. */
  attemptFinished(finished: FinishedAttempt): void {
    for (const subscriber of this.#byAccount.get(finished.accountId) ?? []) subscriber.onAttempt?.(finished);
    if (this.#peers?.watch(finished.accountId)) this.#peers.publish({ kind: 'attempt', finished });
  }

  /** A delivery went out here: sessions of its destination elsewhere show a copy. */
  copySent(accountId: string, destinationId: string, message: DeliveryMessage): void {
    if (this.#peers?.watch(accountId)) this.#peers.publish({ kind: 'copy', accountId, destinationId, message });
  }

  /**
   * Says that a session here mirrors a URL destination (an endpoint without a `cli`
   * destination): its attempts, in any process, are copied to it (mirrored). Announced
   * to the other processes as watches are, under a key of the destination's own. Returns
   * the function that stops it.
   */
  watchMirror(destinationId: string): () => void {
    return this.subscribe({ accountId: mirrorKey(destinationId), onAttempt: () => undefined });
  }

  /** Whether a session here or in another process mirrors this URL destination. */
  mirrored(destinationId: string): boolean {
    return this.watches(mirrorKey(destinationId));
  }

  /** A fact from another process: for this process's sessions only. */
  receive(fact: StreamFact): void {
    if (fact.kind === 'copy') {
      this.#onCopy?.(fact);
    } else if (fact.kind === 'event') {
      for (const subscriber of this.#byAccount.get(fact.accountId) ?? []) subscriber.onEventSummary?.(fact.event);
    } else {
      for (const subscriber of this.#byAccount.get(fact.finished.accountId) ?? []) subscriber.onAttempt?.(fact.finished);
    }
  }
}

/** The watch key of the mirroring sessions of a destination (beside account ids, which never start so). */
function mirrorKey(destinationId: string): string {
  return `mirror:${destinationId}`;
}

/** An event as tail sessions show it and peers carry it. */
export type EventSummary = ReturnType<typeof eventSummary>;

/** How the stream shows an event (no body). */
export function eventSummary(event: Omit<StoredEvent, 'headers' | 'body'>) {
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
    verification: event.verification ?? null,
  };
}
