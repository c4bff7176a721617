/**
 * An event's status, attempt count and next due time are not stored on the event: they
 * are its deliveries' (docs/delivery.md#event-status), read with it. So recording a
 * delivery's result writes only the narrow delivery row and the attempt, never the wide
 * event row with its body. Lists read the event rows in keyset order and each one's
 * deliveries by primary key.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { firstIdAt, type EventStatus, type VerificationResult } from '@hook/core';
import type { Orm } from './orm.ts';
import { runStatement } from './queue/executor.ts';
import type { ReceivedEvent } from './queue/types.ts';

/**
 * Whether delivery `l` can still move: its destination is not deleted (deleting an endpoint
 * deletes its destinations). A delivery still `pending` or `retrying` when its destination
 * was deleted never will: nothing claims it again, and a replay refuses it. So it shows as
 * `failed`, with no next attempt (docs/delivery.md#deleted-destinations). One primary-key
 * lookup, made only for deliveries still waiting.
 */
const DESTINATION_LIVE = 'exists (select 1 from destination x where x.id = l.destination_id and x.deleted_at is null)';

/** Delivery `l`'s status as every view shows it (DESTINATION_LIVE). */
export const DELIVERY_STATUS = `case when l.status in ('pending', 'retrying') and not ${DESTINATION_LIVE} then 'failed' else l.status end`;

/**
 * The summary of the deliveries `l` of one event, as SQL select-list items: `retrying` if
 * any delivery is, else `pending` if any is, else `failed` if any failed, else `delivered`
 * if any was, else `filtered` (docs/delivery.md#event-status), each delivery's status as
 * DELIVERY_STATUS shows it; the attempts of all; and the soonest due time of a delivery
 * that can still move (a `hook listen` destination's pending delivery is due whenever a
 * listener connects: not a time to show).
 */
export const EVENT_SUMMARY_COLUMNS = `
  case when bool_or(l.status = 'retrying' and ${DESTINATION_LIVE}) then 'retrying'
       when bool_or(l.status = 'pending' and ${DESTINATION_LIVE}) then 'pending'
       when bool_or(l.status in ('failed', 'pending', 'retrying')) then 'failed' when bool_or(l.status = 'delivered') then 'delivered'
       else 'filtered' end as status,
  coalesce(sum(l.attempt_count), 0)::int as attempt_count,
  min(l.next_attempt_at) filter (where l.next_attempt_at is not null
                                    and exists (select 1 from destination d where d.id = l.destination_id and d.deleted_at is null
                                                and (l.status <> 'pending' or l.next_trigger = 'replay' or d.type = 'url'))) as next_attempt_at`;

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
}

/** An event as lists show it: the stored request (body only when asked for) with its summary and last attempt. */
export interface ListedEvent extends EventSummary, Omit<ReceivedEvent, 'body'> {
  body?: Buffer;
  lastAttempt: LastAttempt | null;
}

/**
 * The attempt `la` a list shows beside event `e` with summary `s`: the newest, except that
 * an event retrying or failed shows its newest failed attempt, so a 2xx to another of
 * its destinations does not hide why it fails. One probe of attempt_event_idx per event
 * on the page (an event has a handful of attempts, sorted in memory), made only for the
 * rows the page returns.
 */
const LAST_ATTEMPT_JOIN = `
    left join lateral (
      select a.destination_id, a.started_at, a.response_status, a.error
      from attempt a
      where a.event_id = e.id
      order by (s.status in ('retrying', 'failed') and a.response_status between 200 and 299) is true, a.started_at desc, a.id desc
      limit 1
    ) la on true`;

export interface EventListFilter {
  accountId: string;
  /** Only these events. */
  ids?: readonly string[];
  endpointIds?: readonly string[];
  excludeEndpointIds?: readonly string[];
  /** Only events whose summary status is one of these. */
  status?: readonly EventStatus[];
  type?: string;
  /** Keyset: only ids before this one (newest first). */
  beforeId?: string;
  /** Only events received at or after this time. */
  receivedFrom?: Date;
  /** Only events received before this time. */
  receivedBefore?: Date;
  limit: number;
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
  status: EventStatus; attempt_count: number; next_attempt_at: string | Date | null;
  last_destination_id: string | null; last_started_at: string | Date | null; last_response_status: number | null; last_error: string | null;
}

/**
 * A PostgreSQL array literal of ids (letters, digits and `_` only), or null: em.execute
 * would spread a JavaScript array into a list of parameters.
 */
