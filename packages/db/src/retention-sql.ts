/**
 * Event history retention (docs/retention.md): events older than their retention are
 * removed with their attempts and deliveries. History stored since migration 019 leaves by
 * whole partitions (partitions.ts); what follows is the row-by-row pass over class 0 (the
 * history from before it, and rows written without a class), in small batches that never
 * hold a lock ingest waits on.
 *
 * How long an event is kept is the LONGER of (a) the retention of the plan its account
 * was on when it was received (from `plan_change`) and (b) the account's current
 * retention: a downgrade never shortens what was promised for events already received,
 * an upgrade lengthens it for all of them. Each account's history is cut into
 * received-time ranges with one cutoff each, and each range is deleted on its own.
 *
 * An event id's first 48 bits are its receive time, so the `(account_id, id)` index is
 * the index on received time: each batch is one bounded index range scan. No extra
 * index is needed (and none is added: every index slows ingest).
 */
import { firstIdAt, isPlan, retentionDaysOf, type Plan } from '@hook/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, type RawBuilder } from 'kysely';
import type { Orm } from './orm.ts';
import { DAY_MS, dropExpiredPartitions } from './partitions.ts';

export { DAY_MS };
/** Events removed by one DELETE at the most: a short statement, short row locks. */
export const RETENTION_BATCH_SIZE = 1000;
/** Pause between two batches, so pruning leaves the database to ingest most of the time. */
export const RETENTION_BATCH_PAUSE_MS = 20;
/** Accounts read per page while looking for ones with expired events. */
const ACCOUNT_PAGE_SIZE = 500;
/** The shortest retention any account can have (an enterprise account's own setting at its minimum, 1 day). */
const SHORTEST_RETENTION_DAYS = 1;

/** One plan change of an account, oldest first. */
export interface PlanPeriodChange {
  fromPlan: Plan;
  toPlan: Plan;
  changedAt: Date;
}

/** Events received in `[fromMs, toMs)` are kept `keepDays` days. null bounds are open. */
export interface RetentionRange {
  fromMs: number | null;
  toMs: number | null;
  keepDays: number;
}

/**
 * An account's received-time ranges and how long each one's events are kept: one range
 * per plan period (before the first change, between changes, since the last), kept the
 * longer of that plan's retention and the current one; neighbours kept equally long are
 * merged. An enterprise period uses the account's current `retention_days` (its history
 * is not recorded).
 */
export function retentionRanges(account: { plan: Plan; retentionDays: number | null }, history: readonly PlanPeriodChange[]): RetentionRange[] {
  const currentDays = retentionDaysOf(account.plan, account.retentionDays);
  const periods: { fromMs: number | null; plan: Plan }[] = [{ fromMs: null, plan: history[0]?.fromPlan ?? account.plan }];
  for (const change of history) periods.push({ fromMs: change.changedAt.getTime(), plan: change.toPlan });
  const ranges: RetentionRange[] = [];
  periods.forEach((period, i) => {
    const keepDays = Math.max(retentionDaysOf(period.plan, account.retentionDays), currentDays);
    const toMs = periods[i + 1]?.fromMs ?? null;
    const last = ranges.at(-1);
    if (last && last.keepDays === keepDays) last.toMs = toMs;
    else ranges.push({ fromMs: period.fromMs, toMs, keepDays });
  });
  return ranges;
}

/** An account that may have events past its retention. */
export interface RetentionCandidate {
  accountId: string;
  /** As stored; an unknown plan is skipped. */
  plan: string;
  retentionDays: number | null;
  oldestEventId: string;
}

/**
 * One page of accounts (in id order, after `afterAccountId`) whose oldest event is older
 * than `olderThanId`: one probe of the `(account_id, id)` index per account, so accounts
 * with nothing old cost almost nothing and are not looked at further.
 */
export async function findRetentionCandidates(em: EntityManager, afterAccountId: string, olderThanId: string, limit: number): Promise<RetentionCandidate[]> {
  const { rows } = await sql<{ id: string; plan: string; retention_days: number | null; oldest_event_id: string }>`
    select a.id, a.plan, a.retention_days, oldest.id as oldest_event_id
    from account a
    cross join lateral (select e.id from event e where e.account_id = a.id and e.retention_class = 0 order by e.id limit 1) oldest
    where a.id > ${afterAccountId} and oldest.id < ${olderThanId}
    order by a.id
    limit ${limit}`.execute(em.getKysely());
  return rows.map((row) => ({ accountId: row.id, plan: row.plan, retentionDays: row.retention_days, oldestEventId: row.oldest_event_id }));
}

