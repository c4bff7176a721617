/**
 * The relay's hand-written SQL, one named statement per function: ingest's batch insert
 * and the delivery queue (claim, record, replay). Everything else goes through the ORM;
 * these exist where the ORM cannot say it in one statement (CTEs with FOR UPDATE SKIP
 * LOCKED, UPDATE … RETURNING joined rows) or would cost a hot path dearly.
 */
import { CompiledQuery, sql, type RawBuilder } from 'kysely';
import type { Pool, QueryResultRow } from 'pg';
import { PLAN_LIMITS, PLANS, randomToken, USAGE_THRESHOLDS, usageMonth, type AttemptTrigger, type EndpointFilter, type EventStatus, type Plan } from '@hook/core';
import type { Orm } from './orm.ts';
import { openSigningSecrets } from './signing-secrets.ts';

/** The channel that tells idle workers an event may be due. */
export const DUE_CHANNEL = 'hook_events_due';

async function run<Row>(orm: Orm, text: string, params: readonly unknown[] = []): Promise<Row[]> {
  const result = await orm.em.getKysely().executeQuery<Row>(CompiledQuery.raw(text, [...params]));
  return [...result.rows];
}

/** A received request as stored: what it was and where it goes. */
export interface ReceivedEvent {
  id: string;
  accountId: string;
  endpointId: string;
  type: string | null;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: Buffer;
  contentType: string | null;
  size: number;
  receivedAt: Date;
}

/** One received request, ready to store. */
export interface NewEvent extends ReceivedEvent {
  status: 'pending';
  nextAttemptAt: Date | null;
  /**
   * A delivery slot this process has reserved for the event: store it already claimed
   * under this lease, so the process can deliver it at once without a claim statement.
   * Taken only if the endpoint is, at commit, an active URL endpoint; otherwise the
   * event is stored unclaimed and the workers' queue delivers it.
   */
  lease?: { id: string; ms: number } | null;
}

/** What storing one event came to. */
export type InsertOutcome =
  /** Stored; with its delivery when it was stored claimed under `event.lease`, else null. */
  | { stored: true; delivery: ClaimedDelivery | null }
  /** Not stored: the account had already accepted its plan's events for the month. */
  | { stored: false; reason: 'quota_exceeded'; plan: Plan; month: string; eventsPerMonth: number };

/** Per-plan monthly allowances as SQL `(plan, limit)` rows; a null limit is unlimited. */
const PLAN_ALLOWANCES = sql.join(PLANS.map((plan) => sql`(${plan}::text, ${PLAN_LIMITS[plan].eventsPerMonth}::bigint)`));
const THRESHOLDS = sql.join(USAGE_THRESHOLDS.map((fraction) => sql`(${fraction}::numeric)`));

/** (account, month) usage rows this process knows exist (they are never deleted while the account lives). */
const knownUsageRows = new WeakMap<Orm, Set<string>>();

/** Makes sure each (account, month) of the batch has its usage row, so the insert statement can lock it. */
async function ensureUsageRows(orm: Orm, events: readonly NewEvent[], force: boolean): Promise<void> {
  let known = knownUsageRows.get(orm);
  if (!known || known.size > 100_000) knownUsageRows.set(orm, (known = new Set()));
  const missing = new Map<string, { accountId: string; month: string }>();
  for (const event of events) {
    const month = usageMonth(event.receivedAt);
    const key = `${event.accountId}|${month}`;
    if (force || !known.has(key)) missing.set(key, { accountId: event.accountId, month });
  }
  if (missing.size === 0) return;
  const rows = [...missing.values()];
  await sql`
    insert into account_usage (account_id, month)
    select * from unnest(${rows.map((row) => row.accountId)}::text[], ${rows.map((row) => row.month)}::date[])
    on conflict do nothing
  `.execute(orm.em.getKysely());
  for (const key of missing.keys()) known.add(key);
}

/**
 * Stores a batch of events in one statement and one commit, metering them against each
 * account's monthly allowance in the same statement, and (in the same transaction)
 * wakes idle delivery workers when any of them is due and not already claimed by this
 * process. Shaped as INSERT … SELECT FROM unnest(arrays): each column travels as one
 * bound array parameter. Bodies are the exception: one parameter each, in an ARRAY[…]
 * constructor, because node-postgres sends a Buffer parameter as raw binary but would
 * hex-encode it inside an array parameter. (The ORM's insertMany writes every value into
 * the SQL text, bodies as hex literals, which halved ingest throughput.)
 *
 * Metering: the batch locks its accounts' usage rows for the month (FOR UPDATE, in
 * account order; READ COMMITTED returns the latest committed count after any wait), keeps
 * each account's events in arrival order while the count stays within the plan's
 * allowance, stores only those and adds exactly their number to the count. So the count
 * is the number of events stored, whatever runs concurrently, and a crash rolls both
 * back. Crossing 80% or 100% of the allowance writes a `usage.threshold` row to the
 * notification outbox, once per month, in the same transaction.
 *
 * Returns, per event, whether it was stored, and its delivery when it was stored claimed
 * (see NewEvent.lease). The endpoint's state is read in the same statement, so an
 * endpoint paused or given a CLI destination a moment ago is never delivered to by this
 * shortcut.
 */
