/**
 * Deliveries as a claim returns them, read without claiming: what a relay process needs
 * to show a `hook listen` session a copy of a delivery another process sent (or, for an
 * endpoint without a `cli` destination, a copy of another process's new event). Nothing
 * moves, so it runs on the ORM's pool; rows come back by their primary key, of one
 * account (`$3`, in every join: routable to that account's shard, docs/scaling.md).
 */
import type { Orm } from '../../orm.ts';
import { runStatement, type NamedStatement } from '../executor.ts';
import type { ClaimedDelivery } from '../types.ts';
import { CLAIMED_COLUMNS, oldestFirst, type ClaimedRow } from './claimed-columns.ts';

const READ_DELIVERIES: NamedStatement = {
  name: 'hook_read_deliveries',
  text: `
    select ${CLAIMED_COLUMNS}
    from unnest($1::text[], $2::text[]) as wanted(event_id, destination_id)
    join delivery l on l.event_id = wanted.event_id and l.destination_id = wanted.destination_id and l.account_id = $3
    join event e on e.id = l.event_id and e.account_id = $3
    join destination d on d.id = l.destination_id and d.account_id = $3
    join endpoint p on p.id = l.endpoint_id and p.account_id = $3`,
};

/** The account's (event, destination) deliveries still there, oldest event first. */
export async function readDeliveries(orm: Orm, accountId: string, wanted: readonly { eventId: string; destinationId: string }[]): Promise<ClaimedDelivery[]> {
  if (wanted.length === 0) return [];
  const rows = await runStatement<ClaimedRow>(orm, READ_DELIVERIES, [wanted.map((w) => w.eventId), wanted.map((w) => w.destinationId), accountId]);
  return oldestFirst(orm, rows);
}
