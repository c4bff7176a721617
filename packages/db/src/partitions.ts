/**
 * History partitions (docs/retention.md#partitions; made by migrations 019 and 021):
 * `event` and `attempt` are LIST-partitioned by `retention_class` (the days the account
 * kept events when the event was received) and each class RANGE-partitioned by event id
 * in periods of `hook_history_period_days(class)` days, the same leaves in both tables.
 * `delivery` has the same leaves for its done rows (delivery_done); its open ones are the
 * queue, one partition of their own (delivery_open), and its rows from before 021 stay in
 * delivery_r0 (migration 021 draws the tree).
 *
 * - Leaves are made ahead of need (maintainHistoryPartitions, from the retention job), and
 *   on the spot when ingest meets a missing one (insert-events.ts: reported through
 *   `onMissingPartition`, then the batch is stored).
 * - Expired history leaves whole (dropExpiredPartitions): a leaf whose period ended more
 *   than its class's days ago is detached CONCURRENTLY (ingest and reads never wait on it)
 *   and dropped, in time independent of its rows, with the same period's delivery leaf.
 *   Its events' deliveries that are still open (a paused destination's) or in delivery_r0
 *   are deleted by key first: the only rows a drop deletes. Before that, the rows of accounts whose
 *   retention grew since (an upgrade) are moved to their new class: the longer retention
 *   wins, as it always has (retention-sql.ts).
 * - Class 0 (history from before migration 019) keeps the row-by-row pass.
 */
import { PLAN_LIMITS, PLANS, firstIdAt } from '@hook/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import type { Orm } from './orm.ts';
import { DELIVERY_OPEN } from './queue/statements/claimed-columns.ts';

export const DAY_MS = 86_400_000;
/** The tables partitioned alike; leaves are dropped in this order (an event's deliveries and attempts before it). */
export const HISTORY_TABLES = ['delivery', 'attempt', 'event'] as const;
/** How far ahead of now leaves are made, so ingest never waits for one. */
export const PARTITIONS_AHEAD_MS = 3 * DAY_MS;

/**
 * The retention class of an account `a` (SQL over its `plan` and `retention_days`): the days
 * its events are kept (core's retentionDaysOf), 0 for a plan this code does not know.
 */
export function retentionClassSql(alias: string): string {
  const cases = PLANS.map((plan) => {
    const limits = PLAN_LIMITS[plan];
    const days = limits.customRetention ? `coalesce(${alias}.retention_days, ${limits.retentionDays})` : String(limits.retentionDays);
    return `when '${plan}' then ${days}`;
  });
  return `(case ${alias}.plan ${cases.join(' ')} else 0 end)::smallint`;
}

/** Days one leaf of a class spans (hook_history_period_days, migration 019). */
export function periodDays(retentionClass: number): number {
  return Math.max(1, Math.floor(retentionClass / 30));
}

/** Makes (once, whoever else is making them) the class and its leaves for every period meeting [from, to]; returns how many leaves were made. */
export async function ensureHistoryPartitions(em: EntityManager, retentionClass: number, from: Date, to: Date): Promise<number> {
  const { rows: [row] } = await sql<{ made: number }>`
    select hook_ensure_history_partitions(${retentionClass}::int, ${from}::timestamptz, ${to}::timestamptz) as made`.execute(em.getKysely());
  return row?.made ?? 0;
}

/** The classes accounts have now (their events are stored in these). */
async function classesInUse(em: EntityManager): Promise<number[]> {
  const { rows } = await sql<{ c: number }>`select distinct ${sql.raw(retentionClassSql('a'))} as c from account a`.execute(em.getKysely());
  return rows.map((row) => Number(row.c)).filter((c) => c > 0);
}

/**
 * Makes the leaves one class needs from the current period to PARTITIONS_AHEAD_MS ahead:
 * for every class in use by the retention job, and at once for an account whose retention
 * just changed (a plan change, an enterprise account's own retention), so that its next
 * event finds its partition. Returns how many were made.
 */
