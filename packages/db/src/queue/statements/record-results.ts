/**
 * The one statement that records what became of deliveries, whatever made them (a
 * worker, a replay, a `hook listen` session) and whatever came of them (an answer, an
 * error, a filter that skipped it). Many results in one statement (AttemptRecorder's
 * group commit):
 *
 * - each delivery moves on only if it still holds its lease (one that ran past its lease
 *   must not overwrite the newer owner's result); its attempt is recorded either way,
 *   since it happened. A late answer (lease '': nobody held the delivery when it was
 *   read) moves it only if no attempt moved it since;
 * - nothing of the event row (its status is its deliveries', read with it:
 *   event-summaries.ts), unless a transformation set the event's type;
 * - a delivery that an automatic attempt left failed spent its last retry (the lease
 *   kept anyone else from moving it meanwhile), so its `event.failed` notification is
 *   queued here: exactly one per failure, committed with it (not for the account's own
 *   notifications endpoint, so a failing notification URL cannot feed itself);
 * - the destination's health: failures in a row and since when, reset by a 2xx. A
 *   destination that comes back (a 2xx after failures) has its other retrying
 *   deliveries made due now; its capacity in the claim paces them. One that answered
 *   410, or failed DESTINATION_FAILURE_LIMIT.attempts in a row over at least its span,
 *   is disabled with a `destination.disabled` notification; an endpoint whose every
 *   destination is disabled is disabled too, with one `endpoint.disabled` notification
 *   instead. Destinations are locked (in id order) only when something about their
 *   health changes, so the healthy path takes no lock beyond its deliveries.
 * - each failed attempt of a user endpoint to a URL or broker destination (not `cli`, not
 *   the account's notifications endpoint) is grouped into its issue (docs/issues.md), one
 *   per account, destination and kind of failure (core's failureKind, stored with the
 *   attempt): opened, counted, or reopened if it was resolved, with the event it covers in
 *   `issue_event`. An issue opened or reopened queues `issue.opened`/`issue.reopened`
 *   unless it alerted within ISSUE_ALERT_THROTTLE_MS. Only a batch with a failure takes
 *   these steps (`grouped`, like `typed`): the healthy path runs the statement it ran before.
 *
 * On a PostgreSQL distributed by account (`distributed`: HOOK_DATABASE_DISTRIBUTED=citus,
 * docs/scaling.md) the results are one statement per account, run concurrently, each pinned
 * to its account (its last parameter): every table of every CTE and subquery is filtered by it and every
 * row written takes it, so Citus routes the statement to that account's shard
 * (test/e2e/shard-routing.test.ts checks it). On one PostgreSQL several accounts' results
 * stay one statement, which costs less than one per account.
 */
import { DESTINATION_FAILURE_LIMIT, ISSUE_ALERT_THROTTLE_MS, ISSUE_KINDS, issueTitle, type EventStatus } from '@hook/core';
import type { Orm } from '../../orm.ts';
import { runStatement, type NamedStatement } from '../executor.ts';
import { DUE_CHANNEL, type DeliveryResult } from '../types.ts';
import { DELIVERY_OPEN } from './claimed-columns.ts';
import { columnList } from './columns.ts';

/** What a receiver's answer says about its destination: `ok` (2xx), `failed`, or null (nothing reached it). */
export type DestinationHealth = 'ok' | 'failed' | null;

export interface RecordInput extends DeliveryResult {
  health: DestinationHealth;
}

/**
 * The results, one array parameter per column (columns.ts), unnested as the statement's
 * `input`; `kinds` is each result's kind of failure (null: none), worked out by
 * recordBatch. A column here is a column of `input` and a parameter, nothing more to add.
 */
