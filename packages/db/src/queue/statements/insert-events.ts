/**
 * Ingest's statement: stores a batch of events and creates each one's deliveries, one per
 * live destination of its endpoint, in one statement and one commit.
 *
 * Why one statement: ingest answers only after its event is committed, and under load
 * one INSERT carries every event that arrived meanwhile (EventWriter's group commit).
 * Shaped as INSERT … SELECT FROM unnest(arrays): each column travels as one bound array
 * parameter, declared once in EVENT_COLUMNS (columns.ts). Bodies are the exception: one
 * parameter each, in an ARRAY[…] constructor, because node-postgres sends a Buffer
 * parameter as raw binary but would hex-encode it inside an array parameter. (The ORM's
 * insertMany would write every value into the SQL text, bodies as hex literals: half the
 * throughput.) The statement answers one row per outcome, `(outcome, id, data)`.
 *
 * Metering: the batch locks its accounts' usage rows for the month (FOR UPDATE, in
 * account order; READ COMMITTED returns the latest committed count after any wait),
 * keeps each account's events in arrival order while the count stays within the plan's
 * allowance, stores only those and adds exactly their number to the count. So the count
 * is the number of events stored, whatever runs concurrently, and a crash rolls both
 * back. Crossing 80% or 100% of the allowance writes a `usage.threshold` row to the
 * notification outbox, once per month, in the same transaction.
 *
 * Duplicates (docs/sources.md, Duplicates): the statement looks each key up first (`held`:
 * one probe of `event_dedupe_key`'s primary key, migration 022, as a scalar subquery per
 * keyed event, so it stays an index probe whatever the table's size when the plan was
 * made). An event whose key is held already is answered with that event's id and is
 * neither metered nor stored: the keyed statement ranks the others for the allowance
 * itself. A batch holds one copy of a key (later copies wait for the first's outcome).
 * The others claim their key as they are stored: an insert into `event_dedupe_key`, whose primary key spans the whole
 * history (partitions included), ON CONFLICT taking over only a key whose event is gone
 * (hook_dedupe_holder, a volatile function: it sees what committed since the statement
 * began); only events whose claim went in are stored. Two statements claiming one key wait
 * for each other at that index (and take turns on the account's usage row before it, so
 * neither holds a key the other waits for while waiting for the usage row). So of any
 * number of copies stored at once, here or by other relay processes, exactly one is
 * stored, and a copy that lost the race comes back as a duplicate and is looked up after.
 * The count grows by the events inserted. An event over the allowance is not inserted and
 * claims no key; one refused so while its key was being stored elsewhere is a duplicate.
 * A keyed event so costs the plain insert, the probe before and one index entry.
 *
 * Partitions: each event is stored in its account's retention class (partitions.ts), with
 * its deliveries. A partition missing (the relay did not run for days, or a new class)
 * fails the statement; it is made on the spot, reported (`onMissingPartition`) and the
 * batch stored.
 *
 * Ingest's shortcut: an event may come with a lease (a delivery slot this process's
 * worker, or one of its `hook listen` sessions, reserved). If the endpoint has one
 * destination and it is, in this statement's snapshot, active (a URL one without limits
 * of its own) and so is the endpoint, the delivery is stored already claimed, so the worker can deliver it at once without a
 * claim statement. Every other delivery is stored due, and idle workers are woken
 * (NOTIFY, sent at commit) when any URL delivery was stored unclaimed.
 *
 * On a PostgreSQL distributed by account (`distributed`: HOOK_DATABASE_DISTRIBUTED=citus,
 * docs/scaling.md) a batch is one statement per account, run concurrently, each pinned to
 * its account: the account is a scalar parameter by which every table of every CTE and
 * subquery is filtered and which every row written takes, so Citus routes it to that
 * account's shard (test/e2e/shard-routing.test.ts checks it). On one PostgreSQL a batch of
 * several accounts stays one statement: one per account halved ingest throughput with 10
 * accounts under load (bench:ingest, BENCH_ACCOUNTS=10 BENCH_DISTRIBUTED=1).
 */
