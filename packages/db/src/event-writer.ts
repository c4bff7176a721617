import { BatchQueue, type BatchQueueOptions } from './batch-queue.ts';
import type { Orm } from './orm.ts';
import { insertEvents, type InsertOutcome, type NewEvent } from './queue-sql.ts';

export type { InsertOutcome, NewEvent } from './queue-sql.ts';

export type EventWriterOptions = Omit<BatchQueueOptions<NewEvent>, 'flush' | 'sizeOf'>;

/**
 * Stores received events with group commit (see BatchQueue): one INSERT carries every
 * event that arrived while the previous one was in flight. `write` resolves only after
 * the row is committed, so a caller can acknowledge it.
 */
export class EventWriter {
  readonly #queue: BatchQueue<NewEvent, InsertOutcome>;

  constructor(orm: Orm, options: EventWriterOptions = {}) {
    this.#queue = new BatchQueue<NewEvent, InsertOutcome>({
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
   * Queues an event; resolves once its batch is committed, with whether it was stored
   * (an account past its monthly allowance gets `stored: false`) and its delivery when it
   * was stored claimed under `event.lease`; rejects if it could not be stored.
   */
  write(event: NewEvent): Promise<InsertOutcome> {
    return this.#queue.add(event);
  }

  /** Resolves when every queued event has been written or failed. */
  async drain(): Promise<void> {
    await this.#queue.drain();
  }
}