export const RECORD_INPUT = columnList<RecordInput, readonly (string | null)[]>([
  ['event_id', 'text', (r) => r.delivery.id],
  ['destination_id', 'text', (r) => r.delivery.destinationId],
  ['lease_id', 'text', (r) => r.delivery.leaseId],
  ['status', 'text', (r) => r.next.status],
  ['auto_attempts', 'int', (r) => r.next.autoAttempts],
  ['next_attempt_at', 'timestamptz', (r) => r.next.nextAttemptAt],
  ['attempt_id', 'text', (r) => r.attempt?.id ?? null],
  ['account_id', 'text', (r) => r.delivery.accountId],
  ['n', 'int', (r) => r.delivery.attemptCount + 1],
  ['trigger', 'text', (r) => r.delivery.trigger],
  ['started_at', 'timestamptz', (r) => r.attempt?.startedAt ?? new Date()],
  ['duration_ms', 'int', (r) => Math.round(r.attempt?.durationMs ?? 0)],
  ['response_status', 'int', (r) => r.attempt?.responseStatus ?? null],
  ['response_body', 'text', (r) => r.attempt?.responseBody ?? null],
  ['error', 'text', (r) => r.attempt?.error ?? null],
  ['set_type', 'bool', (r) => r.newType !== undefined],
  ['new_type', 'text', (r) => r.newType?.type ?? null],
  ['health', 'text', (r) => r.health],
  ['retention_class', 'int', (r) => r.delivery.retentionClass],
  ['failure_kind', 'text', (_, i, kinds) => kinds[i]],
  ['request_headers', 'jsonb', (r) => jsonOrNull(r.attempt?.requestHeaders)],
  ['response_headers', 'jsonb', (r) => jsonOrNull(r.attempt?.responseHeaders)],
  ['request_body', 'bytea', (r) => r.attempt?.requestBody ?? null],
]);

/** The statement's scalar parameters, after the columns': the failure limit, the channel that wakes workers, and (distributed) the account. */
const FAILURE_ATTEMPTS = `$${RECORD_INPUT.next}`;
const FAILURE_SPAN_MS = `$${RECORD_INPUT.next + 1}`;
const WAKE_CHANNEL = `$${RECORD_INPUT.next + 2}`;
const ACCOUNT = `$${RECORD_INPUT.next + 3}`;

const sqlText = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/**
 * An issue's title in SQL (core's issueTitle): of its kind, and for a 1xx or 3xx answer
 * its status (issueTitle's words around it, read from a sentinel status).
 */
function titleSql(kind: string, status: string): string {
  const [before, after] = issueTitle('http_other', -7).split('-7') as [string, string];
  return `case when ${kind} = 'http_other' and ${status} is not null then ${sqlText(before)} || ${status}::text || ${sqlText(after)}
               else case ${kind} ${ISSUE_KINDS.map((kind) => `when '${kind}' then ${sqlText(issueTitle(kind))}`).join(' ')} end end`;
}

/**
 * The statement; `distributed`: of one account's results, pinned to it (see above);
 * `typed`: with the step that sets events' types (only a batch with a type a
 * transformation set takes it: an UPDATE of `event` is planned over every one of its
 * partitions, and PostgreSQL sets each up on every run, used or not); `grouped`: with
 * the steps that group failures into issues (only a batch with a failed attempt takes
 * them, so a healthy batch sets up no upsert of `issue` and `issue_event`).
 */
