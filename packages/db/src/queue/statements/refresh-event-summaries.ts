/**
 * An event with several deliveries (fan-out) gets its status and due time from all of
 * them (docs/delivery.md#event-status), after their results are committed.
 *
 * Why a transaction of two statements: results for one event's deliveries can commit
 * concurrently (different workers, different relays), and one statement's snapshot may
 * miss another's result. Locking the events first, then reading the deliveries in a
 * second statement (READ COMMITTED takes a new snapshot per statement) means the last
 * refresh to take an event's lock reads every result committed before it started, and
 * each result's own refresh starts after its result committed: so the last refresh
 * written is always right.
 */
import type { EventStatus } from '@hook/core';
import type { Orm } from '../../orm.ts';
import { queueExecutor } from '../executor.ts';

const LOCK = { name: 'hook_lock_events', text: 'select id from event where id = any($1::text[]) order by id for update' };

/** The SQL form of summarizeDeliveries (packages/core delivery.ts). */
const SUMMARY = `case when bool_or(l.status = 'retrying') then 'retrying' when bool_or(l.status = 'pending') then 'pending'
                      when bool_or(l.status = 'failed') then 'failed' when bool_or(l.status = 'delivered') then 'delivered'
                      else 'filtered' end`;

const REFRESH = {
  name: 'hook_refresh_event_summaries',
  text: `
    update event e set status = s.status, next_attempt_at = s.next_attempt_at
    from (select l.event_id, ${SUMMARY} as status,
                 -- a listener's pending delivery is due whenever one connects: not a time to show
                 min(l.next_attempt_at) filter (where d.type = 'url' or l.status <> 'pending' or l.next_trigger = 'replay') as next_attempt_at
          from delivery l join destination d on d.id = l.destination_id
          where l.event_id = any($1::text[]) group by l.event_id) s
    where e.id = s.event_id
    returning e.id, e.status`,
};

/** Recomputes the status of events with several deliveries; returns each one's status after. */
export async function refreshEventSummaries(orm: Orm, eventIds: readonly string[]): Promise<Map<string, EventStatus>> {
  if (eventIds.length === 0) return new Map();
  const ids = [...new Set(eventIds)];
  const rows = await queueExecutor(orm).transaction(async (client) => {
    await client.query({ ...LOCK, values: [ids] });
    return (await client.query<{ id: string; status: EventStatus }>({ ...REFRESH, values: [ids] })).rows;
  });
  return new Map(rows.map((row) => [row.id, row.status]));
}
