/**
 * An event's status, attempt count and next due time are not stored on the event: they
 * are its deliveries' (docs/delivery.md#event-status), read with it. So recording a
 * delivery's result writes only the narrow delivery row and the attempt, never the wide
 * event row with its body. Lists read the event rows in keyset order and each one's
 * deliveries by primary key.
 *
 * SQL: the list's query is still text with `?` run by em.execute, and SUMMARIES a named
 * statement; why, in ../README.md (How SQL is written here).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { EVENT_LIST_WINDOW, firstIdAt, type EventStatus, type IssueKind, type VerificationResult } from '@hook/core';
import type { Orm } from './orm.ts';
import { runStatement } from './queue/executor.ts';
import { DELIVERY_OPEN } from './queue/statements/claimed-columns.ts';
import type { ReceivedEvent } from './queue/types.ts';

/**
 * Whether delivery `l` can still move: its destination is not deleted (deleting an endpoint
 * deletes its destinations). A delivery still `pending` or `retrying` when its destination
 * was deleted never will: nothing claims it again, and a replay refuses it. So it shows as
 * `failed`, with no next attempt (docs/delivery.md#deleted-destinations). One primary-key
 * lookup, made only for deliveries still waiting.
 *
 * `account` is the SQL of the account's id: a parameter, so the lookup names the account
 * itself, not `l`'s, and on a PostgreSQL distributed by account it routes on its own
 * (docs/scaling.md: a correlated subquery is not routed by its outer query's filter); a
 * statement across accounts (readStreamEvents) passes its event's column.
 */
function destinationLive(account: string): string {
  return `exists (select 1 from destination x where x.id = l.destination_id and x.account_id = ${account} and x.deleted_at is null)`;
}

/** Delivery `l`'s status as every view shows it (destinationLive); `account` as there. */
function deliveryStatus(account: string): string {
  return `case when l.status in ('pending', 'retrying') and not ${destinationLive(account)} then 'failed' else l.status end`;
}

/**
 * The summary of the deliveries `l` of one event, as SQL select-list items: `retrying` if
 * any delivery is, else `pending` if any is, else `failed` if any failed, else `delivered`
 * if any was, else `filtered` (docs/delivery.md#event-status), each delivery's status as
 * deliveryStatus shows it; the attempts of all; and the soonest due time of a delivery
 * that can still move (a `hook listen` destination's pending delivery is due whenever a
 * listener connects: not a time to show). `account` is the SQL of the account's id, as
 * in destinationLive: each `?` in it is one more parameter (withAccount).
 */
export function eventSummaryColumns(account: string): string {
  return `
  case when bool_or(l.status = 'retrying' and ${destinationLive(account)}) then 'retrying'
       when bool_or(l.status = 'pending' and ${destinationLive(account)}) then 'pending'
       when bool_or(l.status in ('failed', 'pending', 'retrying')) then 'failed' when bool_or(l.status = 'delivered') then 'delivered'
       else 'filtered' end as status,
  coalesce(sum(l.attempt_count), 0)::int as attempt_count,
  min(l.next_attempt_at) filter (where l.next_attempt_at is not null
                                    and exists (select 1 from destination d where d.id = l.destination_id and d.account_id = ${account} and d.deleted_at is null
                                                and (l.status <> 'pending' or l.next_trigger = 'replay' or d.type = 'url'))) as next_attempt_at`;
}

/** The SQL `sql` written with `?` for the account, and the account as often as it asks for it. */
function withAccount(sql: string, accountId: string): Condition {
  return { sql, params: Array.from(sql.matchAll(/\?/g), () => accountId) };
}

export interface EventSummary {
  status: EventStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
}

/** The attempt a list shows beside an event (LAST_ATTEMPT_JOIN); its error as recorded. */
export interface LastAttempt {
  destinationId: string | null;
  startedAt: Date;
  responseStatus: number | null;
  error: string | null;
  /** The kind it was recorded with (core's AttemptKind: null for a success, and for attempts recorded before kinds were). */
  failureKind: IssueKind | null;
}