function recordStatement(distributed: boolean, typed: boolean, grouped: boolean): NamedStatement {
  const pin = (alias: string) => (distributed ? ` and ${alias}.account_id = ${ACCOUNT}::text` : '');
  const accountOf = (column: string) => (distributed ? `${ACCOUNT}::text` : column);
  // A transport failure of a broker (what failureKind calls network_error without knowing the destination) is the broker's.
  const kindOf = (kind: string, type: string) => `case when ${kind} = 'network_error' and ${type} not in ('url', 'cli') then 'broker_error' else ${kind} end`;
  return {
    movesDeliveries: true,
    name: `hook_record_results${distributed ? '_account' : ''}${typed ? '_typed' : ''}${grouped ? '_issues' : ''}`,
    text: `
    with input as (
      select * from ${RECORD_INPUT.unnest}
        as t(${RECORD_INPUT.names})
    ),
    updated as (
      update delivery l
      set status = i.status, auto_attempts = i.auto_attempts, next_attempt_at = i.next_attempt_at,
          attempt_count = l.attempt_count + (i.attempt_id is not null)::int, next_trigger = 'auto', lease_id = null, locked_until = null
      from input i
      -- each by primary key, however small the table was when this was planned (the
      -- coalesce keeps delivery_leased_idx out of it: a walk of every lease, and of every
      -- dead entry the leases left since the last vacuum)
      where l.event_id = any(${RECORD_INPUT.param('event_id')}::text[]) and l.event_id = i.event_id and l.destination_id = i.destination_id and ${DELIVERY_OPEN}
        and coalesce(l.lease_id, '') = i.lease_id${pin('l')}
        -- a result held by no lease (a late answer, recordLateAnswer) moves only a delivery no attempt moved since it was read
        and (i.lease_id <> '' or l.attempt_count = i.n - 1)
      returning l.event_id, l.destination_id, l.endpoint_id, l.account_id, l.status, l.next_attempt_at, l.attempt_count,
                i.trigger, i.response_status, i.error, i.health, i.started_at, i.attempt_id is not null as attempted, i.set_type, i.new_type,
                i.lease_id, l.retention_class
    ),
${typed ? `
    typed as (
      update event e set type = u.new_type
      from (select event_id, (array_agg(new_type))[1] as new_type from updated where set_type group by event_id) u
      where e.id = u.event_id${pin('e')}
    ),` : ''}
    attempts as (
      -- in its event's partition: the class its delivery has now (partitions.ts), or, for
      -- a result that lost its lease, the class it had when claimed
      insert into attempt (id, event_id, destination_id, account_id, n, trigger, started_at, duration_ms, response_status, response_body, error, retention_class,
                           failure_kind, request_headers, response_headers, request_body)
      select i.attempt_id, i.event_id, i.destination_id, ${accountOf('i.account_id')}, i.n, i.trigger, i.started_at, i.duration_ms, i.response_status, i.response_body, i.error,
             coalesce(u.retention_class, i.retention_class),
             ${grouped ? `coalesce((select ${kindOf('i.failure_kind', 'q.type')} from destination q where q.id = i.destination_id${pin('q')}), i.failure_kind)` : 'i.failure_kind'},
             i.request_headers, i.response_headers, i.request_body
      from input i left join updated u on u.event_id = i.event_id and u.destination_id = i.destination_id and u.lease_id = i.lease_id
      where i.attempt_id is not null
    ),${grouped ? issueSteps(pin, accountOf, kindOf) : ''}
    failure_notices as (
      insert into notification_outbox (account_id, type, data)
      select ${accountOf('u.account_id')}, 'event.failed', jsonb_strip_nulls(jsonb_build_object(
               'event_id', u.event_id, 'endpoint_id', u.endpoint_id, 'destination_id', u.destination_id, 'attempts', u.attempt_count,
               'last_status', u.response_status, 'last_error', u.error))
      from updated u join endpoint p on p.id = u.endpoint_id${pin('p')}
      where u.trigger in ('auto', 'listen') and u.status = 'failed' and u.attempted and p.kind = 'user'
    ),
    health_input as (
      select destination_id, bool_or(health = 'ok') as any_ok, count(*) filter (where health = 'failed') as failures,
             min(started_at) filter (where health = 'failed') as first_failure_at, bool_or(response_status = 410) as gone
      from updated where health is not null group by destination_id
    ),
    health_locked as materialized (
      select d.id, d.account_id, d.endpoint_id, d.status, d.consecutive_failures, d.failing_since,
             h.any_ok, h.failures, h.first_failure_at, h.gone
      from destination d join health_input h on h.destination_id = d.id${pin('d')}
      where h.failures > 0 or h.gone or d.consecutive_failures > 0
      order by d.id
      for update of d
    ),
    health_next as materialized (
      select n.*,
             case when n.any_ok then 0 else n.consecutive_failures + n.failures end as failures_after,
             case when n.any_ok then null else coalesce(n.failing_since, n.first_failure_at) end as failing_since_after,
             case when n.status = 'disabled' then null
                  when n.gone then 'gone_410'
                  when not n.any_ok and n.consecutive_failures + n.failures >= ${FAILURE_ATTEMPTS}
                       and coalesce(n.failing_since, n.first_failure_at) <= now() - make_interval(secs => ${FAILURE_SPAN_MS}::double precision / 1000)
                  then 'failing' end as disable_reason
      from health_locked n
    ),
    health as (
      update destination d
      set consecutive_failures = n.failures_after, failing_since = n.failing_since_after,
          status = case when n.disable_reason is not null then 'disabled' else d.status end,
          disabled_reason = coalesce(n.disable_reason, d.disabled_reason),
          updated_at = case when n.disable_reason is not null then now() else d.updated_at end
      from health_next n where d.id = n.id${pin('d')}
    ),
    recovered as (
      update delivery l set next_attempt_at = now()
      from health_next n
      where n.any_ok and n.consecutive_failures > 0 and l.destination_id = n.id
        and l.status = 'retrying' and l.next_attempt_at > now() and l.lease_id is null and ${DELIVERY_OPEN}${pin('l')}
      returning 1
    ),
    endpoints_disabled as (
      update endpoint p set status = 'disabled', updated_at = now()
      from (select endpoint_id, min(disable_reason) as reason from health_next where disable_reason is not null group by endpoint_id) x
      where p.id = x.endpoint_id and p.status <> 'disabled'${pin('p')}
        and not exists (select 1 from destination o
                        where o.endpoint_id = p.id and o.deleted_at is null and o.status <> 'disabled'${pin('o')}
                          and o.id not in (select id from health_next where disable_reason is not null))
      returning p.id, p.account_id, p.kind, x.reason
    ),
    endpoint_notices as (
      insert into notification_outbox (account_id, type, data)
      select ${accountOf('account_id')}, 'endpoint.disabled', jsonb_build_object(
               'endpoint_id', id, 'reason', reason,
               'disabled_at', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
      from endpoints_disabled where kind = 'user'
    ),
    destination_notices as (
      insert into notification_outbox (account_id, type, data)
      select ${accountOf('n.account_id')}, 'destination.disabled', jsonb_build_object(
               'endpoint_id', n.endpoint_id, 'destination_id', n.id, 'reason', n.disable_reason,
               'consecutive_failures', n.failures_after,
               'disabled_at', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
      from health_next n join endpoint p on p.id = n.endpoint_id${pin('p')}
      where n.disable_reason is not null and p.kind = 'user'
        and n.endpoint_id not in (select id from endpoints_disabled) -- that endpoint's own notification says it
    ),
    woken as (
      select pg_notify(${WAKE_CHANNEL}, '') from (select 1 from recovered limit 1) as due
    )
    select 'held' as kind, u.event_id as id, u.destination_id, u.lease_id, u.status as event_status
    from updated u
    union all
    select 'endpoint_disabled', id, null, null, null from endpoints_disabled
    union all
    select 'woken', null, null, null, null from woken`,
  };
}

