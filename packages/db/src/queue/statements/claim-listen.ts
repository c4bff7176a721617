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
import { DELIVERY_OPEN, DESTINATION_OPEN, leaseDue, oldestFirst, type ClaimedRow } from './claimed-columns.ts';

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
}

const CLAIM_LISTEN: NamedStatement = {
  movesDeliveries: true,
  name: 'hook_claim_listen',
  text: `
    with due as materialized (
      select l.event_id, l.destination_id from delivery l
      where l.destination_id = $1 and l.account_id = $7 and l.next_attempt_at <= now() and l.event_id >= $2
        and ${DELIVERY_OPEN}
        and (l.lease_id is null or l.locked_until < now())
        and ($6::text[] is null or exists (select 1 from event t where t.id = l.event_id and t.account_id = $7 and t.type = any($6::text[])))
        and exists (select 1 from destination d join endpoint p on p.id = d.endpoint_id and p.account_id = $7 where d.id = $1 and d.account_id = $7 and ${DESTINATION_OPEN})
      order by l.destination_id, l.next_attempt_at, l.event_id
      limit $3
      for update of l skip locked
    )${leaseDue({ token: '$5', leaseMs: '$4' }, ' and l.account_id = $7 and e.account_id = $7 and d.account_id = $7 and p.account_id = $7')}`,
};

/** Claims due deliveries of one `cli` destination for a listen session (see above), oldest first. */
export async function claimForListener(orm: Orm, options: ListenClaimOptions): Promise<ClaimedDelivery[]> {
  const rows = await runStatement<ClaimedRow>(orm, CLAIM_LISTEN, [options.destinationId, options.fromEventId, options.limit, options.leaseMs, randomToken(9), options.eventTypes ?? null, options.accountId]);
  return oldestFirst(orm, rows);
}