/** An event as lists show it: the stored request (body only when asked for) with its summary and last attempt. */
export interface ListedEvent extends EventSummary, Omit<ReceivedEvent, 'body'> {
  /** Its retention class: with its id, the partition that holds it and its deliveries and attempts. */
  retentionClass: number;
  body?: Buffer;
  lastAttempt: LastAttempt | null;
}

/**
 * The attempt `la` a list shows beside event `e` with summary `s`: the newest, except that
 * an event retrying or failed shows its newest failed attempt, so a 2xx to another of
 * its destinations does not hide why it fails. One probe of attempt_event_idx per event
 * on the page (an event has a handful of attempts, sorted in memory), made only for the
 * rows the page returns; the event's class names the one leaf to probe (attempt is
 * partitioned by class, then by event id). The account is a `?` of its own (withAccount).
 */
const LAST_ATTEMPT_JOIN = `
    left join lateral (
      select a.destination_id, a.started_at, a.response_status, a.error, a.failure_kind
      from attempt a
      where a.event_id = e.id and a.account_id = ? and a.retention_class = e.retention_class
      order by (s.status in ('retrying', 'failed') and a.response_status between 200 and 299) is true, a.started_at desc, a.id desc
      limit 1
    ) la on true`;

/**
 * The summary `s` of event `e` (eventSummaryColumns), from its deliveries: found by the
 * delivery key, in the event's class (one leaf once delivery is partitioned like event),
 * and every table named with the account (withAccount).
 */
const SUMMARY_JOIN = `
    cross join lateral (select ${eventSummaryColumns('?')} from delivery l
                        where l.event_id = e.id and l.account_id = ? and l.retention_class = e.retention_class) s`;

/** Event statuses that only a delivery in the queue gives (eventSummaryColumns): one that is pending or retrying. */
const QUEUE_STATUSES: ReadonlySet<EventStatus> = new Set(['pending', 'retrying']);

/**
 * Whether event `e` has a delivery of one of the statuses asked (all QUEUE_STATUSES): a
 * list for `pending` or `retrying` checks this first, and works out the summary only of
 * the events that have one. The queue's own condition, written as `delivery`'s partition
 * key is (migration 021), lets the planner read only the queue's partition, small and
 * always in memory, and not the event's history leaf: such a list costs little more than
 * its walk (bench:scale). The account is the first `?`, the statuses the second.
 * (DELIVERY_OPEN is the queue's condition the claims use too.)
 *
 * A scalar subquery with LIMIT 1, not EXISTS: PostgreSQL may turn an EXISTS into one hashed
 * read of every open delivery of the account, which grows with the queue (16 ms of a 39 ms
 * page with 30,000 retrying deliveries, bench:scale); this stays one key probe per event walked.
 */
const IN_QUEUE = `coalesce((select true from delivery l where l.event_id = e.id and l.account_id = ?
                    and ${DELIVERY_OPEN} and l.status = any(?::text[]) limit 1), false)`;

export interface EventListFilter {
  accountId: string;
  /** Only these events. */
  ids?: readonly string[];
  endpointIds?: readonly string[];
  excludeEndpointIds?: readonly string[];
  /** Only events whose summary status is one of these. */
  status?: readonly EventStatus[];
  type?: string;
  /** Only events whose body holds this text, case-insensitive (hook_body_text, migration 010). */
  text?: string;
  /** Keyset: only ids before this one (newest first). */
  beforeId?: string;
  /** Only events received at or after this time. */
  receivedFrom?: Date;
  /** Only events received before this time. */
  receivedBefore?: Date;
  /** Most events the page holds. */
  limit: number;
  /** Most events the page looks through (eventListQuery's walk); EVENT_LIST_WINDOW when not given. */
  maxScanned?: number;
  withBody?: boolean;
}

/**
 * How far an event id's time may run ahead of its `received_at`: ids are made from the
 * same clock reading, but stay increasing when the clock steps back (newUlid), so an
 * upper id bound gets this much slack and `received_at` decides exactly.
 */
const ID_CLOCK_SLACK_MS = 60_000;