/**
 * The steps that group failed attempts into issues (see above), between the attempts and
 * the failure notices:
 * - `failed`: the batch's failed attempts that make issues, with their destination's
 *   endpoint and their kind (a broker's transport failure is a broker_error);
 * - `failure_groups`: one row per issue (an upsert may touch a row once per statement),
 *   with its events not yet covered, its first attempt (whose ULID a new issue takes, so
 *   its id needs no generator here) and its last failure;
 * - `issues_upserted`: opened, counted, or reopened; an issue opened or reopened whose
 *   last alert is older than ISSUE_ALERT_THROTTLE_MS (or that never alerted) alerts now:
 *   `last_alerted_at = now()` is what the RETURNING reads as "alert" (now() is this
 *   statement's transaction's start: no earlier alert can equal it); inserted in a stable
 *   order, so two statements upserting the same issues wait rather than deadlock;
 * - `issue_events`: the events covered, with their last failure;
 * - `issue_notices`: the alerts.
 */
function issueSteps(pin: (alias: string) => string, accountOf: (column: string) => string, kindOf: (kind: string, type: string) => string): string {
  return `
    failed as materialized (
      select i.event_id, i.destination_id, d.endpoint_id, ${accountOf('d.account_id')} as account_id, i.attempt_id,
             ${kindOf('i.failure_kind', 'd.type')} as kind, i.started_at, i.response_status, i.error
      -- each destination and endpoint by its key, however small the tables were when this was planned
      from input i join destination d on d.id = i.destination_id and d.id = any(${RECORD_INPUT.param('destination_id')}::text[])${pin('d')}
      where i.failure_kind is not null and i.attempt_id is not null and d.type <> 'cli'
        and (select p.kind from endpoint p where p.id = d.endpoint_id${pin('p')}) = 'user'
    ),
    failure_groups as (
      select f.account_id, f.destination_id, f.kind, min(f.endpoint_id) as endpoint_id, count(*) as failures,
             min(f.started_at) as first_at, max(f.started_at) as last_at, min(f.attempt_id) as first_attempt_id,
             -- a count, not an EXISTS: kept a subplan run per failure (by key), never made a join over the tables
             count(distinct f.event_id) filter (where (
               select count(*) from issue s join issue_event ie on ie.issue_id = s.id and ie.event_id = f.event_id${pin('ie')}
               where s.account_id = f.account_id and s.destination_id = f.destination_id and s.kind = f.kind${pin('s')}) = 0) as new_events,
             (array_agg(f.response_status order by f.started_at desc, f.attempt_id desc))[1] as last_status,
             (array_agg(f.error order by f.started_at desc, f.attempt_id desc))[1] as last_error,
             (array_agg(f.event_id order by f.started_at desc, f.attempt_id desc))[1] as last_event_id
      from failed f group by f.account_id, f.destination_id, f.kind
    ),
    issues_upserted as (
      insert into issue as s (id, account_id, endpoint_id, destination_id, kind, status, first_seen_at, last_seen_at, opened_at,
                              failure_count, event_count, last_status, last_error, last_event_id, last_alerted_at)
      select 'iss_' || substr(g.first_attempt_id, 5), ${accountOf('g.account_id')}, g.endpoint_id, g.destination_id, g.kind, 'open', g.first_at, g.last_at, now(),
             g.failures, g.new_events, g.last_status, g.last_error, g.last_event_id, now()
      from failure_groups g
      order by g.account_id, g.destination_id, g.kind
      on conflict (account_id, destination_id, kind) do update set
        endpoint_id = excluded.endpoint_id,
        failure_count = s.failure_count + excluded.failure_count,
        event_count = s.event_count + excluded.event_count,
        last_seen_at = greatest(s.last_seen_at, excluded.last_seen_at),
        last_status = excluded.last_status, last_error = excluded.last_error, last_event_id = excluded.last_event_id,
        status = case when s.status = 'resolved' then 'open' else s.status end,
        reopen_count = s.reopen_count + (s.status = 'resolved')::int,
        opened_at = case when s.status = 'resolved' then now() else s.opened_at end,
        acknowledged_at = case when s.status = 'resolved' then null else s.acknowledged_at end,
        resolved_at = case when s.status = 'resolved' then null else s.resolved_at end,
        resolved_by = case when s.status = 'resolved' then null else s.resolved_by end,
        last_alerted_at = case when s.status = 'resolved'
                                    and (s.last_alerted_at is null or s.last_alerted_at <= now() - make_interval(secs => ${ISSUE_ALERT_THROTTLE_MS / 1000}))
                               then now() else s.last_alerted_at end
      returning s.id, s.account_id, s.endpoint_id, s.destination_id, s.kind, s.failure_count, s.last_status, s.last_error, s.last_event_id,
                s.xmax = 0 as inserted, s.last_alerted_at = now() as alert
    ),
    issue_events as (
      insert into issue_event as ie (issue_id, event_id, account_id, first_failed_at, last_failed_at, last_status, last_error)
      select s.id, f.event_id, ${accountOf('s.account_id')}, min(f.started_at), max(f.started_at),
             (array_agg(f.response_status order by f.started_at desc, f.attempt_id desc))[1],
             (array_agg(f.error order by f.started_at desc, f.attempt_id desc))[1]
      from failed f join issues_upserted s on s.account_id = f.account_id and s.destination_id = f.destination_id and s.kind = f.kind
      group by s.id, f.event_id, s.account_id
      order by s.id, f.event_id
      on conflict (issue_id, event_id) do update set
        last_failed_at = greatest(ie.last_failed_at, excluded.last_failed_at), last_status = excluded.last_status, last_error = excluded.last_error
    ),
    issue_notices as (
      insert into notification_outbox (account_id, type, data)
      select ${accountOf('s.account_id')}, case when s.inserted then 'issue.opened' else 'issue.reopened' end, jsonb_strip_nulls(jsonb_build_object(
               'issue_id', s.id, 'endpoint_id', s.endpoint_id, 'destination_id', s.destination_id, 'kind', s.kind,
               'title', ${titleSql('s.kind', 's.last_status')}, 'event_id', s.last_event_id,
               'last_status', s.last_status, 'last_error', s.last_error, 'failure_count', s.failure_count))
      from issues_upserted s where s.alert
    ),`;
}

