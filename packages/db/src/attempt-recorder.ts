import { BatchQueue } from './batch-queue.ts';
import type { Orm } from './orm.ts';
import { recordAttempts, type AttemptRecord } from './queue-sql.ts';

/**
 * Records finished attempts with group commit (see BatchQueue): every attempt that
 * finished while the previous statement was in flight is recorded by the next one.
 */
export class AttemptRecorder {
  readonly #queue: BatchQueue<AttemptRecord, boolean>;

  constructor(orm: Orm) {
    this.#queue = new BatchQueue<AttemptRecord, boolean>({ flush: (records) => recordAttempts(orm, records) });
  }

  /** Records one attempt; resolves with whether its delivery still held the lease. */
  record(record: AttemptRecord): Promise<boolean> {
    return this.#queue.add(record);
  }

  async drain(): Promise<void> {
    await this.#queue.drain();
  }
}
