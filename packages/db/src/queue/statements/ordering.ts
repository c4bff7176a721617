/**
 * Ordered delivery (docs/delivery.md#ordered-delivery). Each delivery to an ordered
 * destination has an ordering key (`delivery.ordering_key`, read from its event at
 * ingest) and its place in the key (`ordering_seq`): numbered by ingest's statement under
 * the key's row in `ordering_key_seq`, which it holds until it commits, so the numbers of
 * a key follow the order its events were committed in, across relay processes, and no
 * smaller number can commit after a larger one was seen. Within a key, one delivery at a
 * time is open for attempts, the lowest: the others are stored with no due time
 * (insert-events.ts), so claims never walk past them, and the workers' claim takes a
 * keyed delivery only while no lower one of its key is open (claim-due.ts: the guard
 * that keeps the order when two ingests stored the same key's events at once and both
 * thought themselves first).
 *
 * When a keyed delivery is done (delivered, filtered, or given up on a destination that
 * skips), the next of its key is made due here, right after its result was recorded. One
 * that gave up on a destination that blocks holds its key (`ordering_block`) until a
 * person replays it (it goes again in its place; delivered, it frees the key) or
 * unblocks the key. A relay that died between recording a result and this step, or two
 * ingests that raced, leave a key with no due delivery: the sweep (sweepOrdering, every
 * few seconds in each relay) finds those and makes their head due, and frees keys whose
 * blocking event was delivered since.
 */
import type { Orm } from '../../orm.ts';
import { runStatement, type NamedStatement } from '../executor.ts';
import { DUE_CHANNEL, type ClaimedDelivery } from '../types.ts';
import { DELIVERY_OPEN, deliveryOpen, DESTINATION_OPEN, LEASE_FREE, leaseDue, toClaimed, type ClaimedRow } from './claimed-columns.ts';

const BLOCK: NamedStatement = {
  name: 'hook_ordering_block',
  text: `
    insert into ordering_block (destination_id, ordering_key, account_id, event_id)
    values ($1, $2, $3, $4)
    on conflict (destination_id, ordering_key) do nothing`,
};

/** What became of a keyed delivery's attempt, for its key. */
export type OrderedOutcome =
  /** Delivered, filtered, or given up on a destination that skips: the next of its key goes. */
  | 'done'
  /** Given up on a destination that blocks: its key waits for a person. */
  | 'blocked'
  /** Still open (retrying), or a replay that failed again: nothing changes. */
  | 'open';

/**
 * Moves a key on after one of its deliveries' results was recorded (see above): given up
 * on a destination that blocks, the key is held; done, its next delivery is made due, or
 * taken at once by the caller (`take`: a worker with a slot free, worker.ts) and returned
 * for it to start. One statement either way (NEXT_IN_KEY).
 */
export async function afterOrderedResult(
  orm: Orm,
  delivery: { id: string; destinationId: string; accountId: string; orderingKey: string },
  outcome: OrderedOutcome,
  take?: { token: string; ms: number },
): Promise<ClaimedDelivery | null> {
  if (outcome === 'open') return null;
  if (outcome === 'blocked') {
    await runStatement(orm, BLOCK, [delivery.destinationId, delivery.orderingKey, delivery.accountId, delivery.id]);
    return null;
  }
  return nextInKey(orm, delivery.destinationId, delivery.orderingKey, delivery.id, take);
}

/**
 * The next delivery of (destination $1, key $2), after event $5 of the key was done (its
 * hold on the key, if it had one, goes: a replay delivered it): the key's lowest open
 * delivery, unless another event holds the key or someone holds the row (FOR UPDATE SKIP
 * LOCKED). With $6 (the caller has a slot), it is leased to the caller ($3 the lease
 * token, $4 its ms) and returned, if it is due or waits with no due time, nobody holds
 * its lease, and its destination takes deliveries without a rate limit (a rated one goes
 * through the claim, which keeps the rate): a key's events then follow each other with
 * no notification and no claim between them. Otherwise, if it waits with no due time, it
 * is made due now and the workers are woken ($7). The two updates take disjoint rows.
 */
const NEXT_IN_KEY: NamedStatement = {
  movesDeliveries: true,
  name: 'hook_ordering_next_in_key',
  text: `
    with freed as (
      delete from ordering_block where destination_id = $1 and ordering_key = $2 and event_id = $5
    ),
    head as (
      select o.event_id, o.destination_id from delivery o
      where o.destination_id = $1 and o.ordering_key = $2 and ${deliveryOpen('o')}
      order by o.destination_id, o.ordering_key, o.ordering_seq
      limit 1
    ),
    next as materialized (
      select x.* from head h
      cross join lateral (
        select l.event_id, l.destination_id, l.next_attempt_at is null as parked,
               $6::boolean and (l.next_attempt_at is null or l.next_attempt_at <= now()) and ${LEASE_FREE}
                 and exists (select 1 from destination d join endpoint p on p.id = d.endpoint_id
                             where d.id = l.destination_id and ${DESTINATION_OPEN} and d.rate_per_second is null) as taken
        from delivery l
        where l.event_id = h.event_id and l.destination_id = h.destination_id and ${DELIVERY_OPEN}
          and not exists (select 1 from ordering_block k where k.destination_id = $1 and k.ordering_key = $2 and k.event_id <> l.event_id and k.event_id <> $5)
        for update of l skip locked
      ) x
    ),
    promoted as (
      update delivery l set next_attempt_at = now()
      from next n
      where l.event_id = n.event_id and l.destination_id = n.destination_id and ${DELIVERY_OPEN} and n.parked and not n.taken
      returning pg_notify($7, '')
    ),
    due as (select event_id, destination_id from next where taken)${leaseDue({ token: '$3', leaseMs: '$4' }, '', '', ', next_attempt_at = coalesce(l.next_attempt_at, now())')}`,
};

