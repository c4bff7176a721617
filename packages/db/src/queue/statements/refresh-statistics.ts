/**
 * Refreshes the planner's statistics of the queue (delivery_open: the partition of open
 * deliveries, migration 021; the history's leaves are analysed by autovacuum). The claim statement's good plan (an
 * ordered index probe per destination) depends on them; a fresh or fast-growing table,
 * or a server with autovacuum off, would otherwise be planned as if nearly empty and
 * read whole backlogs per claim.
 *
 * A table without a live row is left alone (returns false). Analysed then, a table
 * emptied by retention while its pages are still there would be taken for empty however
 * much it refilled until the next refresh, and with no row to go by the planner may
 * then walk a whole index to find one delivery.
 */
import type { Orm } from '../../orm.ts';
import { runStatement } from '../executor.ts';

const HAS_ROWS = { name: 'hook_queue_has_rows', text: 'select exists (select 1 from delivery_open) as has_rows' };

export async function refreshQueueStatistics(orm: Orm): Promise<boolean> {
  const [table] = await runStatement<{ has_rows: boolean }>(orm, HAS_ROWS, []);
  if (!table?.has_rows) return false;
  await orm.em.getConnection().execute('analyze delivery_open');
  return true;
}
