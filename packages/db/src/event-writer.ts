import { BatchQueue, type BatchQueueOptions } from './batch-queue.ts';
import type { Orm } from './orm.ts';
import { insertEventsOrFail, type InsertOptions, type InsertOutcome, type KnownUsageRows, type NewEvent } from './queue/index.ts';

export type { InsertOutcome, NewEvent } from './queue/index.ts';

export type EventWriterOptions = Omit<BatchQueueOptions<NewEvent>, 'flush' | 'sizeOf' | 'groupOf'> & InsertOptions & {
  /**
   * Wraps each write (its wait for a batch and the batch's INSERT), so the relay can time
   * it as a span of the event's trace (docs/deployment.md#tracing). Absent: writes go
   * straight to the batch queue.
   */
  traceWrite?: (event: NewEvent, write: () => Promise<InsertOutcome>) => Promise<InsertOutcome>;
};

/**
 * Stores received events with group commit (see BatchQueue): one INSERT carries every
 * event that arrived while the previous one was in flight, with their deliveries
 * (insert-events.ts). `write` resolves only after the row is committed, so a caller can
 * acknowledge it. On a distributed PostgreSQL (`distributed`) a flush is one INSERT per
 * account, run concurrently, each routed to its account's shard (docs/scaling.md), and
 * an account's INSERT that fails fails only that account's events.
 */
export class EventWriter {
  readonly #queue: BatchQueue<NewEvent, InsertOutcome>;
  /** Usage rows known to exist, so each batch need not make sure of them. */
  readonly #knownUsageRows: KnownUsageRows = new Set();
  readonly #traceWrite: EventWriterOptions['traceWrite'];

  constructor(orm: Orm, { traceWrite, onMissingPartition, distributed, ...options }: EventWriterOptions = {}) {
    this.#traceWrite = traceWrite;
    this.#queue = new BatchQueue<NewEvent, InsertOutcome>({
      ...options,
      sizeOf: (event) => event.size,
      ...(distributed ? { groupOf: (event: NewEvent) => event.accountId } : {}),
      flush: (events) => insertEventsOrFail(orm, events, this.#knownUsageRows, { onMissingPartition, distributed }),
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
    return this.#traceWrite ? this.#traceWrite(event, () => this.#queue.add(event)) : this.#queue.add(event);
  }

  /** Resolves when every queued event has been written or failed. */
  async drain(): Promise<void> {
    await this.#queue.drain();
  }
}