/** An account's plan changes, oldest first (ids are time-sortable). */
export async function planHistoryOf(em: EntityManager, accountId: string): Promise<PlanPeriodChange[]> {
  const { rows } = await sql<{ from_plan: string; to_plan: string; changed_at: Date | string }>`
    select from_plan, to_plan, changed_at from plan_change where account_id = ${accountId} order by id`.execute(em.getKysely());
  return rows.filter((row) => isPlan(row.from_plan) && isPlan(row.to_plan)).map((row) => ({
    fromPlan: row.from_plan as Plan, toPlan: row.to_plan as Plan, changedAt: new Date(row.changed_at),
  }));
}

/**
 * The common table expressions that remove the events whose ids the CTE `ids` selects,
 * with what belongs to them: their attempts and deliveries (neither has a foreign key to
 * cascade from the event; an event's dedupe key is a column of it). `removed_events`
 * returns each removed id. Retention and account erasure both remove events this way.
 */
export function removeEventsCtes(ids: string, classZeroOnly = false): RawBuilder<unknown> {
  const from = sql.id(ids);
  const only = classZeroOnly ? sql` and retention_class = 0` : sql``;
  return sql`removed_attempts as (
       delete from attempt where event_id in (select id from ${from})${only}
     ), removed_deliveries as (
       delete from delivery where event_id in (select id from ${from})${only}
     ), removed_events as (
       delete from event where id in (select id from ${from})${only} returning id
     )`;
}

/** One batch's bounds: event ids in `[fromId, toId)` received before `cutoff`. */
export interface ExpiredBatch {
  accountId: string;
  fromId: string;
  toId: string;
  cutoff: Date;
  /**
   * When the account has several ranges: this range's received times (null: open) and
   * the earliest cutoff of the others. An event whose id lies in this range but whose
   * `received_at` does not (ids and times taken from different clocks) is held to the
   * strictest cutoff instead, so it is never removed before its own retention.
   */
  otherRanges: { receivedFrom: Date | null; receivedTo: Date | null; earliestCutoff: Date } | null;
  limit: number;
}

/**
 * Removes at most `limit` expired events of one account with their attempts and deliveries; returns how
 * many events and the last id removed (the next batch starts there). One statement, its
 * own short transaction:
 * - the ids come from one bounded range scan of `(account_id, id)` (`id < firstIdAt(cutoff)`;
 *   ordered by both columns so the planner takes that index rather than the primary key,
 *   which interleaves every account), and `received_at < cutoff` is checked again on each
 *   row, so an event younger than its retention is never removed whatever its id says;
 * - `FOR UPDATE SKIP LOCKED`: a row a delivery claim (or another process pruning at the
 *   same time) holds is skipped, not waited for, and taken by a later pass;
 * - attempts and deliveries are deleted in the same statement (through `attempt_event_idx`
 *   and the delivery primary key): neither has a foreign key to cascade from the event. An
 *   event's dedupe key is a column of it, so a duplicate is dropped for as long as the
 *   original is kept, and no longer.
 * Row locks only: ingest (INSERT) never waits on it.
 */
export async function removeExpiredEventBatch(em: EntityManager, batch: ExpiredBatch): Promise<{ removed: number; lastId: string | null }> {
  let otherRangesGuard = sql``;
  if (batch.otherRanges) {
    const { receivedFrom, receivedTo, earliestCutoff } = batch.otherRanges;
    const inRange = [receivedFrom && sql`received_at >= ${receivedFrom}`, receivedTo && sql`received_at < ${receivedTo}`].filter((bound) => bound !== null);
    otherRangesGuard = sql`and ((${sql.join(inRange, sql` and `)}) or received_at < ${earliestCutoff})`;
  }
  const { rows } = await sql<{ removed: number; last_id: string | null }>`
     with expired as (
       select id from event
       where retention_class = 0 and account_id = ${batch.accountId} and id >= ${batch.fromId} and id < ${batch.toId} and received_at < ${batch.cutoff} ${otherRangesGuard}
       order by account_id, id
       limit ${batch.limit}
       for update skip locked
     ), ${removeEventsCtes('expired', true)}
     select count(*)::int as removed, max(id) as last_id from removed_events`.execute(em.getKysely());
  return { removed: rows[0]?.removed ?? 0, lastId: rows[0]?.last_id ?? null };
}