interface ListedRow {
  id: string; account_id: string; endpoint_id: string; type: string | null; method: string; path: string; query: string;
  headers: Record<string, string>; content_type: string | null; size: number; received_at: string | Date; body?: Buffer; verification: VerificationResult | null; handshake: string | null; dedupe_key: string | null;
  retention_class: number; status: EventStatus; attempt_count: number; next_attempt_at: string | Date | null;
  last_destination_id: string | null; last_started_at: string | Date | null; last_response_status: number | null; last_error: string | null; last_failure_kind: IssueKind | null;
  /** Its place in the walk, from 1 (eventListQuery). */
  walked: number;
  /** The walk's last row: its bound, or the oldest event that could match. */
  walk_end: boolean;
  /** It passes every filter (only the walk's last row may not). */
  matched: boolean;
}

/**
 * A PostgreSQL array literal of ids (letters, digits and `_` only), or null: em.execute
 * would spread a JavaScript array into a list of parameters.
 */
function idArray(ids: readonly string[]): string {
  if (ids.some((id) => !/^[A-Za-z0-9_]+$/.test(id))) throw new Error('an id holds characters no id has');
  return `{${ids.join(',')}}`;
}

function toListed(row: ListedRow): ListedEvent {
  // Timestamps arrive as text through the ORM's driver settings.
  return {
    id: row.id, accountId: row.account_id, endpointId: row.endpoint_id, type: row.type, method: row.method, path: row.path, query: row.query,
    headers: row.headers, contentType: row.content_type, size: row.size, receivedAt: new Date(row.received_at), verification: row.verification, handshake: row.handshake, dedupeKey: row.dedupe_key,
    retentionClass: row.retention_class, status: row.status, attemptCount: row.attempt_count, nextAttemptAt: row.next_attempt_at === null ? null : new Date(row.next_attempt_at),
    lastAttempt: row.last_started_at === null
      ? null
      : { destinationId: row.last_destination_id, startedAt: new Date(row.last_started_at), responseStatus: row.last_response_status, error: row.last_error, failureKind: row.last_failure_kind },
    ...(row.body ? { body: row.body } : {}),
  };
}

/** A condition with its parameters, in the order of its `?`s. */
interface Condition {
  sql: string;
  params: unknown[];
}

/**
 * The SQL of one page of an account's events, newest first, with their summaries: a walk
 * of at most `maxScanned` events (from the cursor on) that one index serves in order, and
 * the filters no index serves applied to what the walk reads.
 *
 * The walk: the account's events by event_account_idx, or one endpoint's by
 * event_endpoint_idx, or one type's by event_account_type_idx (migration 020); a time
 * range bounds any of them by id (ids begin with their receive time), and `received_at`
 * decides exactly. Every event the walk reads could be on the page, so a page that fills
 * stops early, and one that does not stops at the bound instead of reading the account's
 * whole history: a status (computed from the deliveries, eventSummaryColumns), a
 * payload search, a type beside an endpoint, or the notifications endpoint left out are
 * checked on the walked events only. The walk's last row is returned whether it matches
 * or not (`walk_end`, `walked`), so listEvents can tell where to carry on. Exported for
 * the plan test.
 */
