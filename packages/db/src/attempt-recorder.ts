import { BatchQueue } from './batch-queue.ts';
import type { Orm } from './orm.ts';
import type { EventStatus } from '@hook/core';
import { recordAttempts, recordListenAttempts, type AttemptRecord, type ListenAttemptRecord } from './queue-sql.ts';

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

/** Records `hook listen` answers with group commit, like AttemptRecorder. */
export class ListenAttemptRecorder {
  readonly #queue: BatchQueue<ListenAttemptRecord, EventStatus>;

  constructor(orm: Orm) {
    this.#queue = new BatchQueue<ListenAttemptRecord, EventStatus>({ flush: (records) => recordListenAttempts(orm, records) });
  }

  /** Records one answer; resolves with the event's status after it. */
  record(record: ListenAttemptRecord): Promise<EventStatus> {
    return this.#queue.add(record);
  }

  async drain(): Promise<void> {
    await this.#queue.drain();
  }
}
