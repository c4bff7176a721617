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
 *   instead (as before destinations). Destinations are locked (in id order) only when something about their
 *   health changes, so the healthy path takes no lock beyond its deliveries.
 *
 * On a PostgreSQL distributed by account (`distributed`: HOOK_DATABASE_DISTRIBUTED=citus,
 * docs/scaling.md) the results are one statement per account, run concurrently, each pinned
 * to its account ($23): every table of every CTE and subquery is filtered by it and every
 * row written takes it, so Citus routes the statement to that account's shard
 * (test/e2e/shard-routing.test.ts checks it). On one PostgreSQL several accounts' results
 * stay one statement, which costs less than one per account.
 */
import { DESTINATION_FAILURE_LIMIT, type EventStatus } from '@hook/core';
import type { Orm } from '../../orm.ts';
import { runStatement, type NamedStatement } from '../executor.ts';
import { DUE_CHANNEL, type DeliveryResult } from '../types.ts';
import { DELIVERY_OPEN } from './claimed-columns.ts';

/** What a receiver's answer says about its destination: `ok` (2xx), `failed`, or null (nothing reached it). */
export type DestinationHealth = 'ok' | 'failed' | null;

export interface RecordInput extends DeliveryResult {
  health: DestinationHealth;
}

/**
 * The statement; `distributed`: of one account's results, pinned to it (see above);
 * `typed`: with the step that sets events' types (only a batch with a type a
 * transformation set takes it: an UPDATE of `event` is planned over every one of its
 * partitions, and PostgreSQL sets each up on every run, used or not).
 */
function recordStatement(distributed: boolean, typed: boolean): NamedStatement {
  const pin = (alias: string) => (distributed ? ` and ${alias}.account_id = $23::text` : '');
  const accountOf = (column: string) => (distributed ? '$23::text' : column);
  return {
    movesDeliveries: true,
    name: `hook_record_results${distributed ? '_account' : ''}${typed ? '_typed' : ''}`,
    text: `
    with input as (
      select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::timestamptz[], $7::text[], $8::text[],
                           $9::int[], $10::text[], $11::timestamptz[], $12::int[], $13::int[], $14::text[], $15::text[],
                           $16::bool[], $17::text[], $18::text[], $22::int[])
        as t(event_id, destination_id, lease_id, status, auto_attempts, next_attempt_at, attempt_id, account_id,
             n, trigger, started_at, duration_ms, response_status, response_body, error, set_type, new_type, health, retention_class)
    ),
    updated as (
      update delivery l
      set status = i.status, auto_attempts = i.auto_attempts, next_attempt_at = i.next_attempt_at,
          attempt_count = l.attempt_count + (i.attempt_id is not null)::int, next_trigger = 'auto', lease_id = null, locked_until = null
      from input i
      -- each by primary key, however small the table was when this was planned (the
      -- coalesce keeps delivery_leased_idx out of it: a walk of every lease, and of every
      -- dead entry the leases left since the last vacuum)
      where l.event_id = any($1::text[]) and l.event_id = i.event_id and l.destination_id = i.destination_id and ${DELIVERY_OPEN}
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
      insert into attempt (id, event_id, destination_id, account_id, n, trigger, started_at, duration_ms, response_status, response_body, error, retention_class)
      select i.attempt_id, i.event_id, i.destination_id, ${accountOf('i.account_id')}, i.n, i.trigger, i.started_at, i.duration_ms, i.response_status, i.response_body, i.error,
             coalesce(u.retention_class, i.retention_class)
      from input i left join updated u on u.event_id = i.event_id and u.destination_id = i.destination_id and u.lease_id = i.lease_id
      where i.attempt_id is not null
    ),
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
                  when not n.any_ok and n.consecutive_failures + n.failures >= $19
                       and coalesce(n.failing_since, n.first_failure_at) <= now() - make_interval(secs => $20::double precision / 1000)
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
      select pg_notify($21, '') from (select 1 from recovered limit 1) as due
    )
    select 'held' as kind, u.event_id as id, u.destination_id, u.lease_id, u.status as event_status
    from updated u
    union all
    select 'endpoint_disabled', id, null, null, null from endpoints_disabled
    union all
    select 'woken', null, null, null, null from woken`,
  };
}

export const RECORD_RESULTS = recordStatement(false, false);
/** RECORD_RESULTS with the step that sets events' types (see recordStatement). */
export const RECORD_TYPED_RESULTS = recordStatement(false, true);
/** RECORD_RESULTS for one account's results (distributed, see above), without and with types. */
export const RECORD_ACCOUNT_RESULTS = recordStatement(true, false);
export const RECORD_ACCOUNT_TYPED_RESULTS = recordStatement(true, true);

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
  const column = <T>(pick: (input: RecordInput) => T): T[] => inputs.map(pick);
  const typed = inputs.some((input) => input.newType !== undefined);
  const statement = account === null ? (typed ? RECORD_TYPED_RESULTS : RECORD_RESULTS) : (typed ? RECORD_ACCOUNT_TYPED_RESULTS : RECORD_ACCOUNT_RESULTS);
  const rows = await runStatement<{ kind: 'held' | 'endpoint_disabled' | 'woken'; id: string | null; destination_id: string | null; lease_id: string | null; event_status: EventStatus | null }>(
    orm, statement, [
      column((r) => r.delivery.id), column((r) => r.delivery.destinationId), column((r) => r.delivery.leaseId),
      column((r) => r.next.status), column((r) => r.next.autoAttempts), column((r) => r.next.nextAttemptAt),
      column((r) => r.attempt?.id ?? null), column((r) => r.delivery.accountId), column((r) => r.delivery.attemptCount + 1),
      column((r) => r.delivery.trigger), column((r) => r.attempt?.startedAt ?? new Date()), column((r) => Math.round(r.attempt?.durationMs ?? 0)),
      column((r) => r.attempt?.responseStatus ?? null), column((r) => r.attempt?.responseBody ?? null), column((r) => r.attempt?.error ?? null),
      column((r) => r.newType !== undefined), column((r) => r.newType?.type ?? null), column((r) => r.health),
      DESTINATION_FAILURE_LIMIT.attempts, DESTINATION_FAILURE_LIMIT.spanMs, DUE_CHANNEL, column((r) => r.delivery.retentionClass),
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