export async function ensureClassPartitions(em: EntityManager, retentionClass: number, now: Date = new Date()): Promise<number> {
  if (retentionClass <= 0) return 0;
  return ensureHistoryPartitions(em, retentionClass, now, new Date(now.getTime() + PARTITIONS_AHEAD_MS));
}

/**
 * Makes the leaves every class in use needs (ensureClassPartitions), and moves to the queue
 * any open delivery left in delivery_r0 (moveStrandedDeliveries). Returns how many leaves
 * were made.
 */
export async function maintainHistoryPartitions(orm: Orm, now: Date = new Date()): Promise<number> {
  const em = orm.em.fork();
  let made = 0;
  for (const retentionClass of await classesInUse(em)) made += await ensureClassPartitions(em, retentionClass, now);
  await moveStrandedDeliveries(em);
  return made;
}

/**
 * Open deliveries in delivery_r0 (the table from before migration 021), which the claims
 * never read: a replay that a relay of the previous release made after the upgrade (the
 * current one moves what it replays: replay.ts). Moved to the queue, where they are
 * claimed; returns how many. It reads delivery_r0's due index, which holds only deliveries
 * with a due time. A row another statement moves meanwhile is left to the next pass.
 */
export async function moveStrandedDeliveries(em: EntityManager): Promise<number> {
  try {
    const { rows: [row] } = await sql<{ n: number }>`
      with moved as (
        update delivery set layout = 1
        where layout = 0 and next_attempt_at is not null and (status in ('pending', 'retrying') or next_trigger = 'replay')
        returning 1
      )
      select count(*)::int as n from moved`.execute(em.getKysely());
    return row?.n ?? 0;
  } catch (error) {
    if ((error as { code?: string }).code === '40001') return 0;
    throw error;
  }
}

/** A leaf of one class: the same period in every table of HISTORY_TABLES. */
export interface HistoryLeaf {
  retentionClass: number;
  /** Its period: received times (and event ids) in [startMs, endMs). */
  startMs: number;
  endMs: number;
  /** `event_r7_20261127`; the attempt and delivery leaves are named alike. */
  eventLeaf: string;
}

const LEAF_NAME = /^event_r(\d+)_(\d{4})(\d{2})(\d{2})$/;

/** Every leaf of every class > 0, oldest first. */
export async function historyLeaves(em: EntityManager): Promise<HistoryLeaf[]> {
  const { rows } = await sql<{ relname: string }>`
    select c.relname from pg_inherits i
    join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
    where p.relname ~ '^event_r[0-9]+$' and p.relname <> 'event_r0'`.execute(em.getKysely());
  const leaves: HistoryLeaf[] = [];
  for (const { relname } of rows) {
    const match = LEAF_NAME.exec(relname);
    if (!match) continue;
    const retentionClass = Number(match[1]);
    const startMs = Date.UTC(Number(match[2]), Number(match[3]) - 1, Number(match[4]));
    leaves.push({ retentionClass, startMs, endMs: startMs + periodDays(retentionClass) * DAY_MS, eventLeaf: relname });
  }
  return leaves.sort((a, b) => a.startMs - b.startMs || a.retentionClass - b.retentionClass);
}

/** Whether every event a leaf can hold is past its class's retention at `nowMs`. */
export function leafExpired(leaf: HistoryLeaf, nowMs: number): boolean {
  return leaf.endMs + leaf.retentionClass * DAY_MS <= nowMs;
}

export interface DropResult {
  /** Leaves dropped (each the same period of both tables). */
  leaves: number;
  /** Events moved to a longer class before their leaf was dropped (accounts whose retention grew). */
  moved: number;
}

/**
 * Moves the rows of `leaf` that must be kept longer than its class (accounts whose current
 * retention is longer: an upgrade since) to their account's current class, in one
 * transaction; returns how many events moved. Row movement is an UPDATE of the partition
 * key, so a statement updating one of them meanwhile fails rather than writing to a copy.
 */