import { sql } from 'kysely';
import { PLAN_LIMITS, PLANS, USAGE_THRESHOLDS, usageMonth, type DestinationType, type Plan } from '@hook/core';
import type { Orm } from '../../orm.ts';
import { ensureHistoryPartitions, retentionClassSql } from '../../partitions.ts';
import { ItemFailure } from '../../batch-queue.ts';
import { composedStatement, runStatement } from '../executor.ts';
import { BatchKeys, duplicatesAmong } from './dedupe-keys.ts';
import { CLAIMED_DELIVERY_COLUMNS, deliveryOpen, destinationOfEvent, toClaimed, type ClaimedDeliveryRow } from './claimed-columns.ts';
import type { Column } from './columns.ts';
import { ensureUsageRows, type KnownUsageRows } from './ensure-usage-rows.ts';
import { DUE_CHANNEL, type ClaimedDelivery, type ReceivedEvent } from '../types.ts';

export type { KnownUsageRows } from './ensure-usage-rows.ts';

/** One received request, ready to store. */
export interface NewEvent extends ReceivedEvent {
  status: 'pending';
  /** A delivery slot this process reserved for the event (see above), by a worker (`url`) or a listener (`cli`); taken only if the endpoint's only destination is of that type and can use it. */
  lease?: { id: string; ms: number; destinationType: DestinationType } | null;
}

/** What storing one event came to. */
export type InsertOutcome =
  /** Stored; with its claimed delivery when one was stored under `event.lease`, else null. */
  | { stored: true; delivery: ClaimedDelivery | null }
  /** Not stored: its endpoint already stored an event under its dedupe key, `originalId`. */
  | { stored: false; reason: 'duplicate'; originalId: string }
  /** Not stored: the account had already accepted its plan's events for the month. */
  | { stored: false; reason: 'quota_exceeded'; plan: Plan; month: string; eventsPerMonth: number };

/** Per-plan monthly allowances as SQL `(plan, limit)` rows; a null limit is unlimited. */
const PLAN_ALLOWANCES = sql.join(PLANS.map((plan) => sql`(${plan}::text, ${PLAN_LIMITS[plan].eventsPerMonth}::bigint)`));
const THRESHOLDS = sql.join(USAGE_THRESHOLDS.map((fraction) => sql`(${fraction}::numeric)`));

/** The numbers of bodies a statement binds (see insertMetered); a batch larger than the last binds its own number. */
const BOUND_BODIES = [1, 2, 4, 8, 16, 32, 64, 128, 200];

/** Times a duplicate whose original was removed meanwhile (retention) is tried again as new, at the most. */
const STALE_KEY_RETRIES = 3;

/**
 * Stores a batch of events (see above). Returns, per event, whether it was stored, and
 * its claimed delivery when it was stored under its lease.
 */
export async function insertEvents(orm: Orm, batch: readonly NewEvent[], known: KnownUsageRows = new Set(), options: InsertOptions = {}): Promise<InsertOutcome[]> {
  const outcomes = await insertEventsOrFail(orm, batch, known, options);
  const failed = outcomes.find((outcome) => outcome instanceof ItemFailure);
  if (failed) throw failed.error;
  return outcomes as InsertOutcome[];
}

/**
 * insertEvents for a group commit (EventWriter's BatchQueue): an event that could not be
 * stored after others of its batch were comes back as an ItemFailure, so that it alone
 * fails and the batch is not written again.
 */
export async function insertEventsOrFail(orm: Orm, batch: readonly NewEvent[], known: KnownUsageRows = new Set(), options: InsertOptions = {}): Promise<(InsertOutcome | ItemFailure)[]> {
  if (!options.distributed) return insertBatch(orm, null, batch, known, options, STALE_KEY_RETRIES);
  // Each account's events a statement and a commit of their own: if one fails, others may be
  // stored (EventWriter hands one account's events at a time when distributed).
  const outcomes = new Map<NewEvent, InsertOutcome | ItemFailure>();
  await Promise.all([...Map.groupBy(batch, (event) => event.accountId)].map(async ([accountId, events]) => {
    (await insertBatch(orm, accountId, events, known, options, STALE_KEY_RETRIES)).forEach((outcome, i) => outcomes.set(events[i]!, outcome));
  }));
  return batch.map((event) => outcomes.get(event)!);
}

