import { ISSUE_SWEEP_INTERVAL_MS } from '@hook/core';
import { pruneIssueEvents, resolveDeliveredIssues, type Orm } from '@hook/db';
import { startPeriodic, type Periodic } from './periodic.ts';

/**
 * Issues' upkeep (docs/issues.md), every ISSUE_SWEEP_INTERVAL_MS (5 s):
 * - resolves (resolved_by auto) each open or acknowledged issue every event of which was
 *   delivered to its destination since, as after a retry (resolveDeliveredIssues: every
 *   unresolved issue, ISSUE_SWEEP_BATCH a statement);
 * - forgets covered events that retention removed (pruneIssueEvents): one batch a pass,
 *   walking issue_event by event id and wrapping around, so each row is looked at within
 *   (rows / ISSUE_SWEEP_BATCH) passes, with bounded work each.
 * Any number of relay processes may run it: each step is idempotent.
 */
export function startIssueSweep({ orm, intervalMs = ISSUE_SWEEP_INTERVAL_MS, onResolved, onError, stopGraceMs }: {
  orm: Orm;
  intervalMs?: number;
  onResolved?: (issueIds: string[]) => void;
  onError?: (error: unknown) => void;
  stopGraceMs?: number;
}): Periodic {
  let pruneAfter = '';
  return startPeriodic({ intervalMs, onError, stopGraceMs, pass: async (signal) => {
    let after: string | null = '';
    while (after !== null && !signal.aborted) {
      const pass: { resolved: string[]; lastId: string | null } = await resolveDeliveredIssues(orm, after);
      if (pass.resolved.length > 0) onResolved?.(pass.resolved);
      after = pass.lastId;
    }
    if (signal.aborted) return;
    pruneAfter = (await pruneIssueEvents(orm, pruneAfter)).lastEventId ?? '';
  } });
}
