/**
 * Replays: a new attempt (trigger `replay`) for deliveries of any destination, URL or
 * `cli`, whatever their status (a replay is an explicit request; a paused destination's
 * too). A delivery whose attempt is running right now (a live lease) is not queued
 * again: that attempt's result would clear the request.
 *
 * A replayed delivery is set `layout = 1`: one stored before `delivery` was partitioned
 * moves from delivery_r0 to the queue, the only partition the claims read (migration 021).
 *
 * Every table of both statements is filtered by the account (`account_id`), in every
 * CTE, though ids alone would find the same rows: so each statement stays routable to one
 * account's shard on a PostgreSQL distributed by account (docs/scaling.md).
 */
import { firstIdAt, randomToken, type EventStatus } from '@hook/core';
import type { Orm } from '../../orm.ts';
import { runStatement } from '../executor.ts';
import { DUE_CHANNEL, type ClaimedDelivery } from '../types.ts';
import { CLAIMED_COLUMNS, LEASE_FREE, toClaimed, type ClaimedRow } from './claimed-columns.ts';

/** What replaying one of an event's deliveries came to. */
export type ReplayOutcome =
  /** A delivery to a URL or a broker (a queue destination), claimed for an immediate attempt: the caller makes it. */
  | { kind: 'claimed'; destinationId: string; delivery: ClaimedDelivery }
  /** A `cli` delivery, due now for the next listener's claim. */
  | { kind: 'queued'; destinationId: string }
  /** An attempt of it is running right now. */
  | { kind: 'in_flight'; destinationId: string }
  /** Its destination (or endpoint) was deleted. */
  | { kind: 'deleted'; destinationId: string };

const REPLAY_ONE = {
  name: 'hook_replay_one',
  text: `
    with target as materialized (
      select l.event_id, l.destination_id, d.type, d.deleted_at is null and p.deleted_at is null as live,
             ${LEASE_FREE} as free
      from delivery l join destination d on d.id = l.destination_id and d.account_id = $2 join endpoint p on p.id = l.endpoint_id and p.account_id = $2
      where l.event_id = $1 and l.account_id = $2 and ($3::text is null or l.destination_id = $3)
      for update of l
    ),
    claimed as (
      update delivery l
      set lease_id = $5 || '.' || l.event_id || '.' || l.destination_id,
          locked_until = now() + make_interval(secs => $4::double precision / 1000), next_trigger = 'replay', layout = 1
      from target t, event e, destination d, endpoint p
      where l.event_id = t.event_id and l.destination_id = t.destination_id and t.live and t.free and t.type <> 'cli'
        and e.id = l.event_id and d.id = l.destination_id and p.id = l.endpoint_id
        and l.account_id = $2 and e.account_id = $2 and d.account_id = $2 and p.account_id = $2
      returning ${CLAIMED_COLUMNS}
    ),
    queued as (
      update delivery l set next_trigger = 'replay', next_attempt_at = now(), layout = 1
      from target t
      where l.event_id = t.event_id and l.destination_id = t.destination_id and t.live and t.free and t.type = 'cli' and l.account_id = $2
      returning l.event_id, l.destination_id
    )
    -- one row per delivery asked for, with what came of it; a claimed one's columns (null for the others)
    select x.outcome, t.destination_id as replayed_destination_id, c.*
    from target t
    left join claimed c on c.event_id = t.event_id and c.destination_id = t.destination_id
    cross join lateral (
      select case when c.event_id is not null then 'claimed'
                  when exists (select 1 from queued q where q.event_id = t.event_id and q.destination_id = t.destination_id) then 'queued'
                  when not t.live then 'deleted'
                  when not t.free then 'in_flight' end as outcome
    ) x
    where x.outcome is not null`,
};

/**
 * Replays one event's deliveries, or only its delivery to `destinationId`: claims the
 * URL and queue ones (every type the workers deliver, all but `cli`) for an attempt the
 * caller makes now, queues the `cli` ones for the next listener. Returns one outcome per
 * delivery (none: no such event, or no such delivery).
 */
export async function replayEvent(orm: Orm, options: { eventId: string; accountId: string; destinationId?: string | undefined; leaseMs: number }): Promise<ReplayOutcome[]> {
  const rows = await runStatement<ClaimedRow & { outcome: ReplayOutcome['kind']; replayed_destination_id: string }>(orm, REPLAY_ONE,
    [options.eventId, options.accountId, options.destinationId ?? null, options.leaseMs, randomToken(9)]);
  return rows
    .map((row): ReplayOutcome => (row.outcome === 'claimed'
      ? { kind: 'claimed', destinationId: row.replayed_destination_id, delivery: toClaimed(orm, row) }
      : { kind: row.outcome, destinationId: row.replayed_destination_id }))
    .sort((a, b) => (a.destinationId < b.destinationId ? -1 : 1));
}

export interface ReplayFilter {
  accountId: string;
  endpointId?: string | undefined;
  destinationId?: string | undefined;
  /** The deliveries' statuses (default in the route: failed and retrying). */
  status?: readonly EventStatus[] | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  /** Most deliveries one request replays. */
  max: number;
  /** Only the events this issue covers (docs/issues.md#retry). */
  issueId?: string | undefined;
}

const REPLAY_MANY = {
  name: 'hook_replay_many',
  text: `
    with picked as (
      select l.event_id, l.destination_id, d.type
      from event e
      join delivery l on l.event_id = e.id and l.account_id = $1
      join destination d on d.id = l.destination_id and d.account_id = $1
      join endpoint p on p.id = l.endpoint_id and p.account_id = $1
      where e.account_id = $1 and ($5::text is null or e.id >= $5) and ($6::text is null or e.id < $6)
        and d.deleted_at is null and p.deleted_at is null
        and p.kind = 'user' -- account notifications are replayed one by one (docs/notifications.md)
        and ${LEASE_FREE} -- one being delivered now is not queued again
        and ($2::text is null or e.endpoint_id = $2)
        and ($3::text is null or l.destination_id = $3)
        and ($4::text[] is null or l.status = any($4))
        and ($9::text is null or exists (select 1 from issue_event ie where ie.issue_id = $9 and ie.event_id = e.id and ie.account_id = $1))
      order by e.id
      limit $7
    ),
    queued as (
      update delivery l set next_trigger = 'replay', next_attempt_at = now(), layout = 1
      from picked where l.event_id = picked.event_id and l.destination_id = picked.destination_id and l.account_id = $1
      returning l.event_id, picked.type
    )
    select count(distinct event_id)::int as events, count(*)::int as deliveries,
           count(*) filter (where type = 'cli')::int as to_listeners, pg_notify($8, '')
    from queued`,
};

/**
 * Queues many deliveries for one attempt each (trigger replay), oldest event first, URL
 * and `cli` alike, and wakes the workers. Returns how many events and deliveries, and
 * how many of those wait for a listener.
 */
export async function replayMany(orm: Orm, filter: ReplayFilter): Promise<{ events: number; deliveries: number; toListeners: number }> {
  const [row] = await runStatement<{ events: number; deliveries: number; to_listeners: number }>(orm, REPLAY_MANY, [
    filter.accountId, filter.endpointId ?? null, filter.destinationId ?? null, filter.status ?? null,
    filter.since ? firstIdAt('event', filter.since.getTime()) : null, filter.until ? firstIdAt('event', filter.until.getTime()) : null,
    filter.max, DUE_CHANNEL, filter.issueId ?? null,
  ]);
  return { events: row?.events ?? 0, deliveries: row?.deliveries ?? 0, toListeners: row?.to_listeners ?? 0 };
}