export const RECORD_RESULTS = recordStatement(false, false, false);
/** RECORD_RESULTS with the step that sets events' types (see recordStatement). */
export const RECORD_TYPED_RESULTS = recordStatement(false, true, false);
/** RECORD_RESULTS with the steps that group failures into issues (see recordStatement). */
export const RECORD_GROUPED_RESULTS = recordStatement(false, false, true);
export const RECORD_TYPED_GROUPED_RESULTS = recordStatement(false, true, true);
/** RECORD_RESULTS for one account's results (distributed, see above), without and with types and issues. */
export const RECORD_ACCOUNT_RESULTS = recordStatement(true, false, false);
export const RECORD_ACCOUNT_TYPED_RESULTS = recordStatement(true, true, false);
export const RECORD_ACCOUNT_GROUPED_RESULTS = recordStatement(true, false, true);
export const RECORD_ACCOUNT_TYPED_GROUPED_RESULTS = recordStatement(true, true, true);

const STATEMENTS = {
  single: [[RECORD_RESULTS, RECORD_GROUPED_RESULTS], [RECORD_TYPED_RESULTS, RECORD_TYPED_GROUPED_RESULTS]],
  account: [[RECORD_ACCOUNT_RESULTS, RECORD_ACCOUNT_GROUPED_RESULTS], [RECORD_ACCOUNT_TYPED_RESULTS, RECORD_ACCOUNT_TYPED_GROUPED_RESULTS]],
} as const;

