import type { FastifyInstance } from 'fastify';
import { drainNotificationOutbox, type Orm } from '@hook/db';
import { startPeriodic } from './periodic.ts';

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
export function startNotifier({ orm, intervalMs = NOTIFIER_INTERVAL_MS, onError, onDrained }: NotifierOptions): () => Promise<void> {
  return startPeriodic(async (stopped) => {
    let taken = 0;
    for (let batch = NOTIFIER_BATCH_SIZE; !stopped() && batch === NOTIFIER_BATCH_SIZE;) {
      batch = await drainNotificationOutbox(orm, NOTIFIER_BATCH_SIZE);
      taken += batch;
    }
    if (taken > 0) onDrained?.();
  }, intervalMs, onError);
}

/** Runs the notifier while `app` is up: from onReady until close. */
export function registerNotifier(app: FastifyInstance, orm: Orm, { onDrained }: { onDrained?: () => void } = {}): void {
  let stop: (() => Promise<void>) | undefined;
  app.addHook('onReady', async () => {
    stop = startNotifier({ orm, onError: (error) => app.log.error({ err: error }, 'notifier pass failed'), ...(onDrained ? { onDrained } : {}) });
  });
  app.addHook('onClose', async () => {
    await stop?.();
  });
}
