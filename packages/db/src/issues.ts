/**
 * Issues (docs/issues.md): failed deliveries grouped by account, destination and kind of
 * failure. The statement that records results opens and counts them (record-results.ts);
 * these are the reads and a person's actions (REST: GET/POST /v1/issues…), the retry of
 * every covered event through the bulk replay, and the sweep that resolves an issue once
 * every event it covers was delivered, and forgets the covered events retention dropped.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { idTimeMs, issueTitle, type EventStatus, type IssueKind, type IssueResolver, type IssueStatus } from '@hook/core';
import type { Orm } from './orm.ts';
import { replayMany } from './queue/statements/replay.ts';

/** An issue as the REST API shows it (IssueSchema in core). */
export interface IssueRecord {
  id: string;
  endpoint_id: string;
  destination_id: string;
  kind: IssueKind;
  title: string;
  status: IssueStatus;
  resolved_by: IssueResolver | null;
  first_seen_at: string;
  last_seen_at: string;
  opened_at: string;
  acknowledged_at: string | null;
  resolved_at: string | null;
  failure_count: number;
  event_count: number;
  reopen_count: number;
  last_status: number | null;
  last_error: string | null;
  last_event_id: string;
  events: { total: number; delivered: number; failing: number; pending: number };
  retry: { requested_at: string; queued: number } | null;
}

/** One event an issue covers (IssueEventSchema in core). */
export interface IssueEventRecord {
  event_id: string;
  type: string | null;
  received_at: string;
  delivery_status: EventStatus;
  attempt_count: number;
  last_failed_at: string;
  last_status: number | null;
  last_error: string | null;
}

const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * A delivery that needs nothing more: delivered (or skipped by its filter), with no
 * replay asked for. Waiting: pending, or a replay asked for. Failing: the rest.
 */
const DONE = `(l.status in ('delivered', 'filtered') and l.next_trigger = 'auto')`;
const WAITING = `(l.status = 'pending' or l.next_trigger = 'replay')`;

/** The issue's columns as IssueRecord, with its covered events' deliveries counted now (`s`: the issue). */
const ISSUE_COLUMNS = `
  s.id, s.endpoint_id, s.destination_id, s.kind, s.status, s.resolved_by,
  ${iso('s.first_seen_at')} as first_seen_at, ${iso('s.last_seen_at')} as last_seen_at, ${iso('s.opened_at')} as opened_at,
  ${iso('s.acknowledged_at')} as acknowledged_at, ${iso('s.resolved_at')} as resolved_at,
  s.failure_count::float8 as failure_count, s.event_count, s.reopen_count, s.last_status, s.last_error, s.last_event_id,
  ${iso('s.retry_requested_at')} as retry_requested_at, s.retry_queued,
  c.total, c.delivered, c.failing, c.pending`;
const ISSUE_COUNTS = `
  cross join lateral (
    select count(*)::int as total,
           count(*) filter (where ${DONE})::int as delivered,
           count(*) filter (where not ${DONE} and not ${WAITING})::int as failing,
           count(*) filter (where not ${DONE} and ${WAITING})::int as pending
    from issue_event ie
    join delivery l on l.event_id = ie.event_id and l.destination_id = s.destination_id and l.account_id = s.account_id
    where ie.issue_id = s.id and ie.account_id = s.account_id
  ) c`;

interface IssueRow extends Omit<IssueRecord, 'title' | 'events' | 'retry'> {
  retry_requested_at: string | null;
  retry_queued: number | null;
  total: number;
  delivered: number;
  failing: number;
  pending: number;
}

function toRecord(row: IssueRow): IssueRecord {
  const { retry_requested_at: requestedAt, retry_queued: queued, total, delivered, failing, pending, ...issue } = row;
  return {
    ...issue,
    failure_count: Number(issue.failure_count),
    title: issueTitle(issue.kind, issue.last_status),
    events: { total, delivered, failing, pending },
    retry: requestedAt === null ? null : { requested_at: requestedAt, queued: queued ?? 0 },
  };
}

export interface IssueListFilter {
  accountId: string;
  /** Default: open and acknowledged. */
  statuses?: readonly IssueStatus[];
  endpointId?: string | undefined;
  destinationId?: string | undefined;
  kind?: IssueKind | undefined;
  /** Rows to read (a page's size plus one, to know whether another follows). */
  limit: number;
  /** The last issue of the previous page: the page goes on below it in (last_seen_at, id). */
  afterId?: string | undefined;
}