function idArray(ids: readonly string[] | undefined): string | null {
  if (ids === undefined) return null;
  if (ids.some((id) => !/^[A-Za-z0-9_]+$/.test(id))) throw new Error('an id holds characters no id has');
  return `{${ids.join(',')}}`;
}

function toListed(row: ListedRow): ListedEvent {
  // Timestamps arrive as text through the ORM's driver settings.
  return {
    id: row.id, accountId: row.account_id, endpointId: row.endpoint_id, type: row.type, method: row.method, path: row.path, query: row.query,
    headers: row.headers, contentType: row.content_type, size: row.size, receivedAt: new Date(row.received_at), verification: row.verification, handshake: row.handshake, dedupeKey: row.dedupe_key,
    status: row.status, attemptCount: row.attempt_count, nextAttemptAt: row.next_attempt_at === null ? null : new Date(row.next_attempt_at),
    lastAttempt: row.last_started_at === null
      ? null
      : { destinationId: row.last_destination_id, startedAt: new Date(row.last_started_at), responseStatus: row.last_response_status, error: row.last_error },
    ...(row.body ? { body: row.body } : {}),
  };
}

/**
 * The SQL of one page of an account's events, newest first, with their summaries. The
 * account's events are walked in event_account_idx order and each one's deliveries found by
 * primary key; a status filter is applied to the summary as the walk goes. A time range
 * bounds the walk by id (ids begin with their time), so `since`/`until` stay an index
 * range; `received_at` then decides exactly. Exported for the plan test.
 */
export function eventListQuery(filter: EventListFilter, select: 'page' | 'ids' = 'page'): { sql: string; params: unknown[] } {
  const ids = idArray(filter.ids);
  const endpointIds = idArray(filter.endpointIds);
  const excluded = idArray(filter.excludeEndpointIds?.length ? filter.excludeEndpointIds : undefined);
  const fromId = filter.receivedFrom ? firstIdAt('event', filter.receivedFrom.getTime()) : null;
  const beforeTimeId = filter.receivedBefore ? firstIdAt('event', filter.receivedBefore.getTime() + ID_CLOCK_SLACK_MS) : null;
  const columns = select === 'ids' ? 'e.id' : `e.id, e.account_id, e.endpoint_id, e.type, e.method, e.path, e.query, e.headers, e.content_type, e.size, e.received_at, e.verification, e.handshake, e.dedupe_key,
           ${filter.withBody ? 'e.body,' : ''} s.status, s.attempt_count, s.next_attempt_at,
           la.destination_id as last_destination_id, la.started_at as last_started_at, la.response_status as last_response_status, la.error as last_error`;
  // A scan for ids only reads the summaries when the status filter needs them.
  const summaries = select === 'ids' && filter.status === undefined ? '' : `cross join lateral (select ${EVENT_SUMMARY_COLUMNS} from delivery l where l.event_id = e.id) s`;
  const sql = `
    select ${columns}
    from event e
    ${summaries}
    ${select === 'ids' ? '' : LAST_ATTEMPT_JOIN}
    where e.account_id = ?
      and (?::text[] is null or e.id = any(?::text[]))
      and (?::text[] is null or e.endpoint_id = any(?::text[]))
      and (?::text[] is null or e.endpoint_id <> all(?::text[]))
      and (?::text is null or e.type = ?)
      and (?::text is null or e.id < ?)
      and (?::text is null or e.id >= ?)
      and (?::text is null or e.id < ?)
      and (?::timestamptz is null or e.received_at >= ?)
      and (?::timestamptz is null or e.received_at < ?)
      ${filter.status === undefined ? '' : 'and s.status = any(?::text[])'}
    order by e.account_id desc, e.id desc
    limit ?`;
  const params = [
    filter.accountId,
    ids, ids,
    endpointIds, endpointIds,
    excluded, excluded,
    filter.type ?? null, filter.type ?? null,
    filter.beforeId ?? null, filter.beforeId ?? null,
    fromId, fromId,
    beforeTimeId, beforeTimeId,
    filter.receivedFrom ?? null, filter.receivedFrom ?? null,
    filter.receivedBefore ?? null, filter.receivedBefore ?? null,
    ...(filter.status === undefined ? [] : [`{${filter.status.join(',')}}`]),
    filter.limit,
  ];
  return { sql, params };
}

/** One page of an account's events, newest first, with their summaries (eventListQuery). */
export async function listEvents(em: EntityManager, filter: EventListFilter): Promise<ListedEvent[]> {
  const { sql, params } = eventListQuery(filter);
  const rows = await em.execute<ListedRow[]>(sql, params);
  return rows.map(toListed);
}

