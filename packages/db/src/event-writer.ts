import { BatchQueue, type BatchQueueOptions } from './batch-queue.ts';
import type { Orm } from './orm.ts';
import { insertEvents, type ClaimedDelivery, type NewEvent } from './queue-sql.ts';

export type { NewEvent } from './queue-sql.ts';

export type EventWriterOptions = Omit<BatchQueueOptions<NewEvent>, 'flush' | 'sizeOf'>;

/**
 * Stores received events with group commit (see BatchQueue): one INSERT carries every
 * event that arrived while the previous one was in flight. `write` resolves only after
 * the row is committed, so a caller can acknowledge it.
 */
export class EventWriter {
  readonly #queue: BatchQueue<NewEvent, ClaimedDelivery | null>;

  constructor(orm: Orm, options: EventWriterOptions = {}) {
    this.#queue = new BatchQueue<NewEvent, ClaimedDelivery | null>({
      ...options,
      sizeOf: (event) => event.size,
      flush: (events) => insertEvents(orm, events),
    });
  }

  /** How many INSERT statements and events were written, for tests and benchmarks. */
  get stats(): { batches: number; events: number } {
    return { batches: this.#queue.stats.batches, events: this.#queue.stats.items };
  }

  /**
   * Queues an event; resolves once it is committed (with its delivery when it was
   * stored claimed under `event.lease`, else null), rejects if it could not be stored.
   */
  write(event: NewEvent): Promise<ClaimedDelivery | null> {
    return this.#queue.add(event);
  }

  /** Resolves when every queued event has been written or failed. */
  async drain(): Promise<void> {
    await this.#queue.drain();
  }
}
