import { Migration } from '@mikro-orm/migrations';
import { withShortLocks } from './short-locks.ts';

/**
 * The history tables that are partitioned, each with the column its leaves are ranged on.
 * `delivery` (the queue) is not: the delivery claim walks each open destination's due and
 * leased deliveries, one index probe each; partitioned, that became one probe per
 * destination per partition (measured: an empty claim over 100 destinations took 0.16 ms
 * on one table, 25 ms over 78 partitions). Its rows of a dropped partition are deleted by
 * a delete by the partition's event ids (partitions.ts); it gets the class column too.
 */
const HISTORY = [
  {
    table: 'event', rangeKey: 'id',
    // the parent's unique index must hold both partition keys; the legacy table gets a copy built concurrently first
    unique: { name: 'event_id_class_idx', columns: 'id, retention_class' },
    // existing indexes of the legacy table that become the parent's (attached, not rebuilt)
    indexes: [
      { name: 'event_account_idx', definition: '(account_id, id)' },
      { name: 'event_endpoint_idx', definition: '(endpoint_id, id)' },
    ],
  },
  {
    table: 'attempt', rangeKey: 'event_id',
    unique: { name: 'attempt_id_event_class_idx', columns: 'id, event_id, retention_class' },
    indexes: [{ name: 'attempt_event_idx', definition: '(event_id, n)' }],
  },
] as const;

/**
 * History partitioned by retention class and time (docs/retention.md#partitions), made
 * online: no row is copied, and ingest waits only for one short catalog transaction.
 *
 * `event` and `attempt` become partitioned tables, LIST by `retention_class`
 * (the days the account kept events when the event was received; 0 = rows from before
 * this migration, or written without a class), each class RANGE by event id (ids begin
 * with their receive time) in periods of `hook_history_period_days(class)` days, with the
 * same bounds in both tables (`delivery` gets the class column: see HISTORY). Expired history goes by detaching and dropping whole
 * leaves (partitions.ts); class 0 keeps the row-by-row pass until it is empty.
 *
 * Online, in three steps (the migration is not one transaction):
 * 1. the column (a constant default: no rewrite) and a `retention_class = 0` check, in one
 *    ALTER per table under a short lock timeout (withShortLocks), the check validated
 *    without blocking writes, and the unique indexes holding the partition keys built
 *    CONCURRENTLY on the existing tables;
 * 2. one short transaction (withShortLocks, so it never queues ingest behind a long query):
 *    lock the tables, rename each to `<table>_r0`, create the partitioned parent under
 *    the old name with its indexes, attach the old table as class 0 (its check proves the
 *    bound: no scan; its indexes match the parent's and are attached, not rebuilt);
 * 3. the functions the relay uses to make partitions ahead of need, and the partitions of
 *    the classes in use for the current periods.
 * Statements prepared before step 2 are planned again against the new parent (PostgreSQL
 * re-analyses a cached statement when a table it names changes), and a relay of the
 * previous release writes class 0 rows until it is replaced.
 */
export class PartitionedHistory extends Migration {
  override name = '019-partitioned-history';

  override isTransactional(): boolean {
    return false;
  }

  override async up(): Promise<void> {
    // Steps 1 and 2 are skipped when an earlier run got past step 2 (this migration is not one transaction).
    const [state] = await this.execute(`select relkind from pg_class where oid = 'event'::regclass`);
    if (state?.relkind !== 'p') this.swapInParents();
    this.addSql(HISTORY_FUNCTIONS);
    // The classes of today's plans and of every account's own retention, for this period and the next.
    this.addSql(`select hook_ensure_history_partitions(c, now() - interval '1 day', now() + interval '3 days')
                 from (select unnest(array[7, 90, 365]) as c union select retention_days from account where retention_days is not null) classes;`);
  }

  private swapInParents(): void {
    for (const { table, unique } of HISTORY) {
      // an ACCESS EXCLUSIVE lock, if only for a moment: never queued behind a long query (ingest would queue behind it)
      this.addSql(withShortLocks(`
          alter table ${table} add column if not exists retention_class smallint not null default 0,
            drop constraint if exists ${table}_r0_class_check,
            add constraint ${table}_r0_class_check check (retention_class = 0) not valid;`));
      this.addSql(`alter table ${table} validate constraint ${table}_r0_class_check;`);
      this.addSql(`drop index concurrently if exists ${unique.name};`); // an earlier attempt's, possibly invalid
      this.addSql(`create unique index concurrently ${unique.name} on ${table} (${unique.columns});`);
    }
    this.addSql(withShortLocks(`alter table delivery add column if not exists retention_class smallint not null default 0;`));
    this.addSql(swapInPartitionedParents());
  }
}

/**
 * Step 2: one short transaction. It locks the tables before changing any, so it
 * never holds one while a long wait for another holds ingest up.
 */
function swapInPartitionedParents(): string {
  const steps = HISTORY.map(({ table, rangeKey, unique, indexes }) => `
        alter table ${table} rename to ${table}_r0;
        create table ${table} (like ${table}_r0 including defaults including constraints) partition by list (retention_class);
        alter table ${table} drop constraint ${table}_r0_class_check;
        create unique index ${unique.name.replace(/_idx$/, '_key')} on only ${table} (${unique.columns});
        ${indexes.map((index) => `
        alter index ${index.name} rename to ${table}_r0_${index.name.slice(table.length + 1)};
        create index ${index.name} on only ${table} ${index.definition};`).join('')}
        -- attaching the table attaches its indexes that match the parent's (none is rebuilt)
        alter table ${table} attach partition ${table}_r0 for values in (0);
        alter index ${unique.name} rename to ${table}_r0_${unique.name.slice(table.length + 1).replace(/_idx$/, '_key')};
        comment on column ${table}.retention_class is 'Days the account kept events when the event was received; 0: from before partitioning (migration 019). Leaves are ranged on ${rangeKey}.';`).join('');
  return withShortLocks(`
          lock table ${HISTORY.map(({ table }) => table).join(', ')} in access exclusive mode;
          ${steps}
          -- the dedupe key stays unique per leaf (and exact across leaves through ingest's
          -- advisory lock, insert-events.ts); the legacy table keeps its own index
          alter index event_dedupe_key_idx rename to event_r0_dedupe_key_idx;`);
}

