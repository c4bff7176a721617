import { maintainHistoryPartitions, pruneExpiredEvents, type Orm, type PruneResult } from '@hook/db';
import { startPeriodic, type Periodic } from './periodic.ts';

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
  /** How long stopping waits for a pass in progress (see startPeriodic). */
  stopGraceMs?: number;
}

/**
 * Makes the history partitions the next days need, and removes events past their
 * retention, now and then every `intervalMs` (see docs/retention.md), as a periodic job
 * (startPeriodic: a pass still running when the next is due is not doubled). Passes of
 * several processes may overlap safely (they skip each other's rows). Returns the
 * function that stops it: the pass in progress stops after its current batch and is
 * waited for.
 */
export function startRetention({ orm, intervalMs, now = () => new Date(), batchSize, pauseMs, onPass, onError, stopGraceMs }: RetentionJobOptions): Periodic {
  return startPeriodic({
    intervalMs,
    onError,
    ...(stopGraceMs !== undefined ? { stopGraceMs } : {}),
    pass: async (signal) => {
      const at = now();
      // the partitions the next days need first, then what expired (docs/retention.md#partitions)
      await maintainHistoryPartitions(orm, at);
      if (signal.aborted) return;
      onPass?.(await pruneExpiredEvents(orm, { now: at, batchSize, pauseMs, signal }));
    },
  });
}