export async function insertEvents(orm: Orm, events: readonly NewEvent[]): Promise<InsertOutcome[]> {
  await ensureUsageRows(orm, events, false);
  let result = await insertMetered(orm, events);
  if (result.unmetered.size > 0) {
    // A usage row this process thought existed is missing (another process's database
    // was restored, or the row was removed by hand): make it and store those events again.
    const retry = events.filter((event) => result.unmetered.has(event.id));
    await ensureUsageRows(orm, retry, true);
    const again = await insertMetered(orm, retry);
    for (const [id, row] of again.granted) result.granted.set(id, row);
    for (const [id, row] of again.rejected) result.rejected.set(id, row);
    result = { ...result, unmetered: again.unmetered };
    if (result.unmetered.size > 0) throw new Error('usage rows for this batch could not be created');
  }
  return events.map((event): InsertOutcome => {
    const rejected = result.rejected.get(event.id);
    if (rejected) {
      return { stored: false, reason: 'quota_exceeded', plan: rejected.plan!, month: usageMonth(event.receivedAt).slice(0, 7), eventsPerMonth: Number(rejected.events_limit) };
    }
    const row = result.granted.get(event.id);
    if (!row || !event.lease) return { stored: true, delivery: null };
    return {
      stored: true,
      delivery: {
        id: event.id,
        accountId: event.accountId,
        endpointId: event.endpointId,
        headers: event.headers,
        body: event.body,
        status: 'pending',
        attemptCount: 0,
        autoAttempts: 0,
        trigger: 'auto',
        leaseId: event.lease.id,
        destinationUrl: row.destination_url!,
        secrets: openSigningSecrets(orm, row.secret!, row.previous_secret),
        type: event.type,
        method: event.method,
        path: event.path,
        query: event.query,
        contentType: event.contentType,
        endpointName: row.endpoint_name!,
        transformationCode: row.transformation_code,
        filter: row.filter,
      },
    };
  });
}

interface InsertResultRow {
  outcome: 'granted' | 'rejected' | 'unmetered' | 'woken';
  id: string | null;
  destination_url: string | null;
  secret: string | null;
  previous_secret: string | null;
  plan: Plan | null;
  events_limit: string | null;
  endpoint_name: string | null;
  transformation_code: string | null;
  filter: EndpointFilter | null;
}

/** Each ORM's pg pool, for statements run as named prepared statements. */
const nativePools = new WeakMap<Orm, Pool>();

/**
 * Runs a statement as a named prepared statement on the ORM's own pool: PostgreSQL plans
 * it once per connection and reuses the plan. For the metered insert this saves about a
 * millisecond of planning per batch, which is most of what metering costs. The text must
 * be the same for every call with one `name` (the insert's depends only on the batch size).
 */
async function runPrepared<Row>(orm: Orm, name: string, query: RawBuilder<Row>): Promise<{ rows: Row[] }> {
  const compiled = query.compile(orm.em.getKysely());
  return { rows: await runNamed<Row>(orm, name, compiled.sql, compiled.parameters) };
}

/**
 * `run`, as a named prepared statement (see runPrepared): for the delivery queue's hot
 * statements, whose text never changes. In back-to-back bench:delivery runs this took
 * deliveries/s while ingesting from 1,060-1,160 to 1,460-1,520.
 */