/**
 * The SQL the relay (partitions.ts) and this migration share:
 * - hook_history_bound(ms): the smallest event id at `ms` (core's firstIdAt('event', ms));
 * - hook_dedupe_original(endpoint, key, since): ingest's lookup of a key stored meanwhile
 *   in another leaf (insert-events.ts);
 * - hook_history_period_days(class): how many days one leaf of a class spans: a day up to
 *   59 days' retention, then a thirtieth of it (90 → 3, 365 → 12), so a class has about 30
 *   leaves and a leaf is dropped at most one period after its last event expired;
 * - hook_ensure_history_partitions(class, from, to): makes the class and every leaf whose
 *   period meets [from, to] in both tables, under an advisory lock (any number of
 *   processes may call it; each leaf is made once). A leaf is made empty beside its parent
 *   and then ATTACHed, which takes a lock that neither reads nor writes wait for (CREATE
 *   TABLE … PARTITION OF would lock the class against both).
 */
const HISTORY_FUNCTIONS = `
  create or replace function hook_history_bound(ms bigint) returns text
  language sql immutable parallel safe as $$
    select 'evt_' || string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((ms >> (5 * (9 - i))) & 31)::int + 1, 1), '' order by i) || repeat('0', 16)
    from generate_series(0, 9) as i
  $$;

  -- the event of an endpoint holding a dedupe key, among ids from since_id on; volatile, so
  -- that in READ COMMITTED its query sees what committed after the calling statement began
  create or replace function hook_dedupe_original(endpoint text, key text, since_id text) returns text
  language plpgsql volatile as $$
  declare
    found text;
  begin
    select e.id into found from event e where e.endpoint_id = endpoint and e.dedupe_key = key and e.id >= since_id limit 1;
    return found;
  end
  $$;

  -- names the indexes ATTACH made on a class or leaf after the top parent's: event_r7_20261127_account_idx
  create or replace function hook_name_history_indexes(partition text) returns void
  language plpgsql as $$
  declare
    idx record;
  begin
    for idx in
      with recursive up(child, top) as (
        select i.indexrelid, i.indexrelid from pg_index i where i.indrelid = to_regclass(format('%I', partition))
        union all
        select up.child, h.inhparent from up join pg_inherits h on h.inhrelid = up.top
      )
      select c.relname as name, t.relname as top
      from up join pg_class c on c.oid = up.child join pg_class t on t.oid = up.top
      where not exists (select 1 from pg_inherits h where h.inhrelid = up.top) and up.child <> up.top
    loop
      execute format('alter index %I rename to %I', idx.name, partition || '_' || regexp_replace(idx.top, '^(event|delivery|attempt)_', ''));
    end loop;
  end
  $$;

  create or replace function hook_history_period_days(class int) returns int
  language sql immutable parallel safe as $$ select greatest(1, class / 30) $$;

  create or replace function hook_ensure_history_partitions(class int, from_at timestamptz, to_at timestamptz) returns int
  language plpgsql as $$
  declare
    tables text[] := array['event', 'attempt'];
    t text;
    period int := hook_history_period_days(class);
    first_day bigint := floor(extract(epoch from from_at) / 86400)::bigint;
    last_day bigint := floor(extract(epoch from to_at) / 86400)::bigint;
    day bigint;
    leaf text;
    made int := 0;
  begin
    if class <= 0 then raise exception 'retention class % has no partitions of its own', class; end if;
    perform pg_advisory_xact_lock(hashtext('hook_history_partitions'));
    foreach t in array tables loop
      if to_regclass(format('%I', t || '_r' || class)) is null then
        execute format('create table %I (like %I including defaults including constraints) partition by range (%I)',
                       t || '_r' || class, t, case when t = 'event' then 'id' else 'event_id' end);
        execute format('alter table %I attach partition %I for values in (%s)', t, t || '_r' || class, class);
        perform hook_name_history_indexes(t || '_r' || class);
      end if;
    end loop;
    day := first_day - (first_day % period);
    while day <= last_day loop
      foreach t in array tables loop
        leaf := t || '_r' || class || '_' || to_char(to_timestamp(day * 86400) at time zone 'UTC', 'YYYYMMDD');
        if to_regclass(format('%I', leaf)) is null then
          execute format('create table %I (like %I including defaults including constraints)', leaf, t || '_r' || class);
          if t = 'event' then
            execute format('create unique index %I on %I (endpoint_id, dedupe_key) where dedupe_key is not null', leaf || '_dedupe_key_idx', leaf);
          end if;
          execute format('alter table %I attach partition %I for values from (%L) to (%L)', t || '_r' || class, leaf,
                         hook_history_bound(day * 86400000), hook_history_bound((day + period) * 86400000));
          perform hook_name_history_indexes(leaf);
          made := made + 1;
        end if;
      end loop;
      day := day + period;
    end loop;
    return made;
  end
  $$;`;
