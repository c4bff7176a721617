/**
 * A `hook listen` session's claim: due deliveries to the one `cli` destination it
 * serves, oldest due first, under the same leases as workers' claims (leaseDue, the last
 * step of both), through the same claimer (apps/relay/src/delivery/claimer.ts). Listeners are
 * competing consumers of their destination's queue: a delivery one session claimed is
 * another's only after that session gives it back (its listener disconnected) or its
 * lease runs out. (Every session still shows every event: see listen-session.ts.)
 *
 * `$2` (the first event id a session with --skip-missed takes) leaves older deliveries
 * where they are, for the next session that wants them: event ids begin with their
 * receive time, so this is a bound on the index walk, not a join to the event.
 *
 * `$6` (a session's `--events` types, or null for all) leaves deliveries of other events'
 * types where they are, for a listener that takes them: each candidate in the walk is
 * checked against its event by primary key. Deliveries of other types that stay due are
 * walked past on every claim; a listener that filters is one developer's session, and its
 * backlog is what that developer left waiting.
 *
 * As the workers' claim, only while the destination is open (DESTINATION_OPEN): a paused
 * destination or endpoint holds its deliveries for `hook listen` too. That check does not
 * depend on the delivery, so it runs once per claim, before the walk.
 *
 * As the workers' claim (claim-due.ts): an ordered walk of delivery_due_idx that stops at
 * the limit, whatever the statistics say (QUEUE_SESSION_SETTINGS, executor.ts).
 *
 * Every table, in every subquery, is filtered by the destination's account (`$7`), which
 * the destination id alone implies: so the claim stays routable to one account's shard on
 * a PostgreSQL distributed by account (docs/scaling.md).
 */
import { randomToken } from '@hook/core';
import type { Orm } from '../../orm.ts';
import { runStatement, type NamedStatement } from '../executor.ts';
import type { ClaimedDelivery } from '../types.ts';
import { DELIVERY_OPEN, DESTINATION_OPEN, LEASE_FREE, leaseDue, oldestFirst, type ClaimedRow } from './claimed-columns.ts';

export interface ListenClaimOptions {
  destinationId: string;
  /** The destination's account. */
  accountId: string;
  /** Deliveries of events received before this id are left alone (--skip-missed); '' takes all. */
  fromEventId: string;
  limit: number;
  leaseMs: number;
  /** Only deliveries of events of these types (the stored type); null or absent takes every type. */
  eventTypes?: readonly string[] | null;
  /**
   * Start the walk after this place (the cursor the session's previous claim returned):
   * what lies before it in the due index is mostly the entries of deliveries finished and
   * moved out of the queue, which every walk from the start would step over again (dead
   * index entries stay until vacuum, and while any transaction may still see them each
   * costs a visit to the table). Absent: from the start (the session's poll does that,
   * for deliveries given back or whose lease ran out).
   */
  after?: ListenClaimCursor | null;
}

/**
 * The statement ($1 destination, $2 first event id, $3 limit, $4 lease ms, $5 lease
 * token, $6 types, $7 account; `after`: $8 and $9, the due time and event id the walk
 * starts after), exported for the test that checks its plan.
 */
function claimListen(after: boolean): NamedStatement {
  return {
  movesDeliveries: true,
  name: after ? 'hook_claim_listen_after' : 'hook_claim_listen',
  text: `
    with due as materialized (
      select l.event_id, l.destination_id from delivery l
      where l.destination_id = $1 and l.account_id = $7 and l.next_attempt_at <= now() and l.event_id >= $2
        ${after ? 'and (l.next_attempt_at, l.event_id) > ($8::timestamptz, $9::text)' : ''}
        and ${DELIVERY_OPEN}
        and ${LEASE_FREE}
        and ($6::text[] is null or exists (select 1 from event t where t.id = l.event_id and t.account_id = $7 and t.type = any($6::text[])))
        and exists (select 1 from destination d join endpoint p on p.id = d.endpoint_id and p.account_id = $7 where d.id = $1 and d.account_id = $7 and ${DESTINATION_OPEN})
      order by l.destination_id, l.next_attempt_at, l.event_id
      limit $3
      for update of l skip locked
    )${leaseDue({ token: '$5', leaseMs: '$4' }, ' and l.account_id = $7 and e.account_id = $7 and d.account_id = $7 and p.account_id = $7', ', l.next_attempt_at::text as due_at, (extract(epoch from l.next_attempt_at) * 1000000)::bigint::text as due_us')}`,
  };
}

export const CLAIM_LISTEN = claimListen(false);
/** CLAIM_LISTEN from a place in the walk (ListenClaimOptions.after). */
export const CLAIM_LISTEN_AFTER = claimListen(true);

/** Where a listen claim's walk of the due index ended: the due time (as PostgreSQL wrote it) and event id of the last delivery it took. */
export interface ListenClaimCursor {
  dueAt: string;
  eventId: string;
}

/** Claims due deliveries of one `cli` destination for a listen session (see above), oldest first, with where the walk ended (null: nothing claimed). */
export async function claimForListener(orm: Orm, options: ListenClaimOptions): Promise<{ deliveries: ClaimedDelivery[]; cursor: ListenClaimCursor | null }> {
  const params = [options.destinationId, options.fromEventId, options.limit, options.leaseMs, randomToken(9), options.eventTypes ?? null, options.accountId];
  const rows = await runStatement<ClaimedRow & { due_at: string; due_us: string }>(orm, options.after ? CLAIM_LISTEN_AFTER : CLAIM_LISTEN, options.after ? [...params, options.after.dueAt, options.after.eventId] : params);
  // The last in the walk's order (due time, then event id); the due time goes back as PostgreSQL wrote it, exact to the microsecond.
  let last: (ClaimedRow & { due_at: string; due_us: string }) | undefined;
  for (const row of rows) {
    const later = !last || BigInt(row.due_us) > BigInt(last.due_us) || (row.due_us === last.due_us && row.event_id > last.event_id);
    if (later) last = row;
  }
  return { deliveries: oldestFirst(orm, rows), cursor: last ? { dueAt: last.due_at, eventId: last.event_id } : null };
}