/**
 * The account's issues, most recently seen first (by last_seen_at, then id). The cursor
 * is the last issue of the previous page, whose last_seen_at is read again: an issue seen
 * again meanwhile moves to the top, and a later page does not show it twice.
 */
export async function listIssues(em: EntityManager, filter: IssueListFilter): Promise<IssueRecord[]> {
  const endpointId = filter.endpointId ?? null, destinationId = filter.destinationId ?? null, kind = filter.kind ?? null, afterId = filter.afterId ?? null;
  const { rows } = await sql<IssueRow>`
    select ${sql.raw(ISSUE_COLUMNS)}
    from (
      select s.* from issue s
      where s.account_id = ${filter.accountId} and s.status = any(${filter.statuses ?? ['open', 'acknowledged']}::text[])
        and (${endpointId}::text is null or s.endpoint_id = ${endpointId}) and (${destinationId}::text is null or s.destination_id = ${destinationId})
        and (${kind}::text is null or s.kind = ${kind})
        and (${afterId}::text is null or (s.last_seen_at, s.id) < (select a.last_seen_at, a.id from issue a where a.id = ${afterId} and a.account_id = s.account_id))
      order by s.last_seen_at desc, s.id desc
      limit ${filter.limit}
    ) s ${sql.raw(ISSUE_COUNTS)}
    order by s.last_seen_at desc, s.id desc`.execute(em.getKysely());
  return rows.map(toRecord);
}

/** One of the account's issues; null when it has none by that id. */
export async function getIssue(em: EntityManager, accountId: string, issueId: string): Promise<IssueRecord | null> {
  const { rows: [row] } = await sql<IssueRow>`
    select ${sql.raw(ISSUE_COLUMNS)} from issue s ${sql.raw(ISSUE_COUNTS)} where s.id = ${issueId} and s.account_id = ${accountId}`.execute(em.getKysely());
  return row ? toRecord(row) : null;
}

/**
 * The events an issue covers, newest failure first, each with its delivery to the
 * issue's destination as it is now; `afterEventId`: the last of the previous page.
 * Events retention dropped are left out (and their rows go with the sweep).
 */
export async function listIssueEvents(em: EntityManager, accountId: string, issueId: string, page: { limit: number; afterEventId?: string | undefined }): Promise<IssueEventRecord[]> {
  const afterEventId = page.afterEventId ?? null;
  const { rows } = await sql<IssueEventRecord>`
    select ie.event_id, e.type, ${sql.raw(iso('e.received_at'))} as received_at, l.status as delivery_status, l.attempt_count,
           ${sql.raw(iso('ie.last_failed_at'))} as last_failed_at, ie.last_status, ie.last_error
    from issue s
    join issue_event ie on ie.issue_id = s.id and ie.account_id = s.account_id
    join event e on e.id = ie.event_id and e.account_id = s.account_id
    join delivery l on l.event_id = ie.event_id and l.destination_id = s.destination_id and l.account_id = s.account_id
    where s.id = ${issueId} and s.account_id = ${accountId}
      and (${afterEventId}::text is null or (ie.last_failed_at, ie.event_id) < (select c.last_failed_at, c.event_id from issue_event c where c.issue_id = s.id and c.event_id = ${afterEventId}))
    order by ie.last_failed_at desc, ie.event_id desc
    limit ${page.limit}`.execute(em.getKysely());
  return rows;
}

/** A person saw the issue: open → acknowledged (new failures no longer alert). Idempotent; a resolved issue stays resolved. Null: no such issue. */
export async function acknowledgeIssue(em: EntityManager, accountId: string, issueId: string): Promise<IssueRecord | null> {
  await sql`update issue set status = 'acknowledged', acknowledged_at = now() where id = ${issueId} and account_id = ${accountId} and status = 'open'`.execute(em.getKysely());
  return getIssue(em, accountId, issueId);
}

/** A person resolved the issue (resolved_by user). Idempotent. A later failure reopens it. Null: no such issue. */
export async function resolveIssue(em: EntityManager, accountId: string, issueId: string): Promise<IssueRecord | null> {
  await sql`update issue set status = 'resolved', resolved_by = 'user', resolved_at = now() where id = ${issueId} and account_id = ${accountId} and status <> 'resolved'`.execute(em.getKysely());
  return getIssue(em, accountId, issueId);
}

/**
 * Retries the issue: one replay attempt (trigger replay) of every covered event whose
 * delivery to the issue's destination is not delivered, to that destination only,
 * through the bulk replay (replayMany: the oldest first, at most `max`). Its progress is
 * the issue's `events`; the sweep resolves it once all are delivered. Null: no such issue.
 */
