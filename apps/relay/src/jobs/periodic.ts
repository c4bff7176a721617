/**
 * The one way the relay runs background work now and then (retention, notifier, alert
 * sender, playground expiry, ordering and issue sweeps, the transformation meter's flush,
 * the worker's statistics refresh). One overlap policy: a pass runs at start, then every
 * `intervalMs`, never two at once; a pass still running when the next is due is not
 * doubled (a slow pass is not queued behind by more), and `wake()` runs one now, or right
 * after the one running (what woke it may have come after that pass looked).
 *
 * Stopping is bounded: the pass in progress sees its signal aborted (a job checks it
 * between steps, and passes it to what can take one), and is waited for at most
 * `stopGraceMs`; one still running then is left to end by itself (reported to onError),
 * so a pass held up by a destination or the database cannot hold up a shutdown.
 */

/** How long stopping waits for a pass in progress, after aborting it, by default. */
export const PERIODIC_STOP_GRACE_MS = 5_000;

export interface PeriodicOptions {
  /** Time between the starts of two passes. */
  intervalMs: number;
  /** One pass; `signal` is aborted when the job stops. */
  pass: (signal: AbortSignal) => Promise<unknown>;
  /** Told of a pass that failed, and of one still running `stopGraceMs` after stop. */
  onError?: (error: unknown) => void;
  /** The first pass at start (default) or after one interval. */
  runAtStart?: boolean;
  /** How long stop waits for a pass in progress (default PERIODIC_STOP_GRACE_MS). */
  stopGraceMs?: number;
}

/** A running job: call it to stop it (resolves once its pass ended, or the grace did); `wake()` runs a pass now. */
export type Periodic = (() => Promise<void>) & { wake(): void };

export function startPeriodic({ intervalMs, pass: run, onError, runAtStart = true, stopGraceMs = PERIODIC_STOP_GRACE_MS }: PeriodicOptions): Periodic {
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  let again = false;
  const pass = (): void => {
    if (running || stopping.signal.aborted) return;
    again = false;
    running = (async () => {
      try {
        await run(stopping.signal);
      } catch (error) {
        onError?.(error);
      }
    })().finally(() => {
      running = undefined;
      if (again) pass();
    });
  };
  if (runAtStart) pass();
  const timer = setInterval(pass, intervalMs);
  timer.unref();
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      stopping.abort();
      clearInterval(timer);
      if (running && !(await settlesWithin(running, stopGraceMs))) {
        onError?.(new Error(`a pass was still running ${stopGraceMs} ms after the job was stopped; it was not waited for`));
      }
    })();
    return stopped;
  };
  return Object.assign(stop, {
    wake: () => {
      if (stopping.signal.aborted) return;
      if (running) again = true;
      else pass();
    },
  });
}

/** Whether `promise` settles within `ms` (it is not cancelled either way). */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}