/** insertEvents of a batch all of `account` (distributed, see above), or of any accounts (null). */
async function insertBatch(orm: Orm, account: string | null, batch: readonly NewEvent[], known: KnownUsageRows, options: InsertOptions, retries: number): Promise<(InsertOutcome | ItemFailure)[]> {
  // Once a statement of the batch committed, an event that then cannot be stored fails
  // alone (ItemFailure): throwing would have the batch written again, each event alone,
  // and those already stored would be stored twice or answered as their own duplicates.
  const settled = new Map<string, InsertOutcome | ItemFailure>();
  // A later copy of a key within the batch waits for the first's outcome (dedupe-keys.ts).
  const keys = new BatchKeys(batch);
  const events = keys.events;
  await ensureUsageRows(orm, account, events, known, false);
  let result = await insertPartitioned(orm, account, events, options);
  if (result.unmetered.size > 0) {
    // A usage row thought to exist is missing (another process's database was restored,
    // or the row was removed by hand): make it and store those events again.
    const retry = events.filter((event) => result.unmetered.has(event.id));
    await ensureUsageRows(orm, account, retry, known, true);
    const again = await insertPartitioned(orm, account, retry, options);
    for (const [id, row] of again.granted) result.granted.set(id, row);
    for (const [id, row] of again.rejected) result.rejected.set(id, row);
    for (const id of again.lost) result.lost.add(id);
    for (const [id, originalId] of again.held) result.held.set(id, originalId);
    result = { ...result, unmetered: again.unmetered };
    const failure = new ItemFailure(new Error('usage rows for this batch could not be created'));
    for (const id of result.unmetered) settled.set(id, failure);
  }
  const duplicate = (originalId: string): InsertOutcome => ({ stored: false, reason: 'duplicate', originalId });
  // Keys held already: duplicates, neither metered nor stored.
  for (const [id, originalId] of result.held) settled.set(id, duplicate(originalId));
  // Later copies of a key are duplicates of what its first copy came to; copies that lost a
  // race go round again, with the later copies of keys still nobody's.
  const { duplicates, again: raced } = keys.settle({ held: result.held, lost: result.lost, refused: result.rejected });
  for (const [id, originalId] of duplicates) settled.set(id, duplicate(originalId));
  if (raced.length > 0) {
    if (retries === 0) {
      const failure = new ItemFailure(new Error('dedupe keys kept disappearing while this batch was stored'));
      for (const event of raced) settled.set(event.id, failure);
    } else {
      const again = await insertBatch(orm, account, raced, known, options, retries - 1);
      raced.forEach((event, i) => settled.set(event.id, again[i]!));
    }
  }
  // A keyed event refused over the allowance while its key was being stored is a duplicate of that.
  for (const [id, originalId] of await duplicatesAmong(orm, account, events.filter((event) => result.rejected.has(event.id)))) settled.set(id, duplicate(originalId));
  return batch.map((event): InsertOutcome | ItemFailure => {
    const outcome = settled.get(event.id);
    if (outcome) return outcome;
    const rejected = result.rejected.get(event.id);
    if (rejected) {
      return { stored: false, reason: 'quota_exceeded', plan: rejected.plan, month: usageMonth(event.receivedAt).slice(0, 7), eventsPerMonth: Number(rejected.events_limit) };
    }
    // Its delivery stored claimed under its lease: as a claim returns it, the event as received.
    const row = result.granted.get(event.id);
    return { stored: true, delivery: row && event.lease ? toClaimed(orm, row, event) : null };
  });
}

