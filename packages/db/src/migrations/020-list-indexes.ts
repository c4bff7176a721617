import { Migration } from '@mikro-orm/migrations';
import { withShortLocks } from './short-locks.ts';

/** An index on `event` that a filter of the event list walks (eventListQuery, event-summaries.ts). */
interface ListIndex {
  name: string;
  /** Columns and predicate, as after `on <table>`. */
  definition: string;
}

/**
 * `GET /v1/events?type=`: one type's events of an account in id order, so a type that is
 * rare, or matches nothing, costs a page what a common one does (an index descent) instead
 * of a walk through the account's history. Partial: events without a type, often most of
 * them, are never looked up by type.
 */
const LIST_INDEXES: readonly ListIndex[] = [
  { name: 'event_account_type_idx', definition: '(account_id, type, id) where type is not null' },
];

/**
 * Indexes for the event list's filters (docs/api.md#get-v1events), built without holding
 * ingest up: `event` is partitioned (migration 019), and CREATE INDEX on a partitioned
 * table locks every partition against writes while it builds (seconds to minutes at a
 * few million events). So, per index:
 * 1. on each partitioned table of the tree an index `ON ONLY` it (invalid, and no rows
 *    read: a short lock, taken with a lock timeout and retried, so it never queues ingest
 *    behind a long query);
 * 2. on each leaf the index built CONCURRENTLY (writes go on);
 * 3. each leaf's index attached to its parent's, deepest first; the root's becomes valid
 *    once every partition's is attached.
 * A leaf made meanwhile (partitions.ts) gets the index when it is attached: PostgreSQL
 * makes a partitioned table's indexes on a partition it attaches. The steps are
 * idempotent, and repeated until the root's index is valid. On an unpartitioned `event`
 * the tree is that one table, and step 2 builds the index.
 */
export class ListIndexes extends Migration {
  override name = '020-list-indexes';

  override isTransactional(): boolean {
    return false;
  }

  override async up(): Promise<void> {
    for (const index of LIST_INDEXES) await this.buildOnline('event', index);
  }

  private async buildOnline(table: string, index: ListIndex): Promise<void> {
    const suffix = index.name.slice(`${table}_`.length);
    for (let pass = 1; ; pass++) {
      const tree = await this.execute(`
        select t.relid::regclass::text as rel, t.parentrelid::regclass::text as parent, t.isleaf, t.level
        from pg_partition_tree(?::regclass) t order by t.level`, [table]) as { rel: string; parent: string | null; isleaf: boolean; level: number }[];
      const indexOf = (rel: string) => (rel === table ? index.name : `${rel}_${suffix}`);
      for (const node of tree.filter((row) => !row.isleaf)) {
        await this.execute(withShortLocks(`create index if not exists ${indexOf(node.rel)} on only ${node.rel} ${index.definition}`));
      }
      for (const leaf of tree.filter((row) => row.isleaf)) {
        // A concurrent build that failed leaves an invalid index behind: build it again.
        const [left] = await this.execute('select indisvalid from pg_index where indexrelid = to_regclass(?)', [indexOf(leaf.rel)]) as { indisvalid: boolean }[];
        if (left?.indisvalid === false) await this.execute(`drop index concurrently ${indexOf(leaf.rel)}`);
        await this.execute(`create index concurrently if not exists ${indexOf(leaf.rel)} on ${leaf.rel} ${index.definition}`);
      }
      for (const node of tree.filter((row) => row.parent !== null).sort((a, b) => b.level - a.level)) {
        // Attaching an index already attached to this parent does nothing.
        await this.execute(withShortLocks(`alter index ${indexOf(node.parent!)} attach partition ${indexOf(node.rel)}`));
      }
      const [root] = await this.execute('select indisvalid from pg_index where indexrelid = to_regclass(?)', [index.name]) as { indisvalid: boolean }[];
      if (root?.indisvalid) return;
      if (pass >= 5) throw new Error(`index ${index.name} is still not valid after ${pass} passes: a partition of ${table} lacks it`);
    }
  }
}
