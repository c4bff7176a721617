import { Migration } from '@mikro-orm/migrations';
import { withShortLocks } from './short-locks.ts';

/**
 * `delivery` partitioned too (docs/retention.md#partitions), made online like 019: no row
 * copied, ingest waiting only for one short catalog transaction.
 *
 * The queue and the history are one table with two lives: a delivery is open (pending,
 * retrying, or a replay asked for) for seconds, and done for the rest of its retention.
 * So the partitions follow that:
 *
 *     delivery                 LIST (layout): 0 = the table as it was before this migration
 *     ├─ delivery_r0             (layout 0) the old table, attached as it is; emptied by retention
 *     └─ delivery_current        (layout 1) LIST ((status in ('pending', 'retrying') or next_trigger = 'replay'))
 *        ├─ delivery_open          (true)  the queue: every open delivery, whatever its class
 *        └─ delivery_done          (false) LIST (retention_class)
 *           ├─ delivery_r7           RANGE (event_id), leaves with event's and attempt's bounds:
 *           │  └─ delivery_r7_20261127 …  dropped with them (partitions.ts)
 *           └─ delivery_done_r0      class 0 (see below)
 *
 * PostgreSQL moves a row between partitions when an UPDATE changes its partition key: a
 * result that finishes a delivery moves it from the queue to its history leaf, a replay
 * moves it back. The claims read delivery_open alone (DELIVERY_OPEN, claimed-columns.ts,
 * written as the key so the planner prunes every other partition): one index probe per
 * destination, as on one table. An earlier attempt partitioned `delivery` like `event`
 * (by class, then time) and the claim probed every leaf once per destination (25 ms
 * against 0.16 ms for an empty claim over 100 destinations and 78 leaves).
 *
 * The old table keeps only done rows: its open rows move to delivery_open here (step 3),
 * and a replay of one of its deliveries sets layout 1 (replay.ts). A row moved out that is
 * class 0 (an event from before 019) finishes in delivery_done_r0; one of a class has
 * its leaf, made here for every existing event leaf (step 4).
 *
 * No unique index spans the tree (a partition key that is an expression allows none):
 * each partition has its own on (event_id, destination_id) and a delivery row is only
 * ever inserted with its event (insert-events.ts, notifications.ts), once.
 *
 * Steps (the migration is not one transaction):
 * 1. the `layout` column (a constant default: no rewrite) and a `layout = 0` check,
 *    validated without blocking writes (it proves the old table's bound: no scan at attach);
 * 2. one short transaction (withShortLocks): rename the table and its indexes to
 *    `delivery_r0…`, make the partitioned tree under the old name, attach the old table;
 * 3. the old table's open rows moved to the queue (an UPDATE of `layout`, retried if a
 *    relay of the previous release updates one meanwhile);
 * 4. hook_ensure_history_partitions makes delivery leaves too, beside every event leaf.
 */
export class PartitionedDeliveries extends Migration {
  override name = '021-partitioned-deliveries';

  override isTransactional(): boolean {
    return false;
  }

  override async up(): Promise<void> {
    const [state] = await this.execute(`select relkind from pg_class where oid = 'delivery'::regclass`);
    if (state?.relkind !== 'p') {
      this.addSql(withShortLocks(`
          alter table delivery add column if not exists layout smallint not null default 0,
            drop constraint if exists delivery_r0_layout_check,
            add constraint delivery_r0_layout_check check (layout = 0) not valid;`));
      this.addSql(`alter table delivery validate constraint delivery_r0_layout_check;`);
      this.addSql(SWAP_IN_PARENT);
    }
    this.addSql(MOVE_OPEN_ROWS);
    this.addSql(ENSURE_WITH_DELIVERIES);
    // a delivery leaf beside every event leaf there is (their deliveries may move into it)
    this.addSql(`
      select hook_ensure_history_partitions(substring(c.relname from '^event_r([0-9]+)_')::int,
                                            to_timestamp(substring(c.relname from '([0-9]{8})$'), 'YYYYMMDD'),
                                            to_timestamp(substring(c.relname from '([0-9]{8})$'), 'YYYYMMDD'))
      from pg_class c join pg_inherits i on i.inhrelid = c.oid
      where c.relname ~ '^event_r[0-9]+_[0-9]{8}$';`);
  }
}

const SWAP_IN_PARENT = withShortLocks(`
  lock table delivery in access exclusive mode;
  alter table delivery rename to delivery_r0;
  alter index delivery_pkey rename to delivery_r0_pkey;
  alter index delivery_due_idx rename to delivery_r0_due_idx;
  alter index delivery_leased_idx rename to delivery_r0_leased_idx;
  create table delivery (like delivery_r0 including defaults including constraints) partition by list (layout);
  alter table delivery drop constraint delivery_r0_layout_check, alter column layout set default 1;
  alter table delivery attach partition delivery_r0 for values in (0);
  comment on column delivery.layout is '0: stored before delivery was partitioned (migration 021), in delivery_r0; 1: in delivery_current.';
  create table delivery_current partition of delivery for values in (1)
    partition by list ((status in ('pending', 'retrying') or next_trigger = 'replay'));
  create table delivery_open partition of delivery_current for values in (true);
  alter table delivery_open add constraint delivery_open_pkey primary key (event_id, destination_id);
  create index delivery_due_idx on delivery_open (destination_id, next_attempt_at, event_id) where next_attempt_at is not null;
  create index delivery_leased_idx on delivery_open (destination_id, locked_until) where lease_id is not null;
  create table delivery_done partition of delivery_current for values in (false) partition by list (retention_class);
  create unique index delivery_key on delivery_done (event_id, destination_id, retention_class);
  create table delivery_done_r0 partition of delivery_done for values in (0);
  perform hook_name_history_indexes('delivery_done_r0');`);

/** Step 3: the old table's open deliveries into the queue. */
const MOVE_OPEN_ROWS = `
  do $move$
  declare
    tries int := 0;
  begin
    loop
      begin
        update delivery set layout = 1 where layout = 0 and (status in ('pending', 'retrying') or next_trigger = 'replay');
        exit;
      exception when serialization_failure or deadlock_detected then
        -- a relay of the previous release moved one of them meanwhile
        tries := tries + 1;
        if tries >= 20 then raise; end if;
        perform pg_sleep(0.1);
      end;
    end loop;
  end
  $move$;`;

/** hook_ensure_history_partitions (019) with `delivery` leaves: under delivery_done, ranged on event_id. */
export const ENSURE_WITH_DELIVERIES = `
  create or replace function hook_ensure_history_partitions(class int, from_at timestamptz, to_at timestamptz) returns int
  language plpgsql as $$
  declare
    tables text[] := array['event', 'attempt', 'delivery'];
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
        -- delivery's classes are under delivery_done (migration 021)
        execute format('alter table %I attach partition %I for values in (%s)',
                       case when t = 'delivery' then 'delivery_done' else t end, t || '_r' || class, class);
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