/** What one record statement came to. */
export interface RecordOutcome {
  /** Per input, in order: whether it held its lease, and its delivery's status after (null when it did not hold). */
  results: { held: boolean; eventStatus: EventStatus | null; deliveryCount: number }[];
  /** Endpoints this statement disabled (every destination disabled). */
  disabledEndpoints: string[];
}

export interface RecordOptions {
  /** The database is distributed by account (HOOK_DATABASE_DISTRIBUTED): one statement per account, routed to its shard (see above). */
  distributed?: boolean;
}

/**
 * Records results (see above). Distributed, each account's results are a statement and a
 * commit of their own: if one fails, others may be recorded (AttemptRecorder hands one
 * account's results at a time when distributed).
 */
export async function recordResults(orm: Orm, inputs: readonly RecordInput[], options: RecordOptions = {}): Promise<RecordOutcome> {
  if (!options.distributed) return recordBatch(orm, null, inputs);
  const outcomes = await Promise.all([...Map.groupBy(inputs, (input) => input.delivery.accountId)].map(async ([accountId, own]) => ({ own, outcome: await recordBatch(orm, accountId, own) })));
  const results = new Map<RecordInput, RecordOutcome['results'][number]>();
  for (const { own, outcome } of outcomes) own.forEach((input, i) => results.set(input, outcome.results[i]!));
  return { results: inputs.map((input) => results.get(input)!), disabledEndpoints: outcomes.flatMap(({ outcome }) => outcome.disabledEndpoints) };
}

/** recordResults of results all of `account` (distributed), or of any accounts (null). */
async function recordBatch(orm: Orm, account: string | null, inputs: readonly RecordInput[]): Promise<RecordOutcome> {
  const typed = inputs.some((input) => input.newType !== undefined);
  // the caller's kind, else the one its answer or error says
  const kinds = inputs.map(({ attempt }) => attempt?.failureKind ?? null);
  const statement = STATEMENTS[account === null ? 'single' : 'account'][typed ? 1 : 0][kinds.some((kind) => kind !== null) ? 1 : 0];
  const rows = await runStatement<{ kind: 'held' | 'endpoint_disabled' | 'woken'; id: string | null; destination_id: string | null; lease_id: string | null; event_status: EventStatus | null }>(
    orm, statement, [
      ...RECORD_INPUT.params(inputs, kinds),
      DESTINATION_FAILURE_LIMIT.attempts, DESTINATION_FAILURE_LIMIT.spanMs, DUE_CHANNEL,
      ...(account === null ? [] : [account]),
    ]);
  const held = new Map<string, EventStatus>();
  const disabledEndpoints: string[] = [];
  for (const row of rows) {
    // By lease too: one batch may hold two results for a delivery (a late answer beside the new owner's), of which one held.
    if (row.kind === 'held') held.set(`${row.id}|${row.destination_id}|${row.lease_id}`, row.event_status!);
    else if (row.kind === 'endpoint_disabled') disabledEndpoints.push(row.id!);
  }
  return {
    results: inputs.map((input) => {
      const status = held.get(`${input.delivery.id}|${input.delivery.destinationId}|${input.delivery.leaseId}`);
      return { held: status !== undefined, eventStatus: status ?? null, deliveryCount: input.delivery.deliveryCount };
    }),
    disabledEndpoints,
  };
}

/**
 * A jsonb array element: the object's JSON text, or null. The headers come bounded by
 * core's boundHeaders (apps/relay's exchangeOf), which already made them text jsonb can
 * hold (no NUL, no lone surrogate): nothing is left to clean here, on every attempt.
 */
function jsonOrNull(value: Record<string, string> | null | undefined): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