export function eventListQuery(filter: EventListFilter): { sql: string; params: unknown[]; maxScanned: number } {
  const walk: Condition[] = [{ sql: 'e.account_id = ?', params: [filter.accountId] }];
  const checked: Condition[] = [];
  if (filter.ids !== undefined) walk.push({ sql: 'e.id = any(?::text[])', params: [idArray(filter.ids)] });
  const endpointIds = filter.endpointIds;
  if (endpointIds !== undefined) {
    // One endpoint as an equality, so its index is walked in id order.
    walk.push(endpointIds.length === 1 ? { sql: 'e.endpoint_id = ?', params: [endpointIds[0]] } : { sql: 'e.endpoint_id = any(?::text[])', params: [idArray(endpointIds)] });
  }
  if (filter.type !== undefined) (endpointIds === undefined ? walk : checked).push({ sql: 'e.type = ?', params: [filter.type] });
  if (filter.beforeId !== undefined) walk.push({ sql: 'e.id < ?', params: [filter.beforeId] });
  if (filter.receivedFrom) {
    walk.push({ sql: 'e.id >= ?', params: [firstIdAt('event', filter.receivedFrom.getTime())] }, { sql: 'e.received_at >= ?', params: [filter.receivedFrom] });
  }
  if (filter.receivedBefore) {
    walk.push({ sql: 'e.id < ?', params: [firstIdAt('event', filter.receivedBefore.getTime() + ID_CLOCK_SLACK_MS)] }, { sql: 'e.received_at < ?', params: [filter.receivedBefore] });
  }
  if (filter.excludeEndpointIds?.length) checked.push({ sql: 'e.endpoint_id <> all(?::text[])', params: [idArray(filter.excludeEndpointIds)] });
  if (filter.text !== undefined) checked.push({ sql: 'strpos(lower(hook_body_text(e.body)), lower(?)) > 0', params: [filter.text] });
  if (filter.status !== undefined) {
    const statuses = `{${filter.status.join(',')}}`;
    if (filter.status.every((status) => QUEUE_STATUSES.has(status))) checked.push({ sql: IN_QUEUE, params: [filter.accountId, statuses] });
    checked.push({ sql: 's.status = any(?::text[])', params: [statuses] });
  }

  // Without checks every event walked is on the page: the walk is the page and the one
  // after it, planned as such (for a handful of rows, not for the bound).
  const maxScanned = checked.length === 0 ? filter.limit + 1 : Math.max(filter.maxScanned ?? EVENT_LIST_WINDOW, filter.limit + 1);
  const readsBody = filter.withBody === true || filter.text !== undefined;
  const summary = withAccount(SUMMARY_JOIN, filter.accountId);
  const lastAttempt = withAccount(LAST_ATTEMPT_JOIN, filter.accountId);
  // Each check is its own conjunct, so PostgreSQL applies it as soon as its columns are
  // read: a search reads no deliveries for an event whose body does not match.
  const where = checked.length === 0 ? '' : `where ${checked.map((check) => `(e.walk_end or ${check.sql})`).join(' and ')}`;
  const matched = checked.length === 0 ? 'true' : `(not e.walk_end or (${checked.map((check) => check.sql).join(' and ')}))`;
  const sql = `
    select e.id, e.account_id, e.endpoint_id, e.type, e.method, e.path, e.query, e.headers, e.content_type, e.size, e.received_at, e.verification, e.handshake, e.dedupe_key,
           e.retention_class, ${filter.withBody ? 'e.body,' : ''} s.status, s.attempt_count, s.next_attempt_at,
           la.destination_id as last_destination_id, la.started_at as last_started_at, la.response_status as last_response_status, la.error as last_error, la.failure_kind as last_failure_kind,
           e.walked, e.walk_end, ${matched} as matched
    from (
      select e.id, e.account_id, e.endpoint_id, e.type, e.method, e.path, e.query, e.headers, e.content_type, e.size, e.received_at, e.verification, e.handshake, e.dedupe_key,
             e.retention_class, ${readsBody ? 'e.body,' : ''}
             (row_number() over walk)::int as walked,
             row_number() over walk = ? or lead(e.id) over walk is null as walk_end
      from event e
      where ${walk.map((condition) => condition.sql).join(' and ')}
      window walk as (order by e.id desc)
      order by e.id desc
      limit ?
    ) e
    ${summary.sql}
    ${lastAttempt.sql}
    ${where}
    order by e.id desc
    limit ?`;
  const checkParams = checked.flatMap((check) => check.params);
  const params = [
    ...checkParams, maxScanned, ...walk.flatMap((condition) => condition.params), maxScanned,
    ...summary.params, ...lastAttempt.params, ...checkParams, filter.limit + 1,
  ];
  return { sql, params, maxScanned };
}

/** A page of events and where the next one starts. */
export interface EventListPage {
  /** At most `limit` events, newest first. */
  events: ListedEvent[];
  /**
   * The next page is the events before this id, or null when no older event can match.
   * It is set on a page shorter than `limit` too, when the walk stopped at its bound.
   */
  nextBeforeId: string | null;
  /** How many events the page looked through. */
  scanned: number;
  /** Whether it stopped at `maxScanned` before the page was full, with older events left to look through. */
  truncated: boolean;
}