async function runNamed<Row>(orm: Orm, name: string, text: string, params: readonly unknown[], planner?: PlannerSettings): Promise<Row[]> {
  let pool = nativePools.get(orm);
  if (!pool) nativePools.set(orm, (pool = await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient()));
  const query = { name, text, values: [...params] };
  if (!planner) return (await pool.query<Row & QueryResultRow>(query)).rows;
  // SET LOCAL lasts until the end of the transaction, so the statement gets one of its own.
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(`begin; ${Object.entries(planner).map(([setting, value]) => `set local ${setting} = ${value}`).join('; ')}`);
    const result = await client.query<Row & QueryResultRow>(query);
    await client.query('commit');
    return result.rows;
  } catch (error) {
    await client.query('rollback').catch((rollbackError: unknown) => {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw error;
  } finally {
    client.release(broken);
  }
}

/** PostgreSQL planner settings for one statement (see runNamed). */
export type PlannerSettings = Partial<Record<'enable_bitmapscan' | 'enable_seqscan', 'off'>>;

async function insertMetered(orm: Orm, events: readonly NewEvent[]) {
  const column = <T>(pick: (event: NewEvent) => T): T[] => events.map(pick);
  const bodies = sql.join(events.map((event) => sql`${event.body}`));
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
  const result = await runPrepared<InsertResultRow>(orm, `hook_insert_events_${events.length}`, sql<InsertResultRow>`
    with batch as (
      select b.*, case when b.lease_id is not null and p.status = 'active' and p.destination_type = 'url' and p.deleted_at is null
                       then b.lease_id end as granted_lease
      from unnest(
        ${column((e) => e.id)}::text[], ${column((e) => e.accountId)}::text[], ${column((e) => e.endpointId)}::text[],
        ${column((e) => e.type)}::text[], ${column((e) => e.method)}::text[], ${column((e) => e.path)}::text[],
        ${column((e) => e.query)}::text[], ${column((e) => JSON.stringify(e.headers))}::text[], array[${bodies}]::bytea[],
        ${column((e) => e.contentType)}::text[], ${column((e) => e.size)}::int[], ${column((e) => e.receivedAt)}::timestamptz[],
        ${column((e) => e.status)}::text[], ${column((e) => e.nextAttemptAt)}::timestamptz[],
        ${column((e) => e.lease?.id ?? null)}::text[], ${column((e) => e.lease?.ms ?? null)}::int[],
        ${months}::date[], ${ranks}::int[]
      ) as b(id, account_id, endpoint_id, type, method, path, query, headers, body,
             content_type, size, received_at, status, next_attempt_at, lease_id, lease_ms, month, rn)
      left join endpoint p on p.id = b.endpoint_id and b.lease_id is not null
    ),
    usage as (
      select u.account_id, u.month, u.events_accepted, a.plan, l.events_limit
      from unnest(${meters.map((meter) => meter.accountId)}::text[], ${meters.map((meter) => meter.month)}::date[]) as k(account_id, month)
      join account_usage u on u.account_id = k.account_id and u.month = k.month
      join account a on a.id = u.account_id
      left join (values ${PLAN_ALLOWANCES}) as l(plan, events_limit) on l.plan = a.plan
      order by u.account_id, u.month
      for update of u
    ),
    accepted as (
      select b.* from batch b join usage u on u.account_id = b.account_id and u.month = b.month
      where u.events_limit is null or u.events_accepted + b.rn <= u.events_limit
    ),
    counted as (
      update account_usage u set events_accepted = u.events_accepted + c.n
      from (select account_id, month, count(*) as n from accepted group by account_id, month) as c
      where u.account_id = c.account_id and u.month = c.month
      returning u.account_id, u.month, u.events_accepted - c.n as before, u.events_accepted as after
    ),
    thresholds as (
      insert into notification_outbox (account_id, type, data)
      select c.account_id, 'usage.threshold',
             jsonb_build_object('month', to_char(c.month, 'YYYY-MM'), 'threshold', t.fraction,
                                'events_accepted', c.after, 'events_per_month', u.events_limit)
      from counted c join usage u on u.account_id = c.account_id and u.month = c.month
      cross join (values ${THRESHOLDS}) as t(fraction)
      where u.events_limit is not null
        and c.before < ceil(t.fraction * u.events_limit) and c.after >= ceil(t.fraction * u.events_limit)
      returning 1
    ),
    inserted as (
      insert into event (id, account_id, endpoint_id, type, method, path, query, headers, body,
                         content_type, size, received_at, status, attempt_count, next_attempt_at, lease_id, locked_until)
      select id, account_id, endpoint_id, type, method, path, query, headers::jsonb, body,
             content_type, size, received_at, status, 0, next_attempt_at, granted_lease,
             case when granted_lease is not null then now() + make_interval(secs => lease_ms::double precision / 1000) end
      from accepted
      returning id, next_attempt_at, lease_id
    ),
    woken as (
      select pg_notify(${DUE_CHANNEL}, '') from (select 1 from inserted where next_attempt_at is not null and lease_id is null limit 1) as due
    )
    -- UNION ALL runs every branch, so the notification is sent even when nothing was
    -- claimed (data-modifying CTEs such as thresholds always run to completion)
    select 'woken' as outcome, null::text as id, null::text as destination_url, null::text as secret,
           null::text as previous_secret, null::text as plan, null::bigint as events_limit,
           null::text as endpoint_name, null::text as transformation_code, null::jsonb as filter from woken
    union all
    select 'granted', i.id, p.destination_url, p.secret,
           case when p.previous_secret_expires_at > now() then p.previous_secret end, null, null,
           p.name, p.transformation_code, p.filter
    from inserted i join batch b on b.id = i.id join endpoint p on p.id = b.endpoint_id
    where i.lease_id is not null
    union all
    select case when u.account_id is null then 'unmetered' else 'rejected' end, b.id, null, null, null, u.plan, u.events_limit,
           null, null, null
    from batch b left join usage u on u.account_id = b.account_id and u.month = b.month
    where not exists (select 1 from accepted a where a.id = b.id)
  `);
  const granted = new Map<string, InsertResultRow>();
  const rejected = new Map<string, InsertResultRow>();
  const unmetered = new Set<string>();
  for (const row of result.rows) {
    if (row.outcome === 'granted') granted.set(row.id!, row);
    else if (row.outcome === 'rejected') rejected.set(row.id!, row);
    else if (row.outcome === 'unmetered') unmetered.add(row.id!);
  }
  return { granted, rejected, unmetered };
}

/** A claimed delivery: the event, where it goes, how to sign it, and the lease that fences it. */
export interface ClaimedDelivery {
  id: string;
  accountId: string;
  endpointId: string;
  headers: Record<string, string>;
  body: Buffer;
  status: EventStatus;
  attemptCount: number;
  autoAttempts: number;
  trigger: AttemptTrigger;
  leaseId: string;
  destinationUrl: string;
  secrets: string[];
  /** The rest of the stored request, which a transformation or filter reads. */
  type: string | null;
  method: string;
  path: string;
  query: string;
  contentType: string | null;
  endpointName: string;
  /** The endpoint's transformation (null: send the stored bytes as they are) and filter (null: deliver all). */
  transformationCode: string | null;
  filter: EndpointFilter | null;
}

interface ClaimedRow {
  id: string;
  account_id: string;
  endpoint_id: string;
  headers: Record<string, string>;
  body: Buffer;
  status: EventStatus;
  attempt_count: number;
  auto_attempts: number;
  next_trigger: AttemptTrigger;
  lease_id: string;
  destination_url: string;
  secret: string;
  previous_secret: string | null;
  type: string | null;
  method: string;
  path: string;
  query: string;
  content_type: string | null;
  endpoint_name: string;
  transformation_code: string | null;
  filter: EndpointFilter | null;
}

// The endpoint's transformation code and filter come with the claim: null columns cost
// next to nothing for endpoints without them, and a claim never runs stale code.
const CLAIMED_COLUMNS = `e.id, e.account_id, e.endpoint_id, e.headers, e.body, e.status, e.attempt_count, e.auto_attempts,
  e.next_trigger, e.lease_id, p.destination_url, p.secret,
  case when p.previous_secret_expires_at > now() then p.previous_secret end as previous_secret,
  e.type, e.method, e.path, e.query, e.content_type, p.name as endpoint_name, p.transformation_code, p.filter`;

function toClaimed(orm: Orm, row: ClaimedRow): ClaimedDelivery {
  return {
    id: row.id,
    accountId: row.account_id,
    endpointId: row.endpoint_id,
    headers: row.headers,
    body: row.body,
    status: row.status,
    attemptCount: row.attempt_count,
    autoAttempts: row.auto_attempts,
    trigger: row.next_trigger,
    leaseId: row.lease_id,
    destinationUrl: row.destination_url,
    secrets: openSigningSecrets(orm, row.secret, row.previous_secret),
    type: row.type,
    method: row.method,
    path: row.path,
    query: row.query,
    contentType: row.content_type,
    endpointName: row.endpoint_name,
    transformationCode: row.transformation_code,
    filter: row.filter,
  };
}

export interface ClaimOptions {
  /** Most events to claim. */
  limit: number;
  /** How long the claim holds; a worker that dies loses its claims when this runs out. */
  leaseMs: number;
  /** Most deliveries in flight to one endpoint across all workers, so one slow destination cannot take every slot. */
  perEndpointLimit: number;
}

/**
 * The claim statement ($1 limit, $2 lease ms, $3 per-endpoint share, $4 lease token) and
 * the planner settings it runs with, exported for the test that checks its plan.
 */
export const CLAIM_DUE: { name: string; text: string; planner: PlannerSettings } = {
  name: 'hook_claim_due',
  text: `
    with open_endpoints as materialized (
      -- live URL endpoints and how many more deliveries each may have in flight (counted
      -- once): its live leases, read in event_leased_idx order and no further than the
      -- share, so the plan is that index's range whatever the statistics say
      select p.id, $3 - (select count(*) from (
                           select 1 from event l
                           where l.endpoint_id = p.id and l.lease_id is not null and l.locked_until >= now()
                           order by l.endpoint_id, l.locked_until
                           limit $3) as live) as spare
      from endpoint p
      where p.status = 'active' and p.destination_type = 'url' and p.deleted_at is null
    ),
    candidates as (
      -- each endpoint's oldest due events, up to its spare capacity (an ORDER BY … LIMIT
      -- that matches event_due_idx, so the plan stops early even before the table has
      -- statistics), then the oldest of all
      select x.id, x.next_attempt_at
      from open_endpoints o
      cross join lateral (
        select e.id, e.next_attempt_at
        from event e
        where e.endpoint_id = o.id and e.next_attempt_at <= now()
          and (e.status in ('pending', 'retrying') or e.next_trigger = 'replay')
          and (e.lease_id is null or e.locked_until < now())
        order by e.endpoint_id, e.next_attempt_at, e.id
        limit greatest(o.spare, 0)
      ) x
      order by x.next_attempt_at, x.id
      limit $1
    ),
    due as materialized (
      -- The due conditions again, on the row itself: FOR UPDATE re-checks them against the
      -- newest committed version, so an event another worker claimed (or delivered) after
      -- this statement's snapshot was taken is skipped, not claimed twice. One primary-key
      -- lookup per candidate (a lateral join can be nothing else; the due time goes
      -- through coalesce so that event_due_idx does not qualify either).
      select x.id from candidates c
      cross join lateral (
        select e.id from event e
        where e.id = c.id and coalesce(e.next_attempt_at, 'infinity') <= now()
          and (e.status in ('pending', 'retrying') or e.next_trigger = 'replay')
          and (e.lease_id is null or e.locked_until < now())
        for update of e skip locked
      ) x
    )
    update event e
    set lease_id = $4 || '.' || e.id, locked_until = now() + make_interval(secs => $2::double precision / 1000)
    from endpoint p
    where e.id = any(array(select id from due)) and p.id = e.endpoint_id
    returning ${CLAIMED_COLUMNS}`,
  // Every step must be an index probe that stops early: the live leases in
  // event_leased_idx, each endpoint's oldest due events in an ordered walk of
  // event_due_idx, each candidate by primary key. Planned from statistics older than the
  // backlog (they are refreshed every 30 s), PostgreSQL would rather bitmap-scan and sort
  // the endpoint's whole backlog, or walk a whole index, on every claim: in
  // bench:delivery PostgreSQL then spent 1.3-1.5 ms per delivered event instead of
  // 0.44 ms, in about half the runs.
  planner: { enable_bitmapscan: 'off', enable_seqscan: 'off' },
};

/**
 * Claims due deliveries. One statement: for each live URL endpoint with spare in-flight
 * capacity, its oldest due events (an index probe each, so a slow destination's backlog
 * is never walked and cannot hide anyone else's events); of those, the oldest overall;
 * lock them
 * with FOR UPDATE SKIP LOCKED (so concurrent workers never take the same event) and
 * stamp each with a lease: a token and an expiry. Only active URL endpoints qualify, so
 * paused endpoints' events wait, in arrival order, until they resume.
 */
export async function claimDueEvents(orm: Orm, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  const rows = await runNamed<ClaimedRow>(orm, CLAIM_DUE.name, CLAIM_DUE.text,
    [options.limit, options.leaseMs, options.perEndpointLimit, randomToken(9)], CLAIM_DUE.planner);
  // UPDATE … RETURNING gives rows in no set order: hand them out oldest first, so a
  // worker starts one claim's deliveries in arrival order (e.g. a backlog on resume).
  rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return rows.map((row) => toClaimed(orm, row));
}

export type ReplayClaim = { kind: 'claimed'; delivery: ClaimedDelivery } | { kind: 'not_found' } | { kind: 'not_url' } | { kind: 'in_flight' };

/**
 * Claims one event of an account for an immediate replay, due or not, whatever the
 * endpoint's status (a replay is an explicit request). Refused while another delivery
 * of it holds a live lease.
 */
export async function claimEventForReplay(orm: Orm, eventId: string, accountId: string, leaseMs: number): Promise<ReplayClaim> {
  const rows = await run<ClaimedRow & { claimed: boolean }>(orm, `
    with target as (
      select e.id, (e.lease_id is null or e.locked_until < now()) and p.destination_type = 'url' and p.deleted_at is null as claimable
      from event e join endpoint p on p.id = e.endpoint_id
      where e.id = $1 and e.account_id = $2
      for update of e
    ),
    claimed as (
      update event e
      set lease_id = $4 || '.' || e.id, locked_until = now() + make_interval(secs => $3::double precision / 1000), next_trigger = 'replay'
      from target t, endpoint p
      where e.id = t.id and t.claimable and p.id = e.endpoint_id
      returning ${CLAIMED_COLUMNS}
    )
    select c.*, true as claimed from claimed c
    union all
    select null, null, null, null, null, null, null, null, null, null,
           case when p.deleted_at is null then p.destination_url end, null, null,
           null, null, null, null, null, null, null, null, false
    from target t join event e on e.id = t.id join endpoint p on p.id = e.endpoint_id where not t.claimable`,
    [eventId, accountId, leaseMs, randomToken(9)]);
  const row = rows[0];
  if (!row) return { kind: 'not_found' };
  if (row.claimed) return { kind: 'claimed', delivery: toClaimed(orm, row) };
  return row.destination_url ? { kind: 'in_flight' } : { kind: 'not_url' };
}

/** What any finished attempt records, and the state it leaves its event in. */
export interface FinishedAttemptRecord {
  /** The attempt's id (att_…). */
  id: string;
  startedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  next: { status: EventStatus; autoAttempts: number; nextAttemptAt: Date | null };
  /** A type the endpoint's transformation set: stored as the event's type with the result. */
  newType?: { type: string | null };
}

/** A worker's attempt of a claimed delivery. */
export interface AttemptRecord extends FinishedAttemptRecord {
  delivery: ClaimedDelivery;
}

/**
 * Records attempts and moves their events on, many in one statement. An event's state
 * changes only if its delivery still holds the lease (a worker that lost it, having run
 * past its lease, must not overwrite the newer owner's result); the attempt is recorded
 * either way, since it happened. Returns, per record, whether the lease was still held.
 *
 * An automatic attempt that leaves its event failed spent its last retry (auto attempts
 * are only claimed while pending or retrying, and the lease keeps anyone else from
 * moving the event meanwhile), so the same statement queues its `event.failed`
 * notification: exactly one per failure, committed with it. Not for events of the
 * notifications endpoint itself, so a failing notification URL cannot feed itself.
 */
export async function recordAttempts(orm: Orm, records: readonly AttemptRecord[]): Promise<boolean[]> {
  const column = <T>(pick: (record: AttemptRecord) => T): T[] => records.map(pick);
  const rows = await runNamed<{ id: string }>(orm, 'hook_record_attempts', `
    with input as (
      select * from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::text[], $7::text[],
                           $8::int[], $9::text[], $10::timestamptz[], $11::int[], $12::int[], $13::text[], $14::text[],
                           $15::bool[], $16::text[])
        as t(event_id, lease_id, status, auto_attempts, next_attempt_at, attempt_id, account_id,
             n, trigger, started_at, duration_ms, response_status, response_body, error, set_type, new_type)
    ),
    updated as (
      update event e
      set status = i.status, auto_attempts = i.auto_attempts, next_attempt_at = i.next_attempt_at,
          type = case when i.set_type then i.new_type else e.type end,
          attempt_count = e.attempt_count + 1, next_trigger = 'auto', lease_id = null, locked_until = null
      from input i
      where e.id = i.event_id and e.lease_id = i.lease_id
      returning e.id, e.account_id, e.endpoint_id, e.attempt_count
    ),
    attempts as (
      insert into attempt (id, event_id, account_id, n, trigger, started_at, duration_ms, response_status, response_body, error)
      select attempt_id, event_id, account_id, n, trigger, started_at, duration_ms, response_status, response_body, error from input
    ),
    failure_notices as (
      insert into notification_outbox (account_id, type, data)
      select u.account_id, 'event.failed', jsonb_strip_nulls(jsonb_build_object(
               'event_id', u.id, 'endpoint_id', u.endpoint_id, 'attempts', u.attempt_count,
               'last_status', i.response_status, 'last_error', i.error))
      from updated u join input i on i.event_id = u.id join endpoint p on p.id = u.endpoint_id
      where i.trigger = 'auto' and i.status = 'failed' and p.kind = 'user'
    )
    select id from updated`,
    [column((r) => r.delivery.id), column((r) => r.delivery.leaseId), column((r) => r.next.status), column((r) => r.next.autoAttempts),
      column((r) => r.next.nextAttemptAt), column((r) => r.id), column((r) => r.delivery.accountId),
      column((r) => r.delivery.attemptCount + 1), column((r) => r.delivery.trigger), column((r) => r.startedAt),
      column((r) => Math.round(r.durationMs)), column((r) => r.responseStatus), column((r) => r.responseBody), column((r) => r.error),
      column((r) => r.newType !== undefined), column((r) => r.newType?.type ?? null)]);
  const held = new Set(rows.map((row) => row.id));
  return records.map((record) => held.has(record.delivery.id));
}

/** An event its endpoint's filter did not match (docs/filters.md). */
export interface FilteredRecord {
  eventId: string;
  /** The lease its delivery holds; null for a `hook listen` delivery (never claimed). */
  leaseId: string | null;
  /** A type the endpoint's transformation set, stored with the status. */
  newType?: { type: string | null };
}

/**
 * Marks events as filtered, many in one statement: status `filtered`, nothing due, the
 * lease released. No attempt is recorded (nothing was sent). Like recordAttempts, only
 * an event whose delivery still holds its lease moves (a listen delivery has none, and
 * moves only while still pending or retrying). Returns, per record, whether it moved.
 */
export async function recordFiltered(orm: Orm, records: readonly FilteredRecord[]): Promise<boolean[]> {
  const rows = await run<{ id: string }>(orm, `
    update event e
    set status = 'filtered', next_attempt_at = null, next_trigger = 'auto', lease_id = null, locked_until = null,
        type = case when i.set_type then i.new_type else e.type end
    from unnest($1::text[], $2::text[], $3::bool[], $4::text[]) as i(event_id, lease_id, set_type, new_type)
    where e.id = i.event_id
      and (case when i.lease_id is null then e.lease_id is null and e.status in ('pending', 'retrying') else e.lease_id = i.lease_id end)
    returning e.id`,
  [records.map((r) => r.eventId), records.map((r) => r.leaseId), records.map((r) => r.newType !== undefined), records.map((r) => r.newType?.type ?? null)]);
  const moved = new Set(rows.map((row) => row.id));
  return records.map((record) => moved.has(record.eventId));
}

/** An event waiting for a `hook listen` session: what a delivery message needs. */
export interface ListenEvent extends ReceivedEvent {
  status: EventStatus;
  attemptCount: number;
  autoAttempts: number;
}

/**
 * The events of an endpoint with a CLI destination that a listener should be offered
 * now, oldest first: those never delivered (pending) and those whose retry is due, received at or after
 * `since` (the session's start, for `--skip-missed`). Listeners are not exclusive (each
 * gets every event), so there is no claim: a session keeps its own deliveries in flight
 * out of what it offers.
 *
 * Two index paths, one per kind: pending events by id from `pendingFromId` (the
 * session's floor, below which it has offered everything, so a poll does not walk the
 * endpoint's whole delivered history each time), and due retries by due time.
 */
export async function listenBacklog(
  orm: Orm,
  options: { endpointId: string; since: Date | null; pendingFromId: string; excludeIds: readonly string[]; limit: number },
): Promise<ListenEvent[]> {
  const rows = await runNamed<{
    id: string; account_id: string; endpoint_id: string; type: string | null; method: string; path: string; query: string;
    headers: Record<string, string>; body: Buffer; content_type: string | null; size: number; received_at: string | Date; status: EventStatus;
    attempt_count: number; auto_attempts: number;
  }>(orm, 'hook_listen_backlog', `
    select * from (
      (select id, account_id, endpoint_id, type, method, path, query, headers, body, content_type, size, received_at, status,
              attempt_count, auto_attempts
       from event
       where endpoint_id = $1 and id >= $5 and status = 'pending'
         and ($2::timestamptz is null or received_at >= $2) and id <> all($3::text[])
       order by id
       limit $4)
      union all
      (select id, account_id, endpoint_id, type, method, path, query, headers, body, content_type, size, received_at, status,
              attempt_count, auto_attempts
       from event
       where endpoint_id = $1 and next_attempt_at <= now() and status = 'retrying'
         and ($2::timestamptz is null or received_at >= $2) and id <> all($3::text[])
       order by next_attempt_at, id
       limit $4)
    ) as offered
    order by id
    limit $4`, [options.endpointId, options.since, options.excludeIds, options.limit, options.pendingFromId]);
  return rows.map((row) => ({
    id: row.id, accountId: row.account_id, endpointId: row.endpoint_id, type: row.type, method: row.method, path: row.path,
    // Timestamps arrive as text through the ORM's driver settings.
    query: row.query, headers: row.headers, body: row.body, contentType: row.content_type, size: row.size, receivedAt: new Date(row.received_at),
    status: row.status, attemptCount: row.attempt_count, autoAttempts: row.auto_attempts,
  }));
}

/** A listener's answer to one delivery. */
export interface ListenAttemptRecord extends FinishedAttemptRecord {
  eventId: string;
  accountId: string;
  n: number;
}

/**
 * Records listeners' attempts (trigger `listen`) and moves their events on, many in one
 * statement. Several listeners may answer for one event: a delivered event stays
 * delivered whatever another listener says later. Returns each event's status after.
 *
 * An event that this statement moves into failed queues its `event.failed` notification
 * in the same statement. Several listeners answer for one event, so the status before
 * is read from the row locked first (FOR UPDATE waits for, then reads, the latest
 * committed version): only the answer that actually made it failed notifies.
 */
export async function recordListenAttempts(orm: Orm, records: readonly ListenAttemptRecord[]): Promise<EventStatus[]> {
  const column = <T>(pick: (record: ListenAttemptRecord) => T): T[] => records.map(pick);
  const rows = await runNamed<{ id: string; status: EventStatus }>(orm, 'hook_record_listen', `
    with input as (
      select * from unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::text[], $6::text[], $7::int[],
                           $8::timestamptz[], $9::int[], $10::int[], $11::text[], $12::text[], $13::bool[], $14::text[])
        as t(event_id, status, auto_attempts, next_attempt_at, attempt_id, account_id, n, started_at, duration_ms,
             response_status, response_body, error, set_type, new_type)
    ),
    before as (
      select e.id, e.status from event e where e.id in (select event_id from input) order by e.id for update of e
    ),
    updated as (
      update event e
      set status = case when e.status = 'delivered' then e.status else i.status end,
          auto_attempts = greatest(e.auto_attempts, i.auto_attempts),
          next_attempt_at = case when e.status = 'delivered' then e.next_attempt_at else i.next_attempt_at end,
          attempt_count = e.attempt_count + 1,
          type = case when i.set_type then i.new_type else e.type end
      from input i, before b
      where e.id = i.event_id and b.id = e.id
      returning e.id, e.status, e.account_id, e.endpoint_id, e.attempt_count, b.status as status_before, i.response_status, i.error
    ),
    attempts as (
      insert into attempt (id, event_id, account_id, n, trigger, started_at, duration_ms, response_status, response_body, error)
      select attempt_id, event_id, account_id, n, 'listen', started_at, duration_ms, response_status, response_body, error from input
    ),
    failure_notices as (
      insert into notification_outbox (account_id, type, data)
      select u.account_id, 'event.failed', jsonb_strip_nulls(jsonb_build_object(
               'event_id', u.id, 'endpoint_id', u.endpoint_id, 'attempts', u.attempt_count,
               'last_status', u.response_status, 'last_error', u.error))
      from updated u join endpoint p on p.id = u.endpoint_id
      where u.status = 'failed' and u.status_before <> 'failed' and p.kind = 'user'
    )
    select id, status from updated`,
    [column((r) => r.eventId), column((r) => r.next.status), column((r) => r.next.autoAttempts), column((r) => r.next.nextAttemptAt),
      column((r) => r.id), column((r) => r.accountId), column((r) => r.n), column((r) => r.startedAt), column((r) => Math.round(r.durationMs)),
      column((r) => r.responseStatus), column((r) => r.responseBody), column((r) => r.error),
      column((r) => r.newType !== undefined), column((r) => r.newType?.type ?? null)]);
  const after = new Map(rows.map((row) => [row.id, row.status]));
  return records.map((record) => after.get(record.eventId) ?? record.next.status);
}

/**
 * Refreshes the planner's statistics of the queue. The claim statement's good plan (an
 * ordered index probe per endpoint) depends on them; a fresh or fast-growing table, or
 * a server with autovacuum off, would otherwise be planned as if nearly empty and read
 * whole backlogs per claim.
 *
 * A table without a live row is left alone (returns false). Analysed then, a table
 * emptied by retention while its pages are still there would be taken for empty however
 * much it refilled until the next refresh, and with no row to go by the planner may
 * then walk a whole index to find one event (seen in a plan of the claim statement).
 */
export async function refreshQueueStatistics(orm: Orm): Promise<boolean> {
  const [table] = await run<{ has_rows: boolean }>(orm, 'select exists (select 1 from event) as has_rows');
  if (!table?.has_rows) return false;
  await run(orm, 'analyze event');
  return true;
}

/** Gives a claimed delivery back untried (a worker shutting down before sending it). */
export async function releaseLease(orm: Orm, delivery: ClaimedDelivery): Promise<void> {
  await run(orm, 'update event set lease_id = null, locked_until = null where id = $1 and lease_id = $2', [delivery.id, delivery.leaseId]);
}

/**
 * Gives a claimed delivery back untried, due again at `dueAt` (its transformation found no
 * free thread in time): no attempt is counted, and the lease cannot run out meanwhile.
 */
export async function deferDelivery(orm: Orm, delivery: Pick<ClaimedDelivery, 'id' | 'leaseId'>, dueAt: Date): Promise<void> {
  await run(orm, 'update event set lease_id = null, locked_until = null, next_attempt_at = $3 where id = $1 and lease_id = $2', [delivery.id, delivery.leaseId, dueAt]);
}

/**
 * A receiver answered 410 Gone: the endpoint stops receiving (DESIGN.md §3). The same
 * statement queues the account's `endpoint.disabled` notification, once (only the
 * statement that changed the status does). A notifications endpoint answering 410 is
 * disabled too, but notifies nobody: its account just stops getting notifications until
 * the URL is set again.
 */
export async function disableEndpoint(orm: Orm, endpointId: string): Promise<void> {
  await run(orm, `
    with disabled as (
      update endpoint set status = 'disabled', updated_at = now() where id = $1 and status <> 'disabled'
      returning id, account_id, kind, updated_at
    )
    insert into notification_outbox (account_id, type, data)
    select account_id, 'endpoint.disabled', jsonb_build_object(
             'endpoint_id', id, 'reason', 'gone_410',
             'disabled_at', to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
    from disabled where kind = 'user'`, [endpointId]);
}

/**
 * Makes an endpoint's undelivered events due, in arrival order, after it gained a URL
 * destination (events that waited for `hook listen` had no due time), and wakes workers.
 */
export async function scheduleUndelivered(orm: Orm, endpointId: string): Promise<number> {
  const rows = await run<{ n: number }>(orm, `
    with scheduled as (
      update event set next_attempt_at = received_at
      where endpoint_id = $1 and status in ('pending', 'retrying') and next_attempt_at is null
      returning 1
    )
    select count(*)::int as n, pg_notify($2, '') from scheduled`, [endpointId, DUE_CHANNEL]);
  return rows[0]!.n;
}

/** Wakes idle workers now (after an endpoint resumes, say). */
export async function notifyDue(orm: Orm): Promise<void> {
  await run(orm, 'select pg_notify($1, \'\')', [DUE_CHANNEL]);
}

export interface ReplayFilter {
  accountId: string;
  endpointId?: string;
  status?: EventStatus;
  since?: Date;
  until?: Date;
  /** Most events one request replays. */
  max: number;
}

/**
 * Queues many events for one immediate attempt each (trigger replay), oldest first,
 * and wakes the workers. Only events of live URL endpoints qualify, and not one whose
 * delivery is running right now (its result would clear the request). Returns how many.
 */
export async function requestReplay(orm: Orm, filter: ReplayFilter): Promise<number> {
  const rows = await run<{ n: number }>(orm, `
    with picked as (
      select e.id from event e join endpoint p on p.id = e.endpoint_id
      where e.account_id = $1 and p.destination_type = 'url' and p.deleted_at is null
        and p.kind = 'user' -- account notifications are replayed one by one (docs/notifications.md)
        and (e.lease_id is null or e.locked_until < now()) -- one being delivered now is not queued again
        and ($2::text is null or e.endpoint_id = $2)
        and ($3::text is null or e.status = $3)
        and ($4::timestamptz is null or e.received_at >= $4)
        and ($5::timestamptz is null or e.received_at < $5)
      order by e.id
      limit $6
    ),
    queued as (
      update event e set next_trigger = 'replay', next_attempt_at = now()
      from picked where e.id = picked.id
      returning 1
    )
    select count(*)::int as n, pg_notify($7, '') from queued`,
    [filter.accountId, filter.endpointId ?? null, filter.status ?? null, filter.since ?? null, filter.until ?? null, filter.max, DUE_CHANNEL]);
  return rows[0]!.n;
}
