/**
 * Refreshes the planner's statistics of the queue. The claim statement's good plan (an
 * ordered index probe per destination) depends on them; a fresh or fast-growing table,
 * or a server with autovacuum off, would otherwise be planned as if nearly empty and
 * read whole backlogs per claim.
 *
 * `delivery` is partitioned (partitions.ts): what changes is class 0 (the history from
 * before partitioning) and each class's recent partitions, where new deliveries go; older
 * partitions only lose rows to completed deliveries and are left to autovacuum. Analysing
 * the parent would sample and analyse every partition of the whole history every time.
 *
 * A partition without a live row is left alone (and if none has one, returns false).
 * Analysed then, a table emptied by retention while its pages are still there would be
 * taken for empty however much it refilled until the next refresh, and with no row to go
 * by the planner may then walk a whole index to find one delivery.
 */
import type { Orm } from '../../orm.ts';
import { DAY_MS, periodDays } from '../../partitions.ts';
import { runStatement } from '../executor.ts';

const PARTITIONS = {
  name: 'hook_queue_partitions',
  text: `select c.relname from pg_partition_tree('delivery') t join pg_class c on c.oid = t.relid where t.isleaf`,
};

const LEAF_NAME = /^delivery_r(\d+)(?:_(\d{4})(\d{2})(\d{2}))?$/;

/** The partitions new deliveries go to at `nowMs`: class 0, and each class's partitions from the previous period on. */
export function recentDeliveryPartitions(names: readonly string[], nowMs: number): string[] {
  return names.filter((name) => {
    const match = LEAF_NAME.exec(name);
    if (!match) return false;
    if (match[2] === undefined) return true; // class 0: one table
    const period = periodDays(Number(match[1])) * DAY_MS;
    const startMs = Date.UTC(Number(match[2]), Number(match[3]) - 1, Number(match[4]));
    return startMs + 2 * period > nowMs;
  });
}

export async function refreshQueueStatistics(orm: Orm, nowMs: number = Date.now()): Promise<boolean> {
  const names = (await runStatement<{ relname: string }>(orm, PARTITIONS, [])).map((row) => row.relname);
  const connection = orm.em.getConnection();
  let analysed = false;
  for (const name of recentDeliveryPartitions(names, nowMs)) {
    const [table] = await connection.execute<{ has_rows: boolean }[]>(`select exists (select 1 from ${name}) as has_rows`);
    if (!table?.has_rows) continue;
    await connection.execute(`analyze ${name}`);
    analysed = true;
  }
  return analysed;
}
