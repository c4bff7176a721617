/**
 * A pass run now and then every `intervalMs` while the process is up, never two at once:
 * a pass still running when the next is due is not doubled (a slow pass is not queued
 * behind by more). Returns the function that stops it, waiting for a pass in progress,
 * with `wake()`, which runs a pass now (or right after the one running: what woke it may
 * have come after that pass looked).
 * The relay's background jobs (notifier, playground expiry, ordering sweep, alert sender) each run one.
 */
export function startPeriodic(run: (stopped: () => boolean) => Promise<unknown>, intervalMs: number, onError?: (error: unknown) => void): (() => Promise<void>) & { wake(): void } {
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  const pass = (): void => {
    if (running) return;
    again = false;
    running = run(() => stopped).then(() => undefined, (error: unknown) => onError?.(error)).finally(() => {
      running = undefined;
      if (again && !stopped) pass();
    });
  };
  pass();
  const timer = setInterval(pass, intervalMs);
  timer.unref();
  const stop = async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
  return Object.assign(stop, {
    wake: () => {
      if (stopped) return;
      if (running) again = true;
      else pass();
    },
  });
}
