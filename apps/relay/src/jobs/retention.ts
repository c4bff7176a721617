import { maintainHistoryPartitions, pruneExpiredEvents, type Orm, type PruneResult } from '@hook/db';

export interface RetentionJobOptions {
  orm: Orm;
  /** Time between the starts of two passes (HOOK_RETENTION_INTERVAL). */
  intervalMs: number;
  /** The clock retention is measured against; tests move it. Default: the system clock. */
  now?: () => Date;
  /** Events per DELETE at the most (default RETENTION_BATCH_SIZE). */
  batchSize?: number;
  /** Pause between batches, ms (default RETENTION_BATCH_PAUSE_MS). */
  pauseMs?: number;
  onPass?: (result: PruneResult) => void;
  onError?: (error: unknown) => void;
}

/**
 * Makes the history partitions the next days need, and removes events past their
 * retention, now and then every `intervalMs` (see docs/retention.md). A pass still running when the next is due is not doubled: the
 * tick is skipped. Passes of several processes may overlap safely (they skip each
 * other's rows). Returns the function that stops it: the pass in progress stops after
 * its current batch and is waited for.
 */
export function startRetention({ orm, intervalMs, now = () => new Date(), batchSize, pauseMs, onPass, onError }: RetentionJobOptions): () => Promise<void> {
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  const pass = (): void => {
    if (running) return;
    const at = now();
    // the partitions the next days need first, then what expired (docs/retention.md#partitions)
    running = maintainHistoryPartitions(orm, at)
      .then(() => pruneExpiredEvents(orm, { now: at, batchSize, pauseMs, signal: stopping.signal }))
      .then((result) => onPass?.(result), (error: unknown) => onError?.(error))
      .finally(() => {
        running = undefined;
      });
  };
  pass();
  const timer = setInterval(pass, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    stopping.abort();
    await running;
  };
}
