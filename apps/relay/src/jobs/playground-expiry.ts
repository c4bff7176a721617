import { removeExpiredPlaygrounds, type Orm } from '@hook/db';
import { startPeriodic, type Periodic } from './periodic.ts';

/** How often expired playground accounts are looked for: every 10 minutes. */
export const PLAYGROUND_EXPIRY_INTERVAL_MS = 10 * 60 * 1000;

export interface PlaygroundExpiryOptions {
  orm: Orm;
  intervalMs?: number;
  onError?: (error: unknown) => void;
  stopGraceMs?: number;
}

/**
 * Removes expired temporary playground accounts now and then every `intervalMs`
 * (removeExpiredPlaygrounds is one idempotent pass, so any number of relay processes may
 * run it). Returns the function that stops it, waiting for a pass in progress.
 */
export function startPlaygroundExpiry({ orm, intervalMs = PLAYGROUND_EXPIRY_INTERVAL_MS, onError, stopGraceMs }: PlaygroundExpiryOptions): Periodic {
  return startPeriodic({ intervalMs, onError, stopGraceMs, pass: () => removeExpiredPlaygrounds(orm) });
}
