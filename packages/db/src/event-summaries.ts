/**
 * An event's status, attempt count and next due time are not stored on the event: they
 * are its deliveries' (docs/delivery.md#event-status), read with it. So recording a
 * delivery's result writes only the narrow delivery row and the attempt, never the wide
 * event row with its body. Lists read the event rows in keyset order and each one's
 * deliveries by primary key.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventStatus } from '@hook/core';
import type { Orm } from './orm.ts';
import { runStatement } from './queue/executor.ts';
import type { ReceivedEvent } from './queue/types.ts';

/**
 * The summary of the deliveries `l` of one event, as SQL select-list items: `retrying` if
 * any delivery is, else `pending` if any is, else `failed` if any failed, else `delivered`
 * if any was, else `filtered` (docs/delivery.md#event-status); the attempts of all; and the soonest
 * due time (a `hook listen` destination's pending delivery is due whenever a listener
 * connects: not a time to show).
 */
export const EVENT_SUMMARY_COLUMNS = `
  case when bool_or(l.status = 'retrying') then 'retrying' when bool_or(l.status = 'pending') then 'pending'
       when bool_or(l.status = 'failed') then 'failed' when bool_or(l.status = 'delivered') then 'delivered'
       else 'filtered' end as status,
  coalesce(sum(l.attempt_count), 0)::int as attempt_count,
  min(l.next_attempt_at) filter (where l.status <> 'pending' or l.next_trigger = 'replay'
                                    or exists (select 1 from destination d where d.id = l.destination_id and d.type = 'url')) as next_attempt_at`;

export interface EventSummary {
  status: EventStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
}

/** An event as lists show it: the stored request (body only when asked for) with its summary. */
export interface ListedEvent extends EventSummary, Omit<ReceivedEvent, 'body'> {
  body?: Buffer;
}

export interface EventListFilter {
  accountId: string;
  /** Only these events. */
  ids?: readonly string[];
  endpointIds?: readonly string[];
  excludeEndpointIds?: readonly string[];
  status?: EventStatus;
  type?: string;
  /** Keyset: only ids before this one (newest first). */
  beforeId?: string;
  limit: number;
  withBody?: boolean;
}

interface ListedRow {
  id: string; account_id: string; endpoint_id: string; type: string | null; method: string; path: string; query: string;
  headers: Record<string, string>; content_type: string | null; size: number; received_at: string | Date; body?: Buffer;
  status: EventStatus; attempt_count: number; next_attempt_at: string | Date | null;
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
    headers: row.headers, contentType: row.content_type, size: row.size, receivedAt: new Date(row.received_at),
    status: row.status, attemptCount: row.attempt_count, nextAttemptAt: row.next_attempt_at === null ? null : new Date(row.next_attempt_at),
    ...(row.body ? { body: row.body } : {}),
  };
}

/**
 * One page of an account's events, newest first, with their summaries. The account's
 * events are walked in event_account_idx order and each one's deliveries found by
 * primary key; a status filter is applied to the summary as the walk goes.
 */
export async function listEvents(em: EntityManager, filter: EventListFilter): Promise<ListedEvent[]> {
  const rows = await em.execute<ListedRow[]>(`
    select e.id, e.account_id, e.endpoint_id, e.type, e.method, e.path, e.query, e.headers, e.content_type, e.size, e.received_at,
           ${filter.withBody ? 'e.body,' : ''} s.status, s.attempt_count, s.next_attempt_at
    from event e
    cross join lateral (select ${EVENT_SUMMARY_COLUMNS} from delivery l where l.event_id = e.id) s
    where e.account_id = ?
      and (?::text[] is null or e.id = any(?::text[]))
      and (?::text[] is null or e.endpoint_id = any(?::text[]))
      and (?::text[] is null or e.endpoint_id <> all(?::text[]))
      and (?::text is null or e.type = ?)
      and (?::text is null or e.id < ?)
      and (?::text is null or s.status = ?)
    order by e.account_id desc, e.id desc
    limit ?`,
  [
    filter.accountId,
    idArray(filter.ids), idArray(filter.ids),
    idArray(filter.endpointIds), idArray(filter.endpointIds),
    idArray(filter.excludeEndpointIds?.length ? filter.excludeEndpointIds : undefined), idArray(filter.excludeEndpointIds?.length ? filter.excludeEndpointIds : undefined),
    filter.type ?? null, filter.type ?? null,
    filter.beforeId ?? null, filter.beforeId ?? null,
    filter.status ?? null, filter.status ?? null,
    filter.limit,
  ]);
  return rows.map(toListed);
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
