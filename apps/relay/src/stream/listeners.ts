/**
 * The `hook listen` sessions of this process, by the `cli` destination each serves, so a
 * replay or a new event can wake the sessions that claim it, and a replay can say
 * whether a listener will get it now. Sessions in other relay processes announce
 * themselves in `destination.listener_seen_at` (LISTENER_PRESENCE_MS) and poll.
 */
import type { DeliveryMessage } from '@hook/core';
import { makeDestinationsDue, type Orm } from '@hook/db';
import type { ReservedSlot } from '../delivery/worker.ts';

export interface ListenerHandle {
  /** Claim due deliveries now. */
  wake(): void;
  /** A slot for a new event's delivery, as the worker's (worker.ts), or null when the session has no room or a backlog. */
  reserve(eventId: string): ReservedSlot | null;
  /** Show a delivery another session of the destination sent (its result is not recorded). */
  mirror(message: DeliveryMessage): void;
}

/** How often a session refreshes its destination's listener_seen_at; one not refreshed for twice this is gone. */
export const LISTENER_PRESENCE_MS = 10_000;

export class ListenerRegistry {
  readonly #byDestination = new Map<string, Set<ListenerHandle>>();

  add(destinationId: string, handle: ListenerHandle): () => void {
    let handles = this.#byDestination.get(destinationId);
    if (!handles) this.#byDestination.set(destinationId, (handles = new Set()));
    handles.add(handle);
    return () => {
      handles.delete(handle);
      if (handles.size === 0 && this.#byDestination.get(destinationId) === handles) this.#byDestination.delete(destinationId);
    };
  }

  /** Whether a session of this process serves the destination. */
  has(destinationId: string): boolean {
    return this.#byDestination.has(destinationId);
  }

  /** A slot in one of this process's sessions of the destination for a new event, or null. */
  reserve(destinationId: string, eventId: string): ReservedSlot | null {
    for (const handle of this.#byDestination.get(destinationId) ?? []) {
      const slot = handle.reserve(eventId);
      if (slot) return slot;
    }
    return null;
  }

  /** Wakes this process's sessions of the destination; returns whether there was one. */
  wake(destinationId: string): boolean {
    const handles = this.#byDestination.get(destinationId);
    for (const handle of handles ?? []) handle.wake();
    return Boolean(handles);
  }

  /** Shows a delivery `from` (null: a session in another process) sent to every other session of this process on the destination. */
  mirror(destinationId: string, from: ListenerHandle | null, message: DeliveryMessage): void {
    for (const handle of this.#byDestination.get(destinationId) ?? []) if (handle !== from) handle.mirror(message);
  }

  /**
   * Makes the destinations' waiting deliveries due now (makeDestinationsDue: it wakes the
   * workers) and wakes this process's sessions of them, so a destination or endpoint made
   * active again gives its listener what it held at once; sessions in other processes
   * claim at their next poll.
   */
  async makeDue(orm: Orm, accountId: string, destinationIds: readonly string[]): Promise<void> {
    await makeDestinationsDue(orm, accountId, destinationIds);
    for (const id of destinationIds) this.wake(id);
  }

  /** Wakes every session of this process (after a bulk replay). */
  wakeAll(): void {
    for (const handles of this.#byDestination.values()) for (const handle of handles) handle.wake();
  }
}
