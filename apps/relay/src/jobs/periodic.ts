/**
 * A pass run now and then every `intervalMs` while the process is up, never two at once:
 * a pass still running when the next is due is not doubled (a slow pass is not queued
 * behind by more). Returns the function that stops it, waiting for a pass in progress.
 * The relay's background jobs (notifier, playground expiry, ordering sweep) each run one.
 */
export function startPeriodic(run: (stopped: () => boolean) => Promise<unknown>, intervalMs: number, onError?: (error: unknown) => void): () => Promise<void> {
  let stopped = false;
  let running: Promise<void> | undefined;
  const pass = (): void => {
    if (running) return;
    running = run(() => stopped).then(() => undefined, (error: unknown) => onError?.(error)).finally(() => {
      running = undefined;
    });
  };
  pass();
  const timer = setInterval(pass, intervalMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