async function keepLongerRetained(em: EntityManager, leaf: HistoryLeaf): Promise<number> {
  const classOf = sql.raw(retentionClassSql('a'));
  const eventLeaf = sql.id(leaf.eventLeaf);
  const { rows: accounts } = await sql<{ id: string; retention_class: number }>`
    select a.id, ${classOf} as retention_class from account a
    where ${classOf} > ${leaf.retentionClass} and exists (select 1 from ${eventLeaf} e where e.account_id = a.id)`.execute(em.getKysely());
  let moved = 0;
  const fromId = firstIdAt('event', leaf.startMs);
  const toId = firstIdAt('event', leaf.endMs);
  for (const account of accounts) {
    const to = Number(account.retention_class);
    await ensureHistoryPartitions(em, to, new Date(leaf.startMs), new Date(leaf.endMs - 1));
    // Each statement starts from the account's events in the leaf (its (account_id, id)
    // index) and reaches their deliveries and attempts by key, whatever else the day holds.
    const theirs = sql`select id from ${eventLeaf} where account_id = ${account.id}`;
    await em.transactional(async (tx) => {
      const db = tx.getKysely();
      // the class and period pin the leaf (and the queue, and delivery_r0): not every delivery partition
      await sql`update delivery d set retention_class = ${to} from (${theirs}) m
                where d.event_id = m.id and d.retention_class = ${leaf.retentionClass} and d.event_id >= ${fromId} and d.event_id < ${toId}`.execute(db);
      await sql`update attempt a set retention_class = ${to} from (${theirs}) m
                where a.event_id = m.id and a.retention_class = ${leaf.retentionClass} and a.event_id >= ${fromId} and a.event_id < ${toId}`.execute(db);
      const { rows: [row] } = await sql<{ n: number }>`
        with m as (update event set retention_class = ${to} where retention_class = ${leaf.retentionClass} and account_id = ${account.id} and id >= ${fromId} and id < ${toId} returning 1)
        select count(*)::int as n from m`.execute(db);
      moved += row?.n ?? 0;
    });
  }
  return moved;
}

/** Deliveries deleted by one statement of removeDeliveries. */
const DELIVERY_DELETE_BATCH = 5000;

/**
 * Deletes the deliveries of a leaf's events that are not in its delivery leaf: the open
 * ones (delivery_open, the queue: a range of its key) and those stored before `delivery`
 * was partitioned (delivery_r0, while it holds any of the period: a batch of the leaf's
 * event ids at a time, each found by its key, never a scan of the old table, as a range
 * delete on it once was: 2.85 s instead of 0.25 s at 16 M deliveries by bench:scale).
 */
async function removeDeliveries(em: EntityManager, leaf: HistoryLeaf): Promise<void> {
  const fromId = firstIdAt('event', leaf.startMs);
  const toId = firstIdAt('event', leaf.endMs);
  const db = em.getKysely();
  await sql`delete from delivery l where ${sql.raw(DELIVERY_OPEN)} and l.retention_class = ${leaf.retentionClass} and l.event_id >= ${fromId} and l.event_id < ${toId}`.execute(db);
  const { rows: [legacy] } = await sql<{ any: boolean }>`select exists (select 1 from delivery_r0 where event_id >= ${fromId} and event_id < ${toId}) as any`.execute(db);
  if (!legacy?.any) return;
  let after = '';
  for (;;) {
    const { rows } = await sql<{ id: string }>`select id from ${sql.id(leaf.eventLeaf)} where id > ${after} order by id limit ${DELIVERY_DELETE_BATCH}`.execute(db);
    const ids = rows.map((row) => row.id);
    if (ids.length === 0) return;
    await sql`delete from delivery where layout = 0 and event_id = any(${ids}::text[])`.execute(db);
    if (ids.length < DELIVERY_DELETE_BATCH) return;
    after = ids.at(-1)!;
  }
}

/**
 * Removes the dedupe keys of a leaf's events (event_dedupe_key, migration 022: a table of
 * its own, which a dropped leaf does not take along): the keys in the leaf's id range,
 * through the table's BRIN index on event_id, whose event is in this leaf (its primary
 * key; another class's leaf covers the same ids). A key left behind (a pass cut short, a
 * previous-version relay's claim) only takes room: ingest takes over a key whose event is gone.
 */
