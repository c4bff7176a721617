import { drainNotificationOutbox, type Orm } from '@hook/db';
import { startPeriodic, type Periodic } from './periodic.ts';

/** How often the notification outbox is looked at: every 500 ms (an empty look is one index probe). */
export const NOTIFIER_INTERVAL_MS = 500;

/** Most outbox rows one transaction turns into events. */
export const NOTIFIER_BATCH_SIZE = 100;

export interface NotifierOptions {
  orm: Orm;
  intervalMs?: number;
  onError?: (error: unknown) => void;
  /** Told after a pass that took outbox rows: some may have queued alerts (the alert sender's wake). */
  onDrained?: () => void;
  stopGraceMs?: number;
}

/**
 * Turns account notifications waiting in the outbox into events on each account's
 * notifications endpoint (see drainNotificationOutbox), now and then every `intervalMs`,
 * batch after batch while full ones come back. Any number of relay processes may run it:
 * rows are taken with SKIP LOCKED and deleted in the transaction that stores their
 * events. Polling only: notifications are not latency-critical, and half a second saves
 * a LISTEN connection per process. Returns the function that stops it, waiting for a
 * pass in progress.
 */
export function startNotifier({ orm, intervalMs = NOTIFIER_INTERVAL_MS, onError, onDrained, stopGraceMs }: NotifierOptions): Periodic {
  return startPeriodic({ intervalMs, onError, stopGraceMs, pass: async (signal) => {
    let taken = 0;
    for (let batch = NOTIFIER_BATCH_SIZE; !signal.aborted && batch === NOTIFIER_BATCH_SIZE;) {
      batch = await drainNotificationOutbox(orm, NOTIFIER_BATCH_SIZE);
      taken += batch;
    }
    if (taken > 0) onDrained?.();
  } });
}
