import { Migration } from '@mikro-orm/migrations';
import { ENSURE_WITH_DELIVERIES } from './021-partitioned-deliveries.ts';

/**
 * Dedupe keys in a table of their own, `event_dedupe_key` (docs/sources.md, Duplicates),
 * whose primary key (endpoint_id, dedupe_key) spans the whole history: no index of the
 * partitioned `event` can (a unique index there must hold the partition keys, 019). With
 * the key's uniqueness exact in one index, ingest stores a keyed event for one insert into
 * that index (ON CONFLICT, insert-events.ts) where it looked the key up in every partition
 * before its statement and again, per event, inside it (hook_dedupe_original): 58 µs of
 * PostgreSQL CPU per keyed event in bench:ingest.
 *
 * A row names the event holding the key. It can outlive it (retention drops a partition,
 * the class 0 pass or an erasure removes events; each removes the keys of what it removes,
 * but a pass cut short leaves some), so a key whose event is gone is free: hook_dedupe_holder
 * says who holds a key, and ingest takes over a key it says no one holds.
 *
 * Previous-version relays (a rolling upgrade) keep inserting keyed events with their own
 * statement, which calls hook_dedupe_original for each: redefined here, it claims the key
 * in this table for them (event_id null: "the event in the history under this key"), so
 * this version's relays see their events, and they see this version's in the table.
 *
 * Leaves made from now on have no (endpoint_id, dedupe_key) index of their own
 * (hook_ensure_history_partitions as 021 made it, less that index), nor do any on a
 * database that has stored no event yet: the table's key is the one a keyed event pays for. Leaves made before keep theirs, which is what finds a
 * previous-version relay's claim (event_id null): hook_dedupe_holder looks those up only
 * among events from before a day after this migration, a range those leaves cover (they
 * are made three days ahead). A BRIN index on event_id lets retention remove a dropped
 * leaf's keys by its id range (partitions.ts) at almost no cost to ingest: keys arrive in
 * about id order, and an insert into a block range VACUUM has not summarised yet (the
 * newest ones) writes nothing to the index.
 *
 * Online: a new table, its indexes and three functions; the keys stored before are copied
 * in afterwards (reads of `event`, no lock ingest waits for), twice: the second pass takes
 * the last hour again, for a previous-version statement that was in flight when the first
 * began.
 */
export class DedupeKeys extends Migration {
  override name = '022-dedupe-keys';

  override isTransactional(): boolean {
    return false;
  }

  override async up(): Promise<void> {
    // A database that has stored no event yet (a new deployment) keeps no leaf's own dedupe
    // index either: no claim can be looked up through them. Elsewhere leaves that hold
    // events keep theirs until retention drops them.
    const [history] = await this.execute('select not exists (select 1 from event) as empty');
    if (history?.empty === true) {
      const indexes = await this.execute(`
        select i.relname as name from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
        where t.relname ~ '^event_r[0-9]+(_[0-9]{8})?$' and i.relname ~ '_dedupe_key(_idx)?$' and t.relkind = 'r'`);
      for (const { name } of indexes) this.addSql(`drop index if exists ${name as string};`);
    }
    this.addSql(`
      create table if not exists event_dedupe_key (
        endpoint_id text not null,
        dedupe_key text not null,
        -- null: claimed by a previous-version relay's statement (see hook_dedupe_holder)
        event_id text,
        -- every row of an account's carries it (docs/scaling.md)
        account_id text not null,
        primary key (endpoint_id, dedupe_key)
      );`);
    this.addSql('create index if not exists event_dedupe_key_event_idx on event_dedupe_key using brin (event_id);');
    this.addSql(HOLDER_FUNCTIONS);
    this.addSql(ENSURE_WITHOUT_DEDUPE_INDEX);
    this.addSql(copyKeys(''));
    this.addSql(copyKeys(`and e.id >= hook_history_bound((extract(epoch from now() - interval '1 hour') * 1000)::bigint)`));
  }
}

const HOLDER_FUNCTIONS = `
  -- the event holding a key, or null when the key is free: its event is gone, or its
  -- claim (a previous-version relay's, event_id null) has no event under the key. Volatile:
  -- in READ COMMITTED each call sees what committed before it, not only before its statement.
  -- Made with the bound of those claims' events written in (see above).
  do $make$
  begin
    execute format($function$
      create or replace function hook_dedupe_holder(endpoint text, key text, holder text) returns text
      language plpgsql volatile as $body$
      declare
        found_id text;
      begin
        if holder is not null then
          -- an event keeps its id when it moves between classes: looked up in each
          select e.id into found_id from event e where e.id = holder limit 1;
        else
          select e.id into found_id from event e where e.endpoint_id = endpoint and e.dedupe_key = key and e.id < %L limit 1;
        end if;
        return found_id;
      end
      $body$;$function$, hook_history_bound((extract(epoch from now() + interval '1 day') * 1000)::bigint));
  end
  $make$;

  -- a previous-version relay's statement calls this for each keyed event it is about to
  -- store (019): it claims the key here for that event (null: its event is found by the
  -- key), or names the event holding it, which makes that statement drop its copy
  create or replace function hook_dedupe_original(endpoint text, key text, since_id text) returns text
  language plpgsql volatile as $$
  declare
    claimed text;
    holder text;
  begin
    insert into event_dedupe_key (endpoint_id, dedupe_key, event_id, account_id)
    select endpoint, key, null, p.account_id from endpoint p where p.id = endpoint
    on conflict (endpoint_id, dedupe_key) do nothing
    returning dedupe_key into claimed;
    if claimed is not null then return null; end if;
    select hook_dedupe_holder(k.endpoint_id, k.dedupe_key, k.event_id) into holder
    from event_dedupe_key k where k.endpoint_id = endpoint and k.dedupe_key = key for update;
    if holder is not null then return holder; end if;
    update event_dedupe_key set event_id = null where endpoint_id = endpoint and dedupe_key = key;
    return null;
  end
  $$;`;

/** The step of hook_ensure_history_partitions (019, 021) that gives an event leaf its own dedupe index. */
const LEAF_DEDUPE_INDEX = `
          if t = 'event' then
            execute format('create unique index %I on %I (endpoint_id, dedupe_key) where dedupe_key is not null', leaf || '_dedupe_key_idx', leaf);
          end if;`;

/** hook_ensure_history_partitions as 021 made it, less that step (see above). */
const ENSURE_WITHOUT_DEDUPE_INDEX = (() => {
  if (!ENSURE_WITH_DELIVERIES.includes(LEAF_DEDUPE_INDEX)) throw new Error('021\'s hook_ensure_history_partitions no longer has the step 022 leaves out');
  return ENSURE_WITH_DELIVERIES.replace(LEAF_DEDUPE_INDEX, '');
})();

/** The keys stored before this migration (`also`: a further condition on `e`), read through every partition's `(endpoint_id, dedupe_key)` index. */
function copyKeys(also: string): string {
  return `
  insert into event_dedupe_key (endpoint_id, dedupe_key, event_id, account_id)
  select e.endpoint_id, e.dedupe_key, e.id, e.account_id from event e
  where e.dedupe_key is not null ${also}
  on conflict (endpoint_id, dedupe_key) do nothing;`;
}
