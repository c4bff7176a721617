/**
 * Group commit for any write: items queue while a statement is in flight and the next
 * statement takes all of them, so under load many items share one round-trip and one
 * commit, and under light load each goes at once. `add` resolves with the item's own
 * result only after its statement committed.
 */
export interface BatchQueueOptions<Item> {
  /** Writes a batch in one statement; returns one result per item, in order. */
  flush: (items: Item[]) => Promise<unknown[]>;
  /** Most items one statement carries. */
  maxBatchSize?: number;
  /** Size of an item, for `maxBatchBytes`. */
  sizeOf?: (item: Item) => number;
  /** Most bytes one statement carries (a batch always takes at least one item). */
  maxBatchBytes?: number;
  /**
   * Most statements in flight. Normally one: items that arrive meanwhile ride the next
   * statement together, which costs far less per item than more, smaller statements.
   * Another starts only when the newest in flight is slower than `stallMs` (a huge
   * item, a slow disk), so a stall does not hold everything behind it.
   */
  maxConcurrentBatches?: number;
  /** How long a statement may run before the next batch may start beside it. */
  stallMs?: number;
  /**
   * Splits each batch into groups written by statements of their own, run concurrently
   * (each one account's, so that it is routed to one shard: docs/scaling.md). An item
   * whose group's statement fails is retried alone, as below; other groups are unaffected.
   */
  groupOf?: (item: Item) => string;
  /**
   * Under load, how long a batch may wait for more items before it starts (default 0:
   * never). Under load means the previous statement carried more than one item and
   * ended less than this long ago; a batch then starts when `gatherItems` are queued or
   * when this time is up, whichever comes first. At rest (one item at a time) nothing
   * waits. A statement costs PostgreSQL far less per item for 50 items than for 10
   * (test/bench/queue-floor.ts), so a result that is not waited on (AttemptRecorder)
   * gathers a little.
   */
  gatherMs?: number;
  /** Items that start a gathering batch at once (default: `maxBatchSize`). */
  gatherItems?: number;
}

/**
 * A flush's result for an item it could not write while others in the same statements
 * were written (and committed): only that item fails, with `error`; the others are done.
 * A flush that throws instead says nothing was written, and its items are written again,
 * each alone (see #writeGroup): right only when nothing of the batch committed.
 */
export class ItemFailure {
  readonly error: Error;

  constructor(error: Error) {
    this.error = error;
  }
}

interface Waiting<Item> {
  item: Item;
  done: (result: unknown) => void;
  fail: (error: unknown) => void;
}

export class BatchQueue<Item, Result> {
  readonly #flush: (items: Item[]) => Promise<unknown[]>;
  readonly #maxBatchSize: number;
  readonly #sizeOf: (item: Item) => number;
  readonly #maxBatchBytes: number;
  readonly #maxConcurrentBatches: number;
  readonly #stallMs: number;
  readonly #groupOf: ((item: Item) => string) | undefined;
  readonly #gatherMs: number;
  readonly #gatherItems: number;
  /** When the last statement ended and how many items it carried (whether the queue is under load: gatherMs). */
  #lastEndedAtMs = -Infinity;
  #lastSize = 0;
  #gatherTimer: NodeJS.Timeout | undefined;
  /** How many statements and items were written, for tests and benchmarks. */
  readonly stats = { batches: 0, items: 0 };
  #queue: Waiting<Item>[] = [];
  #inFlight = 0;
  #lastBatchStartedAtMs = 0;
  #idle: (() => void)[] = [];

  constructor(options: BatchQueueOptions<Item>) {
    this.#flush = options.flush;
    this.#maxBatchSize = options.maxBatchSize ?? 200;
    this.#sizeOf = options.sizeOf ?? (() => 0);
    this.#maxBatchBytes = options.maxBatchBytes ?? 16 * 1024 * 1024;
    this.#maxConcurrentBatches = options.maxConcurrentBatches ?? 4;
    this.#stallMs = options.stallMs ?? 50;
    this.#groupOf = options.groupOf;
    this.#gatherMs = options.gatherMs ?? 0;
    this.#gatherItems = options.gatherItems ?? this.#maxBatchSize;
  }

  /** Queues an item; resolves with its result once committed, rejects if it could not be written. */
  add(item: Item): Promise<Result> {
    return new Promise<Result>((done, fail) => {
      this.#queue.push({ item, done: done as (result: unknown) => void, fail });
      this.#startBatches();
    });
  }

  /** Resolves when every queued item has been written or failed. */
  async drain(): Promise<void> {
    if (this.#queue.length === 0 && this.#inFlight === 0) return;
    await new Promise<void>((done) => this.#idle.push(done));
  }

  #startBatches(): void {
    while (this.#queue.length > 0 && this.#mayStartBatch()) {
      if (this.#gathering()) return;
      const batch = this.#takeBatch();
      this.#inFlight++;
      this.#lastBatchStartedAtMs = performance.now();
      void this.#write(batch).finally(() => {
        this.#inFlight--;
        this.#lastEndedAtMs = performance.now();
        this.#lastSize = batch.length;
        if (this.#queue.length > 0) this.#startBatches();
        else if (this.#inFlight === 0) for (const done of this.#idle.splice(0)) done();
      });
    }
  }

  /** Whether the next batch waits for more items (gatherMs), with a timer set to start it when the time is up. */
  #gathering(): boolean {
    if (this.#gatherMs <= 0 || this.#inFlight > 0 || this.#queue.length >= this.#gatherItems) return this.#clearGather();
    const sinceMs = performance.now() - this.#lastEndedAtMs;
    if (this.#lastSize <= 1 || sinceMs >= this.#gatherMs) return this.#clearGather();
    this.#gatherTimer ??= setTimeout(() => {
      this.#gatherTimer = undefined;
      this.#lastEndedAtMs = -Infinity; // the time is up: start whatever is queued
      this.#startBatches();
    }, this.#gatherMs - sinceMs);
    return true;
  }

  #clearGather(): false {
    if (this.#gatherTimer) clearTimeout(this.#gatherTimer);
    this.#gatherTimer = undefined;
    return false;
  }

  #mayStartBatch(): boolean {
    if (this.#inFlight === 0) return true;
    return this.#inFlight < this.#maxConcurrentBatches && performance.now() - this.#lastBatchStartedAtMs > this.#stallMs;
  }

  #takeBatch(): Waiting<Item>[] {
    let bytes = 0;
    let count = 0;
    for (const waiting of this.#queue) {
      const size = this.#sizeOf(waiting.item);
      if (count >= this.#maxBatchSize || (count > 0 && bytes + size > this.#maxBatchBytes)) break;
      bytes += size;
      count++;
    }
    return this.#queue.splice(0, count);
  }

  async #write(batch: Waiting<Item>[]): Promise<void> {
    const groupOf = this.#groupOf;
    const groups = groupOf ? [...Map.groupBy(batch, (waiting) => groupOf(waiting.item)).values()] : [batch];
    await Promise.all(groups.map((group) => this.#writeGroup(group)));
  }

  async #writeGroup(batch: Waiting<Item>[]): Promise<void> {
    try {
      const results = await this.#flush(batch.map(({ item }) => item));
      this.stats.batches++;
      this.stats.items += batch.length;
      batch.forEach((waiting, i) => {
        const result = results[i];
        if (result instanceof ItemFailure) waiting.fail(result.error);
        else waiting.done(result);
      });
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.fail(error);
        return;
      }
      // One bad item must not fail the others that happened to share its statement:
      // write each alone, so only the bad one is refused.
      await Promise.all(batch.map((waiting) => this.#writeGroup([waiting])));
    }
  }
}
