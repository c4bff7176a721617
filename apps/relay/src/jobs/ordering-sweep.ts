import { sweepOrdering, type Orm } from '@hook/db';
import { startPeriodic, type Periodic } from './periodic.ts';

/** How often ordered destinations' keys are checked for a next delivery that nothing made due: every 2 s. */
export const ORDERING_SWEEP_INTERVAL_MS = 2000;

/**
 * Makes due each ordered key's next delivery that a relay which died between recording a
 * result and moving its key on (or two ingests that raced) left waiting, and frees keys
 * whose blocking event was delivered since (sweepOrdering, packages/db ordering.ts). Any
 * number of relay processes may run it: each pass is idempotent.
 */
export function startOrderingSweep({ orm, intervalMs = ORDERING_SWEEP_INTERVAL_MS, onError, stopGraceMs }: { orm: Orm; intervalMs?: number; onError?: (error: unknown) => void; stopGraceMs?: number }): Periodic {
  return startPeriodic({ intervalMs, onError, stopGraceMs, pass: () => sweepOrdering(orm) });
}
