import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { PLAN_LIMITS, PLANS, usageMonth } from '@hook/core';
import type { Orm } from './orm.ts';

/** An account's usage: this month's accepted events and what it has now. */
export interface AccountUsage {
  /** The calendar month (UTC) counted, `YYYY-MM`. */
  month: string;
  eventsAccepted: number;
  /** Live endpoints, not counting the hidden notifications endpoint. */
  endpoints: number;
  members: number;
  /** CPU time this month's transformations used, in ms, as the relay processes have flushed it (every few seconds). */
  transformationCpuMs: number;
}

/**
 * Reads an account's usage in one statement, so its figures come from one snapshot: the
 * event count is the metered one the ingest statement keeps (exact, see insertEvents).
 */
export async function readAccountUsage(em: EntityManager, accountId: string, now: Date): Promise<AccountUsage> {
  const month = usageMonth(now);
  const { rows: [row] } = await sql<{ events_accepted: string | null; transformation_cpu_ms: string | null; endpoints: string; members: string }>`
    select (select events_accepted from account_usage where account_id = ${accountId} and month = ${month}) as events_accepted,
           (select transformation_cpu_ms from account_usage where account_id = ${accountId} and month = ${month}) as transformation_cpu_ms,
           (select count(*) from endpoint where account_id = ${accountId} and deleted_at is null and kind = 'user') as endpoints,
           (select count(*) from member where account_id = ${accountId}) as members`.execute(em.getKysely());
  return { month: month.slice(0, 7), eventsAccepted: Number(row?.events_accepted ?? 0), endpoints: Number(row?.endpoints ?? 0), members: Number(row?.members ?? 0), transformationCpuMs: Number(row?.transformation_cpu_ms ?? 0) };
}

/**
 * Adds transformation CPU time to each account's usage for the month of `now`, in one
 * statement (a relay process flushes what it metered every few seconds).
 */
export async function addTransformationCpu(orm: Orm, cpuMsByAccount: ReadonlyMap<string, number>, now: Date): Promise<void> {
  if (cpuMsByAccount.size === 0) return;
  const accounts = [...cpuMsByAccount.keys()];
  const cpuMs = accounts.map((account) => Math.round(cpuMsByAccount.get(account)!));
  await sql`
    insert into account_usage (account_id, month, transformation_cpu_ms)
    select a.account_id, ${usageMonth(now)}::date, a.cpu_ms from unnest(${accounts}::text[], ${cpuMs}::bigint[]) as a (account_id, cpu_ms)
    join account on account.id = a.account_id
    on conflict (account_id, month) do update set transformation_cpu_ms = account_usage.transformation_cpu_ms + excluded.transformation_cpu_ms`.execute(orm.em.getKysely());
}

/**
 * Marks that an account's transformations ran past its plan's CPU allowance this month
 * and, the first time in the month only (whichever relay process gets there first),
 * queues its `transformation.throttled` notification in the same statement. Returns
 * whether this call queued it.
 */
export async function recordTransformationThrottled(orm: Orm, accountId: string, now: Date): Promise<boolean> {
  const plans = sql.join(PLANS.map((plan) => sql`(${plan}::text, ${PLAN_LIMITS[plan].transformationCpuMsPerMinute}::int)`));
  const { rows } = await sql<{ queued: boolean }>`
     with marked as (
       insert into account_usage (account_id, month, transformation_throttled_at)
       select id, ${usageMonth(now)}::date, ${now.toISOString()}::timestamptz from account where id = ${accountId}
       on conflict (account_id, month) do update set transformation_throttled_at = excluded.transformation_throttled_at
         where account_usage.transformation_throttled_at is null
       returning account_id, month, transformation_throttled_at
     ), queued as (
       insert into notification_outbox (account_id, type, data)
       select m.account_id, 'transformation.throttled', jsonb_build_object(
                'month', to_char(m.month, 'YYYY-MM'), 'plan', a.plan, 'cpu_ms_per_minute', p.cpu_ms_per_minute,
                'throttled_at', to_char(m.transformation_throttled_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
       from marked m join account a on a.id = m.account_id
       join (values ${plans}) as p (plan, cpu_ms_per_minute) on p.plan = a.plan
       returning 1
     )
     select exists (select 1 from queued) as queued`.execute(orm.em.getKysely());
  return rows[0]?.queued === true;
}