export interface InsertOptions {
  /** Told when a batch met a missing partition, before it is made and the batch stored again (the relay logs it and counts it). */
  onMissingPartition?: (missing: { retentionClasses: number[]; error: string }) => void;
  /** The database is distributed by account (HOOK_DATABASE_DISTRIBUTED): one statement per account, routed to its shard (see above). */
  distributed?: boolean;
}

/** PostgreSQL's answer to a row no partition takes. */
function isMissingPartition(error: unknown): error is Error {
  return (error as { code?: string }).code === '23514' && /no partition of relation/.test((error as Error).message);
}

/**
 * insertMetered, making the partitions the batch needs when one is missing (see above):
 * its accounts' classes, for the periods of its receive times.
 */
async function insertPartitioned(orm: Orm, account: string | null, events: readonly NewEvent[], options: InsertOptions): Promise<Inserted> {
  try {
    return await insertMetered(orm, account, events);
  } catch (error) {
    if (!isMissingPartition(error)) throw error;
    const em = orm.em.fork();
    const rows = await em.execute<{ c: number }[]>(
      `select distinct ${retentionClassSql('a')} as c from account a where a.id = any(?::text[])`, [`{${[...new Set(events.map((e) => e.accountId))].join(',')}}`]);
    const classes = rows.map((row) => Number(row.c)).filter((c) => c > 0);
    options.onMissingPartition?.({ retentionClasses: classes, error: error.message });
    const times = events.map((event) => event.receivedAt.getTime());
    for (const retentionClass of classes) await ensureHistoryPartitions(em, retentionClass, new Date(Math.min(...times)), new Date(Math.max(...times)));
    return insertMetered(orm, account, events);
  }
}

/** One row of the statement's answer: an outcome, the event it is about, and what else it says. */
type InsertResultRow =
  /** The notification to the workers was sent (see the statement's end). */
  | { outcome: 'woken'; id: null; data: null }
  /** Stored, and its delivery claimed under its lease: the delivery's side of a claim (claimed-columns.ts). */
  | { outcome: 'granted'; id: string; data: ClaimedDeliveryRow }
  /** Not stored: over its plan's allowance. */
  | { outcome: 'rejected'; id: string; data: Refused }
  /** Not stored: its usage row is missing. */
  | { outcome: 'unmetered'; id: string; data: null }
  /** Not stored: it lost the race for its key to a copy stored meanwhile. */
  | { outcome: 'lost'; id: string; data: null }
  /** Not stored: its key is held by event `data`. */
  | { outcome: 'held'; id: string; data: string };

/** An event refused over the allowance: the account's plan and its monthly allowance. */
interface Refused {
  plan: Plan;
  events_limit: number | string;
}

/**
 * The events' columns (columns.ts), unnested as `b` with their place in the batch (`ord`),
 * and `batch` each event's month and its rank among its account's events of that month
 * (insertMetered). A bytea column is bound one parameter per value (see above).
 */
const EVENT_COLUMNS: readonly Column<NewEvent, { months: readonly string[]; ranks: readonly number[] }>[] = [
  ['id', 'text', (e) => e.id],
  ['account_id', 'text', (e) => e.accountId],
  ['endpoint_id', 'text', (e) => e.endpointId],
  ['type', 'text', (e) => e.type],
  ['method', 'text', (e) => e.method],
  ['path', 'text', (e) => e.path],
  ['query', 'text', (e) => e.query],
  ['body', 'bytea', (e) => e.body],
  ['content_type', 'text', (e) => e.contentType],
  ['size', 'int', (e) => e.size],
  ['received_at', 'timestamptz', (e) => e.receivedAt],
  ['lease_id', 'text', (e) => e.lease?.id ?? null],
  ['lease_ms', 'int', (e) => e.lease?.ms ?? null],
  ['lease_type', 'text', (e) => e.lease?.destinationType ?? null],
  ['month', 'date', (_, i, batch) => batch.months[i]],
  ['rn', 'int', (_, i, batch) => batch.ranks[i]],
  ['verification', 'text', (e) => (e.verification ? JSON.stringify(e.verification) : null)],
  ['handshake', 'text', (e) => e.handshake ?? null],
  ['dedupe_key', 'text', (e) => e.dedupeKey ?? null],
];
const EVENT_COLUMN_NAMES = EVENT_COLUMNS.map(([name]) => name).join(', ');