/**
 * One page of an account's events, newest first, with their summaries (eventListQuery):
 * at most `limit` of the at most `maxScanned` events it looks through from the cursor on.
 * The bound keeps a page's cost the same at any account size, however rare the match.
 */
export async function listEvents(em: EntityManager, filter: EventListFilter): Promise<EventListPage> {
  const { sql, params, maxScanned } = eventListQuery(filter);
  const rows = await em.execute<ListedRow[]>(sql, params);
  const matched = rows.filter((row) => row.matched);
  const scanned = rows.at(-1)?.walked ?? 0;
  if (matched.length > filter.limit) {
    const events = matched.slice(0, filter.limit);
    return { events: events.map(toListed), nextBeforeId: events.at(-1)!.id, scanned, truncated: false };
  }
  const end = rows.find((row) => row.walk_end);
  const truncated = end !== undefined && end.walked === maxScanned;
  return { events: matched.map(toListed), nextBeforeId: truncated ? end.id : null, scanned, truncated };
}

const SUMMARIES = {
  name: 'hook_event_summaries',
  text: `select l.event_id as id, ${eventSummaryColumns('$2')} from delivery l where l.event_id = any($1::text[]) and l.account_id = $2 group by l.event_id`,
};

/** The summaries of some events of one account, read now: one statement, routed to the account's shard (docs/scaling.md). */
export async function summarizeEvents(orm: Orm, accountId: string, eventIds: readonly string[]): Promise<Map<string, EventSummary>> {
  if (eventIds.length === 0) return new Map();
  const rows = await runStatement<{ id: string; status: EventStatus; attempt_count: number; next_attempt_at: string | Date | null }>(orm, SUMMARIES, [[...new Set(eventIds)], accountId]);
  return new Map(rows.map((row) => [row.id, { status: row.status, attemptCount: row.attempt_count, nextAttemptAt: row.next_attempt_at === null ? null : new Date(row.next_attempt_at) }]));
}

/** One of an event's deliveries as every view shows it. */
export interface ShownDelivery {
  destinationId: string;
  /** deliveryStatus: `failed` for one still waiting when its destination was deleted. */
  status: EventStatus;
  attemptCount: number;
  /** Null once its destination is deleted: nothing more is due. */
  nextAttemptAt: Date | null;
  nextTrigger: 'auto' | 'replay';
  /** When its destination was deleted (the endpoint's deletion deletes them too); null while it is there. */
  destinationDeletedAt: Date | null;
}

/** The event whose deliveries readEventDeliveries reads: its id, account and retention class (the delivery leaf it names). */
export interface EventKey {
  id: string;
  accountId: string;
  retentionClass: number;
}

/** An event's deliveries as every view shows them (deliveryStatus), in the caller's transaction. */
export async function readEventDeliveries(em: EntityManager, event: EventKey): Promise<ShownDelivery[]> {
  const { sql, params } = withAccount(`
    select l.destination_id, ${deliveryStatus('?')} as status, l.attempt_count,
           case when d.deleted_at is null then l.next_attempt_at end as next_attempt_at,
           case when d.deleted_at is null then l.next_trigger else 'auto' end as next_trigger, d.deleted_at
    from delivery l join destination d on d.id = l.destination_id and d.account_id = ?
    where l.account_id = ?`, event.accountId);
  const rows = await em.execute<{ destination_id: string; status: EventStatus; attempt_count: number; next_attempt_at: string | Date | null; next_trigger: 'auto' | 'replay'; deleted_at: string | Date | null }[]>(
    `${sql} and l.event_id = ? and l.retention_class = ?`, [...params, event.id, event.retentionClass]);
  // Timestamps arrive as text through the ORM's driver settings.
  const date = (value: string | Date | null) => (value === null ? null : new Date(value));
  return rows.map((row) => ({
    destinationId: row.destination_id, status: row.status, attemptCount: row.attempt_count, nextAttemptAt: date(row.next_attempt_at),
    nextTrigger: row.next_trigger, destinationDeletedAt: date(row.deleted_at),
  }));
}