export async function retryIssue(orm: Orm, accountId: string, issueId: string, max: number): Promise<{ issue: IssueRecord; queued: number } | null> {
  const em = orm.em.fork();
  const { rows: [found] } = await sql<{ destination_id: string; first_event_id: string | null }>`
    select s.destination_id, (select min(ie.event_id) from issue_event ie where ie.issue_id = s.id and ie.account_id = s.account_id) as first_event_id
    from issue s where s.id = ${issueId} and s.account_id = ${accountId}`.execute(em.getKysely());
  if (!found) return null;
  const replayed = found.first_event_id === null ? { deliveries: 0 } : await replayMany(orm, {
    accountId,
    destinationId: found.destination_id,
    issueId,
    status: ['pending', 'retrying', 'failed'],
    // its covered events are none older than its first (event ids begin with their receive time)
    since: new Date(idTimeMs(found.first_event_id)),
    max,
  });
  await sql`update issue set retry_requested_at = now(), retry_queued = ${replayed.deliveries} where id = ${issueId} and account_id = ${accountId}`.execute(em.getKysely());
  return { issue: (await getIssue(em, accountId, issueId))!, queued: replayed.deliveries };
}

/** Issues the sweep looks at per pass at the most, and covered-event rows it checks for retention. */
export const ISSUE_SWEEP_BATCH = 500;

/**
 * The sweep (apps/relay jobs/issue-sweep.ts): resolves (resolved_by auto) each open or
 * acknowledged issue every covered event of which was delivered to its destination (or
 * is gone: retention took it), or whose destination was deleted, up to ISSUE_SWEEP_BATCH issues after `afterId` (the
 * sweep walks them in id order and wraps around). Returns the ids resolved and the last
 * id looked at (null: the walk reached the end).
 */
export async function resolveDeliveredIssues(orm: Orm, afterId = '', limit = ISSUE_SWEEP_BATCH): Promise<{ resolved: string[]; lastId: string | null }> {
  const { rows } = await sql<{ id: string; resolved: boolean }>`
    with looked as (
      select s.id, s.account_id, s.destination_id from issue s
      where s.status <> 'resolved' and s.id > ${afterId} order by s.id limit ${limit}
    ),
    resolved as (
      update issue s set status = 'resolved', resolved_by = 'auto', resolved_at = now()
      from looked k
      where s.id = k.id and s.status <> 'resolved'
        and (not exists (
               select 1 from issue_event ie
               join delivery l on l.event_id = ie.event_id and l.destination_id = k.destination_id and l.account_id = k.account_id
               where ie.issue_id = k.id and ie.account_id = k.account_id and not ${sql.raw(DONE)})
             -- a deleted destination gets nothing more: its issue has nothing left to retry
             or exists (select 1 from destination d where d.id = k.destination_id and d.account_id = k.account_id and d.deleted_at is not null))
      returning s.id
    )
    select k.id, k.id in (select id from resolved) as resolved from looked k order by k.id`.execute(orm.em.fork().getKysely());
  return { resolved: rows.filter((row) => row.resolved).map((row) => row.id), lastId: rows.length < limit ? null : rows.at(-1)!.id };
}

/**
 * Retention of issue_event (docs/issues.md#retention): of up to `limit` covered-event
 * rows after `afterEventId` (by event id: the sweep walks them all over its passes and
 * wraps around), deletes those whose event retention removed. Returns how many went and
 * the last event id looked at (null: the walk reached the end).
 */
export async function pruneIssueEvents(orm: Orm, afterEventId = '', limit = ISSUE_SWEEP_BATCH): Promise<{ removed: number; lastEventId: string | null }> {
  const { rows: [row] } = await sql<{ removed: number; looked: number; last_id: string | null }>`
    with looked as (
      select ie.issue_id, ie.event_id from issue_event ie where ie.event_id > ${afterEventId} order by ie.event_id limit ${limit}
    ),
    removed as (
      delete from issue_event ie using looked k
      where ie.issue_id = k.issue_id and ie.event_id = k.event_id
        and not exists (select 1 from event e where e.id = k.event_id)
      returning 1
    )
    select (select count(*)::int from removed) as removed, (select count(*)::int from looked) as looked, (select max(event_id) from looked) as last_id`.execute(orm.em.fork().getKysely());
  return { removed: row?.removed ?? 0, lastEventId: (row?.looked ?? 0) < limit ? null : row!.last_id };
}