/** What one ingest statement made of its events, by event id. */
interface Inserted {
  granted: Map<string, ClaimedDeliveryRow>;
  rejected: Map<string, Refused>;
  unmetered: Set<string>;
  lost: Set<string>;
  held: Map<string, string>;
}

async function insertMetered(orm: Orm, account: string | null, events: readonly NewEvent[]): Promise<Inserted> {
  // Distributed (see above): every table filtered by the one account, `pin(alias)`, and every
  // row written takes it, `accountOf(column)`; otherwise each row's own account.
  const pinned = account === null ? null : sql`${account}::text`;
  const pin = (alias: string) => (pinned ? sql` and ${sql.raw(alias)}.account_id = ${pinned}` : sql``);
  const accountOf = (name: string) => pinned ?? sql.raw(name);
  // The statement's text depends on how many bodies it binds: padded with nulls to the next
  // of a few sizes, so a connection prepares (and PostgreSQL plans) a handful of texts, not
  // one per batch size (unnest pads the shorter arrays with nulls; those rows are left out).
  const bound = BOUND_BODIES.find((size) => size >= events.length) ?? events.length;
  const padding = Array.from({ length: bound - events.length }, () => sql`${null}`);
  // Each event's month and its rank among its account's events of that month in this
  // batch (arrival order), worked out here rather than by a window function over wide rows.
  const months = events.map((event) => usageMonth(event.receivedAt));
  const meterOf = new Map<string, { accountId: string; month: string; count: number }>();
  const ranks = events.map((event, i) => {
    const key = `${event.accountId}|${months[i]}`;
    let meter = meterOf.get(key);
    if (!meter) meterOf.set(key, (meter = { accountId: event.accountId, month: months[i]!, count: 0 }));
    return ++meter.count;
  });
  const meters = [...meterOf.values()].sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : a.month < b.month ? -1 : 1));
  const facts = { months, ranks };
  const columns = sql.join(EVENT_COLUMNS.map(([, type, pick]) => (type === 'bytea'
    ? sql`array[${sql.join([...events.map((event, i) => sql`${pick(event, i, facts)}`), ...padding])}]::bytea[]`
    : sql`${events.map((event, i) => pick(event, i, facts))}::${sql.raw(type)}[]`)));
  // Events with a dedupe key claim it as they are stored (see above); a batch without any keeps the plain statement.
  const keyed = events.some((event) => event.dedupeKey);
  const claims = keyed
    ? sql`
    claimed as (
      insert into event_dedupe_key (endpoint_id, dedupe_key, event_id, account_id)
      select endpoint_id, dedupe_key, id, ${accountOf('account_id')} from accepted where dedupe_key is not null
      on conflict (endpoint_id, dedupe_key) do update set event_id = excluded.event_id
        where hook_dedupe_holder(event_dedupe_key.endpoint_id, event_dedupe_key.dedupe_key, event_dedupe_key.event_id) is null${pinned ? sql` and event_dedupe_key.account_id = ${pinned}` : sql``}
      returning event_id
    ),`
    : sql``;
  const onlyClaimed = keyed ? sql`where dedupe_key is null or id in (select event_id from claimed)` : sql``;
  // Keyed: the keys held already, and each other event's rank among its account's of the
  // month in this batch (the ranks sent along count every event, duplicates too).
  const heldKeys = keyed
    ? sql`
    held as (
      select l.id, l.holder from (
        select b.id, (select hook_dedupe_holder(k.endpoint_id, k.dedupe_key, k.event_id) from event_dedupe_key k
                      where k.endpoint_id = b.endpoint_id and k.dedupe_key = b.dedupe_key${pin('k')}) as holder
        from batch b where b.dedupe_key is not null
      ) l where l.holder is not null
    ),
    ranked as (
      select b.id, row_number() over (partition by b.account_id, b.month order by b.ord) as rn
      from batch b where not exists (select 1 from held h where h.id = b.id)
    ),`
    : sql``;
  const stored = keyed ? sql`join inserted i on i.id = a.id` : sql``;
  // A tracing relay stores each event's ingest span (docs/deployment.md#tracing); a batch without any leaves the statement as it is.
  const traced = events.some((event) => event.traceParent);
  const traceParents = traced
    ? sql`
    traced as (
      select * from unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.traceParent ?? null)}::text[]) as t(id, trace_parent)
    ),`
    : sql``;
  // Events of an endpoint with ordered destinations carry each one's ordering key (docs/delivery.md#ordered-delivery).
  const ordered = events.some((event) => event.orderingKeys);
  // Whether an ordered delivery waits for its turn (parked, see the deliveries step). With
  // its key's row held (sequenced), hook_ordering_busy sees what another ingest of the key
  // committed meanwhile, which this statement's snapshot does not: an event whose key is
  // idle may then take ingest's lease and go at once, as an unordered one does. Distributed
  // (a function's own queries are not routed to the account's shard) and in the plain
  // statement the check is this statement's view, and an ordered delivery takes no lease.
  const orderedShortcut = ordered && !pinned;
  const parked = !ordered
    ? sql`false`
    : orderedShortcut
      ? sql`case when s.last_seq is null then false else k.rn > 1 or hook_ordering_busy(t.destination_id, t.ordering_key) end`
      : sql`t.ordering_key is not null and (k.rn > 1
              or exists (select 1 from delivery o where o.destination_id = t.destination_id and o.ordering_key = t.ordering_key
                           and ${sql.raw(deliveryOpen('o'))}${pin('o')})
              or exists (select 1 from ordering_block b where b.destination_id = t.destination_id and b.ordering_key = t.ordering_key${pin('b')}))`;
  const duplicateRows = keyed
    ? sql`
    union all
    select 'lost', a.id, null
    from accepted a where a.dedupe_key is not null and not exists (select 1 from inserted i where i.id = a.id)
    union all
    select 'held', h.id, to_jsonb(h.holder) from held h`
    : sql``;
  // The text depends only on the bodies bound (above), whether it is one account's (distributed), has keys and is traced, so each is prepared once per connection.
  const { statement, params } = composedStatement(orm, `hook_insert_events_${pinned ? 'account_' : ''}${keyed ? 'keyed_' : ''}${traced ? 'traced_' : ''}${ordered ? 'ordered_' : ''}${bound}`, sql`
    with received as materialized (
      -- every event's headers in one JSON array: one JSON.stringify here, where a text[]
      -- of JSON strings cost node-postgres a regex escape of each (a tenth of ingest's JavaScript)
      select ${JSON.stringify(events.map((event) => event.headers))}::jsonb as headers${ordered ? sql`,
             ${JSON.stringify(events.map((event) => event.orderingKeys ?? null))}::jsonb as ordering_keys` : sql``}
    ),
    batch as (
      select b.*, r.headers -> (b.ord - 1)::int as headers, ${ordered ? sql`r.ordering_keys -> (b.ord - 1)::int` : sql`null::jsonb`} as ordering_keys,
             case when b.handshake is not null then 0 -- a handshake is answered at ingest, never delivered
                  else (select count(*) from destination d where ${sql.raw(destinationOfEvent('b'))}${pin('d')}) end::int as delivery_count
      from unnest(${columns}) with ordinality as b(${sql.raw(EVENT_COLUMN_NAMES)}, ord)
      cross join received r
      where b.id is not null
    ),
    usage as (
      select u.account_id, u.month, u.events_accepted, a.plan, l.events_limit, ${sql.raw(retentionClassSql('a'))} as retention_class
      from unnest(${meters.map((meter) => meter.accountId)}::text[], ${meters.map((meter) => meter.month)}::date[]) as k(account_id, month)
      join account_usage u on u.account_id = k.account_id and u.month = k.month${pin('u')}
      join account a on a.id = u.account_id
      left join (values ${PLAN_ALLOWANCES}) as l(plan, events_limit) on l.plan = a.plan
      order by u.account_id, u.month
      for update of u
    ),
    ${heldKeys}accepted as (
      select b.*, u.retention_class from batch b join usage u on u.account_id = b.account_id and u.month = b.month
      ${keyed ? sql`join ranked k on k.id = b.id
      where u.events_limit is null or u.events_accepted + k.rn <= u.events_limit` : sql`where u.events_limit is null or u.events_accepted + b.rn <= u.events_limit`}
    ),${traceParents}${claims}
    inserted as (
      insert into event (id, account_id, endpoint_id, type, method, path, query, headers, body,
                         content_type, size, received_at, delivery_count, verification, handshake, dedupe_key, retention_class${traced ? sql`, trace_parent` : sql``})
      select id, ${accountOf('account_id')}, endpoint_id, type, method, path, query, headers, body,
             content_type, size, received_at, delivery_count, verification::jsonb, handshake, dedupe_key, retention_class${traced ? sql`, t.trace_parent` : sql``}
      from accepted${traced ? sql` left join traced t using (id)` : sql``}
      ${onlyClaimed}
      returning id
    ),
    counted as (
      update account_usage u set events_accepted = u.events_accepted + c.n
      from (select a.account_id, a.month, count(*) as n from accepted a ${stored} group by a.account_id, a.month) as c
      where u.account_id = c.account_id and u.month = c.month${pin('u')}
      returning u.account_id, u.month, u.events_accepted - c.n as before, u.events_accepted as after
    ),
    thresholds as (
      insert into notification_outbox (account_id, type, data)
      select ${accountOf('c.account_id')}, 'usage.threshold',
             jsonb_build_object('month', to_char(c.month, 'YYYY-MM'), 'threshold', t.fraction,
                                'events_accepted', c.after, 'events_per_month', u.events_limit)
      from counted c join usage u on u.account_id = c.account_id and u.month = c.month
      cross join (values ${THRESHOLDS}) as t(fraction)
      where u.events_limit is not null
        and c.before < ceil(t.fraction * u.events_limit) and c.after >= ceil(t.fraction * u.events_limit)
      returning 1
    ),
    targets as (
      -- every live destination of each stored event's endpoint; an endpoint's only
      -- destination takes the event's lease when it can be delivered at once. An ordered
      -- destination's delivery has its key ("" when ingest did not read one); a delayed
      -- one is due after its delay
      select a.id as event_id, a.account_id, a.endpoint_id, a.received_at + make_interval(secs => coalesce(d.delay_seconds, 0)) as due_at,
             a.retention_class, d.id as destination_id, d.type,
             case when d.ordering is not null then coalesce(a.ordering_keys ->> d.id, '') end as ordering_key,
             case when a.delivery_count = 1 and a.lease_id is not null and d.status = 'active' and d.type = a.lease_type
                       and ${orderedShortcut ? sql`` : sql`d.ordering is null and `}d.delay_seconds is null
                       and (d.type = 'cli' or (d.rate_per_second is null and d.max_in_flight is null)) -- limits are kept by the claim
                       and p.status = 'active' and p.deleted_at is null
                  then a.lease_id end as lease_id,
             a.lease_ms
      from accepted a ${stored}
      join endpoint p on p.id = a.endpoint_id${pin('p')}
      join destination d on ${sql.raw(destinationOfEvent('a'))}${pin('d')}
      where a.handshake is null
    ),
    keyed as (
      -- each ordered delivery's place among its key's in this batch (event id order)
      select t.event_id, t.destination_id, t.ordering_key, t.account_id,
             row_number() over (partition by t.destination_id, t.ordering_key order by t.event_id) as rn,
             count(*) over (partition by t.destination_id, t.ordering_key) as n
      from targets t where t.ordering_key is not null
    ),
    sequenced as (
      -- the keys' numbers (ordering.ts): each key's row is held until this statement
      -- commits, taken in key order (so two statements never wait for each other in a
      -- circle); a batch without an ordered delivery inserts nothing
      insert into ordering_key_seq (destination_id, ordering_key, account_id, last_seq)
      select destination_id, ordering_key, ${accountOf('min(account_id)')}, max(n) from keyed
      group by destination_id, ordering_key
      order by destination_id, ordering_key
      on conflict (destination_id, ordering_key) do update set last_seq = ordering_key_seq.last_seq + excluded.last_seq
      returning destination_id, ordering_key, last_seq
    ),
    deliveries as (
      -- An ordered delivery behind another of its key (stored before, or earlier in this
      -- batch), or whose key an event that gave up holds, waits with no due time until the
      -- one before it is done (ordering.ts makes it due), and takes no lease (parked, see
      -- above). Only events ingest read keys for take this step: one whose destination was
      -- ordered since is due, and the claim takes it in its turn all the same (claim-due.ts)
      insert into delivery (event_id, destination_id, account_id, endpoint_id, status, next_attempt_at, lease_id, locked_until, retention_class, ordering_key, ordering_seq)
      select t.event_id, t.destination_id, ${accountOf('t.account_id')}, t.endpoint_id, 'pending',
             case when z.parked then null else t.due_at end,
             case when z.parked then null else t.lease_id end,
             case when t.lease_id is not null and not z.parked then now() + make_interval(secs => t.lease_ms::double precision / 1000) end,
             t.retention_class, t.ordering_key, s.last_seq - k.n + k.rn
      from targets t
      left join keyed k on k.event_id = t.event_id and k.destination_id = t.destination_id
      left join sequenced s on s.destination_id = t.destination_id and s.ordering_key = t.ordering_key
      cross join lateral (select ${parked} as parked) z
      returning * -- the claimed ones are read as a claim's delivery (below)
    ),
    woken as (
      select pg_notify(${DUE_CHANNEL}, '')
      from (select 1 from targets where type <> 'cli' and lease_id is null limit 1) as due
    )
    -- One row per outcome: (outcome, event id, what else it says). UNION ALL runs every
    -- branch, so the notification is sent even when nothing was claimed (data-modifying
    -- CTEs such as thresholds always run to completion)
    select 'woken' as outcome, null::text as id, null::jsonb as data from woken
    union all
    -- a delivery stored under its event's lease (ingest's shortcut): the delivery's side of
    -- a claim (claimed-columns.ts); the event's side is what the caller sent
    select 'granted', c.event_id, to_jsonb(c) from (
      select ${sql.raw(CLAIMED_DELIVERY_COLUMNS)}
      from deliveries l join destination d on d.id = l.destination_id${pin('d')} join endpoint p on p.id = l.endpoint_id${pin('p')}
      join batch e on e.id = l.event_id
      where l.lease_id is not null
    ) c
    union all
    select case when u.account_id is null then 'unmetered' else 'rejected' end, b.id,
           case when u.account_id is not null then jsonb_build_object('plan', u.plan, 'events_limit', u.events_limit) end
    from batch b left join usage u on u.account_id = b.account_id and u.month = b.month
    where not exists (select 1 from accepted a where a.id = b.id)${keyed ? sql` and not exists (select 1 from held h where h.id = b.id)` : sql``}${duplicateRows}
  `);
  const rows = await runStatement<InsertResultRow>(orm, statement, params);
  const inserted: Inserted = { granted: new Map(), rejected: new Map(), unmetered: new Set(), lost: new Set(), held: new Map() };
  for (const row of rows) {
    if (row.outcome === 'granted') inserted.granted.set(row.id, row.data);
    else if (row.outcome === 'rejected') inserted.rejected.set(row.id, row.data);
    else if (row.outcome === 'unmetered') inserted.unmetered.add(row.id);
    else if (row.outcome === 'lost') inserted.lost.add(row.id);
    else if (row.outcome === 'held') inserted.held.set(row.id, row.data);
  }
  return inserted;
}
