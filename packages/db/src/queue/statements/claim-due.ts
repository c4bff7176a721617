/**
 * The workers' claim: due deliveries to URL and queue destinations (all but `cli`).
 *
 * One statement: for each open URL destination (DESTINATION_OPEN) with spare
 * in-flight capacity, its oldest due deliveries (an index probe each, so a slow
 * destination's backlog is never walked and cannot hide anyone else's); of those, the
 * oldest overall; lock them with FOR UPDATE SKIP LOCKED (so concurrent claimers never
 * take the same delivery) and stamp each with a lease: a token and an expiry. Paused or
 * disabled destinations' deliveries wait, in arrival order, until they are active again.
 *
 * A destination's capacity is its own `max_in_flight`, never more than the relay's
 * per-destination share (so one slow destination cannot take every slot), less its live
 * leases (counted once, in delivery_leased_idx order, no further than that capacity).
 * A destination with a `rate_per_second` also gets no more than what is left of it in
 * the current one-second window, kept on the destination row: those rows are locked
 * (SKIP LOCKED: a claim that finds one taken leaves it to the claimer that holds it)
 * and their window moved on in the same statement, so concurrent claimers never exceed
 * the rate together. Destinations without a rate take no lock.
 *
 * Every step must be an index probe that stops early: the live leases in
 * delivery_leased_idx, each destination's oldest due deliveries in an ordered walk of
 * delivery_due_idx, each candidate by primary key. Planned from statistics older than
 * the backlog, PostgreSQL would rather bitmap-scan and sort a destination's whole
 * backlog, or walk a whole index, on every claim; the queue's connections plan without
 * those scans (QUEUE_SESSION_SETTINGS, executor.ts).
 */
import { randomToken } from '@hook/core';
import type { Orm } from '../../orm.ts';
import { runStatement, type NamedStatement } from '../executor.ts';
import type { ClaimedDelivery } from '../types.ts';
import { DELIVERY_OPEN, deliveryOpen, DESTINATION_OPEN, LEASE_FREE, leaseDue, oldestFirst, type ClaimedRow } from './claimed-columns.ts';

export interface ClaimOptions {
  /** Most deliveries to claim. */
  limit: number;
  /** How long the claim holds; a worker that dies loses its claims when this runs out. */
  leaseMs: number;
  /** Most deliveries in flight to one destination across all workers. */
  perDestinationLimit: number;
}

/**
 * An ordered destination's delivery (one with a key, ordering.ts) is taken only in its
 * turn: no delivery before it in its key (a lower ordering_seq) is open, and no other event holds the key (gave up
 * on a destination that blocks). Two index probes, for keyed deliveries only.
 */
const ORDERED_TURN = `
          and (l.ordering_key is null or (
            not exists (select 1 from delivery o where o.destination_id = l.destination_id and o.ordering_key = l.ordering_key
                          and o.ordering_seq < l.ordering_seq and ${deliveryOpen('o')})
            and not exists (select 1 from ordering_block k where k.destination_id = l.destination_id and k.ordering_key = l.ordering_key
                              and k.event_id <> l.event_id)))`;

/** The statement ($1 limit, $2 lease ms, $3 per-destination share, $4 lease token), exported for the test that checks its plan. */
export const CLAIM_DUE: NamedStatement = {
  movesDeliveries: true,
  name: 'hook_claim_due',
  text: `
    with rated as materialized (
      -- destinations with a rate: what is left of the current window (locked, see above)
      select d.id, d.rate_per_second - case when d.rate_window_start > now() - interval '1 second' then d.rate_window_count else 0 end as left_now
      from destination d
      where d.rate_per_second is not null and d.status = 'active' and d.type <> 'cli' and d.deleted_at is null
      for update of d skip locked
    ),
    open_destinations as materialized (
      select d.id, least(c.capacity - (select count(*) from (
                                         select 1 from delivery l
                                         where l.destination_id = d.id and l.lease_id is not null and l.locked_until >= now() and ${DELIVERY_OPEN}
                                         order by l.destination_id, l.locked_until
                                         limit c.capacity) as live),
                         case when d.rate_per_second is null then $3::int else coalesce((select r.left_now from rated r where r.id = d.id), 0) end) as spare
      from destination d
      join endpoint p on p.id = d.endpoint_id
      cross join lateral (select least($3::int, coalesce(d.max_in_flight, $3::int)) as capacity) c
      where d.type <> 'cli' and ${DESTINATION_OPEN}
    ),
    candidates as (
      -- each destination's oldest due deliveries, up to its spare capacity (an ORDER BY …
      -- LIMIT that matches delivery_due_idx, so the plan stops early even before the
      -- table has statistics), then the oldest of all
      select x.event_id, x.destination_id, x.next_attempt_at
      from open_destinations o
      cross join lateral (
        select l.event_id, l.destination_id, l.next_attempt_at
        from delivery l
        where l.destination_id = o.id and l.next_attempt_at <= now() and ${DELIVERY_OPEN}
          and ${LEASE_FREE}${ORDERED_TURN}
        order by l.destination_id, l.next_attempt_at, l.event_id
        limit greatest(o.spare, 0)
      ) x
      order by x.next_attempt_at, x.event_id
      limit $1
    ),
    due as materialized (
      -- The due conditions again, on the row itself: FOR UPDATE re-checks them against the
      -- newest committed version, so a delivery another claimer took (or finished) after
      -- this statement's snapshot is skipped, not claimed twice. One primary-key lookup
      -- per candidate (the due time goes through coalesce so that delivery_due_idx does
      -- not qualify).
      select x.event_id, x.destination_id from candidates c
      cross join lateral (
        select l.event_id, l.destination_id from delivery l
        where l.event_id = c.event_id and l.destination_id = c.destination_id
          and coalesce(l.next_attempt_at, 'infinity') <= now() and ${DELIVERY_OPEN}
          and ${LEASE_FREE}
        for update of l skip locked
      ) x
    ),
    rate_counted as (
      update destination d
      set rate_window_count = case when d.rate_window_start > now() - interval '1 second' then d.rate_window_count else 0 end + c.n,
          rate_window_start = case when d.rate_window_start > now() - interval '1 second' then d.rate_window_start else now() end
      from (select destination_id, count(*)::int as n from due group by destination_id) c, rated r
      where d.id = c.destination_id and r.id = d.id
    )${leaseDue({ token: '$4', leaseMs: '$2' })}`,
};

/** Claims due URL deliveries (see above), oldest first. */
export async function claimDue(orm: Orm, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  const rows = await runStatement<ClaimedRow>(orm, CLAIM_DUE, [options.limit, options.leaseMs, options.perDestinationLimit, randomToken(9)]);
  return oldestFirst(orm, rows);
}