async function nextInKey(orm: Orm, destinationId: string, key: string, doneId: string, take?: { token: string; ms: number }): Promise<ClaimedDelivery | null> {
  const [row] = await runStatement<ClaimedRow>(orm, NEXT_IN_KEY, [destinationId, key, take?.token ?? '', take?.ms ?? 0, doneId, take !== undefined, DUE_CHANNEL]);
  return row ? toClaimed(orm, row) : null;
}

/** A key of an ordered destination held by an event that gave up. */
export interface BlockedKey {
  key: string;
  eventId: string;
  blockedAt: Date;
  /** Deliveries of the key waiting behind it. */
  waiting: number;
}

/** The destination's blocked keys, oldest block first (at most `limit`). */
export async function blockedKeys(orm: Orm, destinationId: string, limit = 100): Promise<BlockedKey[]> {
  const rows = await runStatement<{ ordering_key: string; event_id: string; blocked_at: string | Date; waiting: number }>(orm, {
    name: 'hook_ordering_blocked_keys',
    text: `
      select k.ordering_key, k.event_id, k.blocked_at,
             (select count(*)::int from delivery o where o.destination_id = k.destination_id and o.ordering_key = k.ordering_key and ${deliveryOpen('o')}) as waiting
      from ordering_block k where k.destination_id = $1
      order by k.blocked_at, k.ordering_key limit $2`,
  }, [destinationId, limit]);
  return rows.map((row) => ({ key: row.ordering_key, eventId: row.event_id, blockedAt: new Date(row.blocked_at), waiting: row.waiting }));
}

/** Frees a blocked key: the event that held it stays failed, and the next of its key goes. Returns whether the key was blocked. */
export async function unblockKey(orm: Orm, destinationId: string, key: string): Promise<boolean> {
  const removed = await runStatement<{ event_id: string }>(orm, {
    name: 'hook_ordering_unblock',
    text: `delete from ordering_block where destination_id = $1 and ordering_key = $2 returning event_id`,
  }, [destinationId, key]);
  await nextInKey(orm, destinationId, key, '');
  return removed.length > 0;
}

/**
 * A destination's ordering was turned off, or changed: its waiting deliveries lose their
 * keys and are due now, and its blocked keys are freed. (With ordering on again, events
 * from then on are keyed.)
 */
export async function releaseOrdering(orm: Orm, destinationId: string, accountId: string): Promise<void> {
  await runStatement(orm, {
    name: 'hook_ordering_release',
    text: `
      with freed as (delete from ordering_block where destination_id = $1 and account_id = $2)
      update delivery l set ordering_key = null, next_attempt_at = coalesce(l.next_attempt_at, now())
      where l.destination_id = $1 and l.account_id = $2 and l.ordering_key is not null and ${DELIVERY_OPEN}`,
  }, [destinationId, accountId]);
}

/**
 * Frees blocked keys whose event was delivered (or whose destination is gone or no
 * longer blocks), then makes due each key's head that waits with no due time and is not
 * held (see above). Returns how many heads it moved.
 */
export async function sweepOrdering(orm: Orm): Promise<number> {
  await runStatement(orm, {
    name: 'hook_ordering_sweep_blocks',
    text: `
      delete from ordering_block k
      where not exists (select 1 from destination d where d.id = k.destination_id and d.deleted_at is null
                          and d.ordering is not null and d.ordering ->> 'on_give_up' = 'block')
         or exists (select 1 from delivery l where l.event_id = k.event_id and l.destination_id = k.destination_id and l.status in ('delivered', 'filtered'))`,
  }, []);
  const [row] = await runStatement<{ n: number }>(orm, {
    name: 'hook_ordering_sweep_heads',
    text: `
      with heads as (
        select distinct on (l.destination_id, l.ordering_key) l.event_id, l.destination_id, l.ordering_key, l.next_attempt_at
        from delivery l
        where l.ordering_key is not null and ${DELIVERY_OPEN}
        order by l.destination_id, l.ordering_key, l.ordering_seq
      ),
      moved as (
        update delivery l set next_attempt_at = now()
        from heads h
        where h.next_attempt_at is null and l.event_id = h.event_id and l.destination_id = h.destination_id and ${DELIVERY_OPEN}
          and l.next_attempt_at is null
          and not exists (select 1 from ordering_block k where k.destination_id = h.destination_id and k.ordering_key = h.ordering_key and k.event_id <> h.event_id)
        returning 1
      )
      select count(*)::int as n, case when count(*) > 0 then pg_notify($1, '') end from moved`,
  }, [DUE_CHANNEL]);
  return row?.n ?? 0;
}
