import type { Orm } from './orm.ts';
import { insertEvents, type NewEvent } from './queue-sql.ts';

export type { NewEvent } from './queue-sql.ts';

export interface EventWriterOptions {
  /** Most events one INSERT carries. */
  maxBatchSize?: number;
  /**
   * Most INSERTs in flight at once. Normally one: events that arrive meanwhile wait and
   * ride the next INSERT together, which costs far less per event than more, smaller
   * INSERTs. Another starts only when the newest in-flight one is slower than `stallMs`
   * (a huge body, a slow disk), so a stall does not hold everything behind it.
   */
  maxConcurrentBatches?: number;
  /** How long an INSERT may run before the next batch may start beside it. */
  stallMs?: number;
  /** Bytes of bodies one INSERT carries at most (a batch always takes at least one event). */
  maxBatchBytes?: number;
}

interface Waiting {
  event: NewEvent;
  done: () => void;
  fail: (error: unknown) => void;
}

/**
 * Stores received events with group commit. An event is written at once when no
 * INSERT is in flight; while one is, new events queue and the next INSERT takes all of
 * them in one statement and one commit. Under light load that is one
 * round-trip per event; under heavy load the cost of a commit (the WAL flush) is shared.
 * `write` resolves only after the row is committed, so a caller can acknowledge it.
 */
export class EventWriter {
  readonly #orm: Orm;
  readonly #maxBatchSize: number;
  readonly #maxConcurrentBatches: number;
  readonly #maxBatchBytes: number;
  readonly #stallMs: number;
  #lastBatchStartedAtMs = 0;
  /** How many INSERT statements and events were written, for tests and benchmarks. */
  readonly stats = { batches: 0, events: 0 };
  #queue: Waiting[] = [];
  #inFlight = 0;
  #idle: (() => void)[] = [];

  constructor(orm: Orm, options: EventWriterOptions = {}) {
    this.#orm = orm;
    this.#maxBatchSize = options.maxBatchSize ?? 200;
    this.#maxConcurrentBatches = options.maxConcurrentBatches ?? 4;
    this.#stallMs = options.stallMs ?? 50;
    this.#maxBatchBytes = options.maxBatchBytes ?? 16 * 1024 * 1024;
  }

  /** Queues an event; resolves once it is committed, rejects if its batch failed (nothing of it was stored). */
  write(event: NewEvent): Promise<void> {
    return new Promise((done, fail) => {
      this.#queue.push({ event, done, fail });
      this.#startBatches();
    });
  }

  /** Resolves when every queued event has been written or failed. */
  async drain(): Promise<void> {
    if (this.#queue.length === 0 && this.#inFlight === 0) return;
    await new Promise<void>((done) => this.#idle.push(done));
  }

  #startBatches(): void {
    while (this.#queue.length > 0 && this.#mayStartBatch()) {
      const batch = this.#takeBatch();
      this.#inFlight++;
      this.#lastBatchStartedAtMs = performance.now();
      void this.#insert(batch).finally(() => {
        this.#inFlight--;
        if (this.#queue.length > 0) this.#startBatches();
        else if (this.#inFlight === 0) for (const done of this.#idle.splice(0)) done();
      });
    }
  }

  #mayStartBatch(): boolean {
    if (this.#inFlight === 0) return true;
    return this.#inFlight < this.#maxConcurrentBatches && performance.now() - this.#lastBatchStartedAtMs > this.#stallMs;
  }

  #takeBatch(): Waiting[] {
    let bytes = 0;
    let count = 0;
    for (const waiting of this.#queue) {
      if (count >= this.#maxBatchSize || (count > 0 && bytes + waiting.event.size > this.#maxBatchBytes)) break;
      bytes += waiting.event.size;
      count++;
    }
    return this.#queue.splice(0, count);
  }

  async #insert(batch: Waiting[]): Promise<void> {
    try {
      await insertEvents(this.#orm, batch.map(({ event }) => event));
      this.stats.batches++;
      this.stats.events += batch.length;
      for (const waiting of batch) waiting.done();
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.fail(error);
        return;
      }
      // One bad row must not fail the events that happened to share its statement:
      // write each alone, so only the bad one is refused.
      await Promise.all(batch.map((waiting) => this.#insert([waiting])));
    }
  }
}