export interface PruneOptions {
  /** The time retention is measured from. Default: now. */
  now?: Date;
  /** Events per DELETE at the most. Default RETENTION_BATCH_SIZE. */
  batchSize?: number;
  /** Pause between batches, ms. Default RETENTION_BATCH_PAUSE_MS. */
  pauseMs?: number;
  /** Stops the pass between two batches (a relay shutting down). */
  signal?: AbortSignal;
}

export interface PruneResult {
  /** Events removed row by row from class 0 (their attempts went with them). */
  events: number;
  /** Partitions dropped whole (each a period of one class in the three tables; partitions.ts). */
  partitionsDropped: number;
  /** Events moved to a longer class before their partition was dropped (their account's retention grew). */
  eventsMoved: number;
  /** DELETE statements run. */
  statements: number;
  /** Accounts that had events older than the shortest retention and were looked at. */
  accountsExamined: number;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One retention pass: drops every partition past its retention as of `now`
 * (dropExpiredPartitions), then removes every class 0 event past its retention, batch by
 * batch. Idempotent, holds no lock between statements and skips rows others hold, so any
 * number of relay processes may run passes at the same time.
 */
export async function pruneExpiredEvents(orm: Orm, options: PruneOptions = {}): Promise<PruneResult> {
  const nowMs = (options.now ?? new Date()).getTime();
  const batchSize = options.batchSize ?? RETENTION_BATCH_SIZE;
  const pauseMs = options.pauseMs ?? RETENTION_BATCH_PAUSE_MS;
  const dropped = await dropExpiredPartitions(orm, { now: new Date(nowMs), signal: options.signal });
  const result: PruneResult = { events: 0, statements: 0, accountsExamined: 0, partitionsDropped: dropped.leaves, eventsMoved: dropped.moved };
  const em = orm.em.fork();
  const olderThanShortest = firstIdAt('event', nowMs - SHORTEST_RETENTION_DAYS * DAY_MS);
  let after = '';
  for (;;) {
    const page = await findRetentionCandidates(em, after, olderThanShortest, ACCOUNT_PAGE_SIZE);
    for (const candidate of page) {
      if (options.signal?.aborted) return result;
      if (!isPlan(candidate.plan)) continue;
      result.accountsExamined++;
      const ranges = retentionRanges({ plan: candidate.plan, retentionDays: candidate.retentionDays }, await planHistoryOf(em, candidate.accountId));
      const cutoffsMs = ranges.map((range) => nowMs - range.keepDays * DAY_MS);
      for (const [i, range] of ranges.entries()) {
        const cutoffMs = cutoffsMs[i]!;
        const toId = firstIdAt('event', Math.min(range.toMs ?? Number.POSITIVE_INFINITY, cutoffMs));
        const fromId = firstIdAt('event', range.fromMs ?? 0);
        // Nothing received in this range is old enough yet, or the account's oldest event is past it.
        if (fromId >= toId || candidate.oldestEventId >= toId) continue;
        const others = cutoffsMs.filter((_, j) => j !== i);
        const batch: ExpiredBatch = {
          accountId: candidate.accountId,
          fromId,
          toId,
          cutoff: new Date(cutoffMs),
          otherRanges: others.length === 0 ? null : {
            receivedFrom: range.fromMs === null ? null : new Date(range.fromMs),
            receivedTo: range.toMs === null ? null : new Date(range.toMs),
            earliestCutoff: new Date(Math.min(...others)),
          },
          limit: batchSize,
        };
        for (;;) {
          if (options.signal?.aborted) return result;
          const { removed, lastId } = await removeExpiredEventBatch(em, batch);
          result.statements++;
          result.events += removed;
          if (removed < batchSize || lastId === null) break;
          // Start after what was removed: its index entries stay until vacuum, and
          // scanning them again on every batch would make a long range quadratic.
          batch.fromId = lastId;
          await pause(pauseMs);
        }
      }
    }
    if (page.length < ACCOUNT_PAGE_SIZE) return result;
    after = page.at(-1)!.accountId;
  }
}
