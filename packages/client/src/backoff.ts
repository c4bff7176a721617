/**
 * The one backoff policy of everything that waits for the relay to come back: the
 * client's stream (stream.ts), the CLI waiting for a relay that does not answer yet
 * (apps/cli/src/stream-connection.ts) and the console's stream
 * (apps/relay/src/console/ui/stream.ts). The console's browser bundle imports this file by
 * its path, so it imports nothing.
 */

/** Where the waits start and where they stop growing. */
export interface Backoff {
  /** The wait before the first retry. */
  initialDelayMs: number;
  /** Each retry doubles the wait, up to this. */
  maxDelayMs: number;
}

/** 250 ms doubling to 10 s. */
export const RECONNECT_BACKOFF: Backoff = { initialDelayMs: 250, maxDelayMs: 10_000 };

/**
 * The wait before retry number `retry` (1 for the first retry after a failure):
 * exponential backoff with "equal jitter", half the delay fixed and half random, so that
 * clients that lost one relay do not all come back at once.
 */
export function backoffDelayMs(retry: number, backoff: Backoff = RECONNECT_BACKOFF, random: () => number = Math.random): number {
  const base = Math.min(backoff.maxDelayMs, backoff.initialDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(base / 2 + (random() * base) / 2);
}
