/**
 * Makes a destination's waiting deliveries due now and wakes the workers: when a
 * listener connects (its `cli` destination's retrying deliveries), when a destination
 * is re-enabled or resumed, or its endpoint is. Deliveries in flight are left alone, and
 * so are those waiting for their turn (ordered) or their first time (delayed).
 * The claim's per-destination capacity paces what this releases. The destinations are
 * one account's, and the statement says so (`account_id`), so it stays routable to that
 * account's shard (docs/scaling.md).
 */
import type { Orm } from '../../orm.ts';
import { runStatement } from '../executor.ts';
import { DUE_CHANNEL } from '../types.ts';
import { DELIVERY_OPEN, LEASE_FREE } from './claimed-columns.ts';

const MAKE_DUE = {
  name: 'hook_make_due',
  text: `
    with due as (
      update delivery l set next_attempt_at = now()
      from destination d
      where l.destination_id = any($1::text[]) and l.account_id = $3 and l.status in ('pending', 'retrying') and ${DELIVERY_OPEN}
        and (l.next_attempt_at is null or l.next_attempt_at > now())
        and ${LEASE_FREE}
        and d.id = l.destination_id and d.account_id = $3
        -- an ordered key's later deliveries wait for their turn, and a delayed first attempt for its time
        and not (l.next_attempt_at is null and l.ordering_key is not null)
        and not (l.attempt_count = 0 and d.delay_seconds is not null)
      returning 1
    )
    select count(*)::int as n, pg_notify($2, '') from due`,
};

/** Makes the destinations' (of one account) pending and retrying deliveries due now; returns how many moved. */
export async function makeDestinationsDue(orm: Orm, accountId: string, destinationIds: readonly string[]): Promise<number> {
  if (destinationIds.length === 0) return 0;
  const [row] = await runStatement<{ n: number }>(orm, MAKE_DUE, [destinationIds, DUE_CHANNEL, accountId]);
  return row?.n ?? 0;
}

const WAKE = { name: 'hook_wake_workers', text: `select pg_notify($1, '')` };

/** Wakes idle workers now. */
export async function notifyDue(orm: Orm): Promise<void> {
  await runStatement(orm, WAKE, [DUE_CHANNEL]);
}
