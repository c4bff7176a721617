/**
 * Waiting on what the relay's background loops signal, instead of sleeping: a test that
 * must show something did not happen first waits until the code has demonstrably done
 * what it would have happened after (a worker's claim, a session's poll, a peer learning
 * of a watch), then checks.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { DeliveryWorker } from '@hook/relay';
import { expect, vi } from 'vitest';

/**
 * Resolves once `worker` has finished two more claims (so the second began after this
 * call) and has no attempt in progress: whatever was due when it was called has been
 * tried, answered and recorded, or was not due to this worker at all.
 */
export async function workerCaughtUp(worker: DeliveryWorker | undefined, timeoutMs = 5000): Promise<void> {
  if (!worker) throw new Error('this relay runs no delivery worker');
  const from = worker.claims;
  await vi.waitFor(() => {
    expect(worker.claims).toBeGreaterThanOrEqual(from + 2);
    expect(worker.attempting).toBe(0);
  }, { timeout: timeoutMs, interval: 5 });
}

/** Messages published on one `node:diagnostics_channel`, collected from when it was made until stop(). */
export interface Signals<T> {
  readonly seen: readonly T[];
  /** The first message seen (or to come) that `accept` takes; `index` is its place in `seen`. Fails after `timeoutMs`. */
  waitFor(accept: (message: T, index: number) => boolean, timeoutMs?: number): Promise<T>;
  stop(): void;
}

export function collectSignals<T>(channelName: string): Signals<T> {
  const seen: T[] = [];
  const waiters = new Set<() => void>();
  const onMessage = (message: unknown): void => {
    seen.push(message as T);
    for (const wake of [...waiters]) wake();
  };
  subscribe(channelName, onMessage);
  return {
    seen,
    waitFor(accept, timeoutMs = 5000) {
      return new Promise<T>((resolve, reject) => {
        let checked = 0;
        const check = (): void => {
          for (; checked < seen.length; checked++) {
            if (!accept(seen[checked]!, checked)) continue;
            waiters.delete(check);
            clearTimeout(guard);
            resolve(seen[checked]!);
            return;
          }
        };
        const guard = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching ${channelName} signal within ${timeoutMs} ms; seen: ${JSON.stringify(seen)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    stop: () => unsubscribe(channelName, onMessage),
  };
}
