/**
 * Gives a claimed delivery back untried: no attempt is counted. Used when a worker shuts
 * down before sending it, when a listener disconnects before answering (the next
 * listener gets it), and when its transformation found no free thread in time (due
 * again a little later, `dueAt`, so its lease cannot run out while it waits). The account
 * filter, implied by the key, keeps it routable to one account's shard (docs/scaling.md).
 */
import type { Orm } from '../../orm.ts';
import { runStatement } from '../executor.ts';
import type { ClaimedDelivery } from '../types.ts';
import { DELIVERY_OPEN } from './claimed-columns.ts';

const RELEASE = {
  movesDeliveries: true,
  name: 'hook_release_lease',
  text: `update delivery l set lease_id = null, locked_until = null, next_attempt_at = coalesce($4, l.next_attempt_at)
         where l.event_id = $1 and l.destination_id = $2 and l.lease_id = $3 and l.account_id = $5 and ${DELIVERY_OPEN}`,
};

export async function releaseLease(orm: Orm, delivery: Pick<ClaimedDelivery, 'id' | 'destinationId' | 'leaseId' | 'accountId'>, dueAt: Date | null = null): Promise<void> {
  await runStatement(orm, RELEASE, [delivery.id, delivery.destinationId, delivery.leaseId, dueAt, delivery.accountId]);
}