async function removeDedupeKeys(em: EntityManager, leaf: HistoryLeaf): Promise<void> {
  await sql`
    delete from event_dedupe_key k
    where k.event_id >= ${firstIdAt('event', leaf.startMs)} and k.event_id < ${firstIdAt('event', leaf.endMs)}
      and exists (select 1 from ${sql.id(leaf.eventLeaf)} e where e.id = k.event_id)`.execute(em.getKysely());
}

/**
 * Detaches (CONCURRENTLY: neither reads nor writes of the table wait) and drops one leaf of
 * one table; returns whether this call dropped it (another process may have).
 */
async function detachAndDrop(em: EntityManager, table: string, retentionClass: number, leafName: string): Promise<boolean> {
  const db = em.getKysely();
  const { rows: [state] } = await sql<{ pending: boolean | null; exists: boolean }>`
    select to_regclass(${leafName}::text) is not null as exists,
           (select i.inhdetachpending from pg_inherits i where i.inhrelid = to_regclass(${leafName}::text)) as pending`.execute(db);
  if (!state?.exists) return false;
  const parent = sql.id(`${table}_r${retentionClass}`);
  if (state.pending === true) await sql`alter table ${parent} detach partition ${sql.id(leafName)} finalize`.execute(db);
  else if (state.pending === false) await sql`alter table ${parent} detach partition ${sql.id(leafName)} concurrently`.execute(db);
  const { rows: [dropped] } = await sql<{ dropped: boolean }>`select to_regclass(${leafName}::text) is not null as dropped`.execute(db);
  if (!dropped?.dropped) return false;
  await sql`drop table ${sql.id(leafName)}`.execute(db);
  return true;
}

/**
 * Drops every leaf whose events are all past their retention at `now` (see above), after
 * moving out what must be kept longer. Safe to run from several processes at once: a leaf
 * another process is dropping is skipped.
 */
export async function dropExpiredPartitions(orm: Orm, options: { now?: Date; signal?: AbortSignal } = {}): Promise<DropResult> {
  const nowMs = (options.now ?? new Date()).getTime();
  const em = orm.em.fork();
  const result: DropResult = { leaves: 0, moved: 0 };
  for (const leaf of await historyLeaves(em)) {
    if (options.signal?.aborted) break;
    if (!leafExpired(leaf, nowMs)) continue;
    try {
      result.moved += await keepLongerRetained(em, leaf);
      await removeDeliveries(em, leaf);
      await removeDedupeKeys(em, leaf);
      let dropped = false;
      for (const table of HISTORY_TABLES) dropped = await detachAndDrop(em, table, leaf.retentionClass, leaf.eventLeaf.replace(/^event/, table));
      if (dropped) result.leaves++; // the event table's drop (the last) was this pass's
    } catch (error) {
      // another process is dropping it (its detach is pending or done): it finishes the leaf
      if (!isConcurrentDrop(error)) throw error;
    }
  }
  result.leaves += await dropDetachedLeaves(em);
  return result;
}

/**
 * Drops history partitions left detached (a pass that detached one and stopped, or lost a
 * race, before dropping it): only a drop detaches one, so a table of a partition's name
 * that is no partition is one to drop. Returns how many event partitions it dropped (the
 * leaves whose drop it finished).
 */
async function dropDetachedLeaves(em: EntityManager): Promise<number> {
  const { rows } = await sql<{ relname: string }>`
    select c.relname from pg_class c
    where c.relkind = 'r' and not c.relispartition and c.relname ~ '^(event|attempt|delivery)_r[0-9]+_[0-9]{8}$'
      and c.relnamespace = (select relnamespace from pg_class where oid = 'event'::regclass)`.execute(em.getKysely());
  let leaves = 0;
  for (const { relname } of rows) {
    try {
      await sql`drop table ${sql.id(relname)}`.execute(em.getKysely());
      if (relname.startsWith('event_')) leaves++;
    } catch (error) {
      if (!isConcurrentDrop(error)) throw error;
    }
  }
  return leaves;
}

/** A detach or drop that failed because another process got there first. */
function isConcurrentDrop(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  // undefined_table, object_not_in_prerequisite_state (detach pending elsewhere), lock_not_available, deadlock
  return code === '42P01' || code === '55000' || code === '55P03' || code === '40P01';
}