/** What a payload search found, and how far it looked. */
export interface EventSearchResult {
  events: ListedEvent[];
  /** How many events (matching the other filters, from the cursor on) the search looked through. */
  scanned: number;
  /** The oldest of them: a search that stopped at its bound continues below it. */
  oldestScannedId: string | null;
}

/**
 * Events whose body holds `text` (case-insensitive; the body read as UTF-8, or for a body
 * that is not valid UTF-8 its escaped bytes: hook_body_text, migration 010), newest
 * first, among at most `maxScanned` newest events matching the rest of the filter. The
 * bound keeps a search's cost fixed at any account size: the window is an index walk of
 * ids, and bodies are read newest first only until the page is full.
 */
export async function searchEvents(em: EntityManager, filter: EventListFilter & { text: string; maxScanned: number }): Promise<EventSearchResult> {
  const scan = eventListQuery({ ...filter, limit: filter.maxScanned }, 'ids');
  const [found] = await em.execute<{ scanned: number; oldest_scanned_id: string | null; ids: string[] }[]>(`
    with scanned as materialized (${scan.sql}),
    matched as (
      select c.id from scanned c join event b on b.id = c.id
      where strpos(lower(hook_body_text(b.body)), lower(?)) > 0
      order by c.id desc
      limit ?
    )
    select (select count(*) from scanned)::int as scanned, (select min(id) from scanned) as oldest_scanned_id,
           array(select id from matched order by id desc) as ids`,
  [...scan.params, filter.text, filter.limit]);
  const ids = found?.ids ?? [];
  const events = ids.length === 0 ? [] : await listEvents(em, { accountId: filter.accountId, ids, limit: ids.length, withBody: filter.withBody });
  return { events, scanned: found?.scanned ?? 0, oldestScannedId: found?.oldest_scanned_id ?? null };
}

const SUMMARIES = {
  name: 'hook_event_summaries',
  text: `select l.event_id as id, ${EVENT_SUMMARY_COLUMNS} from delivery l where l.event_id = any($1::text[]) group by l.event_id`,
};

/** The summaries of some events, read now. */
export async function summarizeEvents(orm: Orm, eventIds: readonly string[]): Promise<Map<string, EventSummary>> {
  if (eventIds.length === 0) return new Map();
  const rows = await runStatement<{ id: string; status: EventStatus; attempt_count: number; next_attempt_at: string | Date | null }>(orm, SUMMARIES, [[...new Set(eventIds)]]);
  return new Map(rows.map((row) => [row.id, { status: row.status, attemptCount: row.attempt_count, nextAttemptAt: row.next_attempt_at === null ? null : new Date(row.next_attempt_at) }]));
}

/** One of an event's deliveries as every view shows it. */
export interface ShownDelivery {
  destinationId: string;
  /** DELIVERY_STATUS: `failed` for one still waiting when its destination was deleted. */
  status: EventStatus;
  attemptCount: number;
  /** Null once its destination is deleted: nothing more is due. */
  nextAttemptAt: Date | null;
  nextTrigger: 'auto' | 'replay';
  /** When its destination was deleted (the endpoint's deletion deletes them too); null while it is there. */
  destinationDeletedAt: Date | null;
}

/** An event's deliveries as every view shows them (DELIVERY_STATUS), in the caller's transaction. */
export async function readEventDeliveries(em: EntityManager, eventId: string): Promise<ShownDelivery[]> {
  const rows = await em.execute<{ destination_id: string; status: EventStatus; attempt_count: number; next_attempt_at: string | Date | null; next_trigger: 'auto' | 'replay'; deleted_at: string | Date | null }[]>(`
    select l.destination_id, ${DELIVERY_STATUS} as status, l.attempt_count,
           case when d.deleted_at is null then l.next_attempt_at end as next_attempt_at,
           case when d.deleted_at is null then l.next_trigger else 'auto' end as next_trigger, d.deleted_at
    from delivery l join destination d on d.id = l.destination_id
    where l.event_id = ?`, [eventId]);
  // Timestamps arrive as text through the ORM's driver settings.
  const date = (value: string | Date | null) => (value === null ? null : new Date(value));
  return rows.map((row) => ({
    destinationId: row.destination_id, status: row.status, attemptCount: row.attempt_count, nextAttemptAt: date(row.next_attempt_at),
    nextTrigger: row.next_trigger, destinationDeletedAt: date(row.deleted_at),
  }));
}
