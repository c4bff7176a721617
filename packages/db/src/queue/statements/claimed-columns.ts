/**
 * What every claim returns for a delivery, and how a returned row becomes a
 * ClaimedDelivery. The destination's transformation code and filter come with the claim:
 * null columns cost next to nothing for destinations without them, and a claim never
 * runs stale code.
 */
import type { AttemptTrigger, DestinationType, EndpointFilter, EventStatus, OrderingSettings, QueueTarget } from '@hook/core';
import { destinationAuthOf, destinationTlsOf, openCredentials } from '../../destination-credentials.ts';
import type { StoredAuth, StoredTls } from '../../entities/destination.ts';
import type { Orm } from '../../orm.ts';
import { openSigningSecrets } from '../../signing-secrets.ts';
import type { ClaimedDelivery, DeliveryOptions } from '../types.ts';

/**
 * Whether destination `d` (of endpoint `p`) takes deliveries now: it and its endpoint
 * active, neither deleted. Both claims, the workers' and a `hook listen` session's, take
 * deliveries only of an open destination; the others' (paused, disabled) stay where they
 * are, due, until it is active again (docs/delivery.md#when-an-event-is-sent).
 */
export const DESTINATION_OPEN = `d.status = 'active' and d.deleted_at is null and p.status = 'active' and p.deleted_at is null`;

/**
 * Delivery `l` is open (pending, retrying, or a replay asked for) and stored since
 * `delivery` was partitioned: a row of delivery_open, the queue (migration 021). Written
 * as `delivery`'s partition keys are, IS TRUE included, so that the planner reads that one
 * partition and none of the history's; every statement that works the queue says it.
 */
export const DELIVERY_OPEN = `l.layout = 1 and (l.status in ('pending', 'retrying') or l.next_trigger = 'replay') is true`;

/** DELIVERY_OPEN for a delivery under another alias than `l` (a second delivery a statement looks at). */
export function deliveryOpen(alias: string): string {
  return DELIVERY_OPEN.replaceAll('l.', `${alias}.`);
}

/**
 * Delivery `l` is free to take: it has no lease, or its lease ran out (whoever held it
 * died or lost it). Every statement that takes a delivery or queues it again asks this (the
 * claims, a replay, a destination made due, ordering's next in turn), and so does the
 * readiness probe's count of what is due: one under a live lease has an attempt running,
 * whose result would undo what the statement did.
 */
export const LEASE_FREE = '(l.lease_id is null or l.locked_until < now())';

/**
 * The destinations an event gets a delivery to: every destination of its endpoint that is
 * not deleted, whatever its status (a paused or disabled one's deliveries wait for it,
 * DESTINATION_OPEN). A condition on destination `d`; `event`: the alias of a row with the
 * event's `endpoint_id`. Ingest (insert-events.ts) and account notifications
 * (notifications.ts) both store events' deliveries and count them by it.
 */
export function destinationOfEvent(event: string): string {
  return `d.endpoint_id = ${event}.endpoint_id and d.deleted_at is null`;
}

/**
 * The delivery's side of a claim's select list: `l` the delivery, `d` its destination, `p`
 * its endpoint, and of its event `e` only how many deliveries it has.
 */
export const CLAIMED_DELIVERY_COLUMNS = `l.event_id, l.destination_id, l.account_id, l.endpoint_id, l.status, l.attempt_count, l.auto_attempts,
  l.next_trigger, l.lease_id, l.retention_class, d.type as destination_type, d.url as destination_url, d.secret,
  case when d.previous_secret_expires_at > now() then d.previous_secret end as previous_secret,
  d.transformation_code, d.filter, p.name as endpoint_name,
  d.target as destination_target, d.auth, d.tls, d.credentials, d.ordering, l.ordering_key, e.delivery_count`;

/** The event's side: `e`, the stored request. Ingest's shortcut has it in memory, and leaves it out (insert-events.ts). */
export const CLAIMED_EVENT_COLUMNS = `e.headers, e.body, e.type, e.method, e.path, e.query, e.content_type, e.size, e.received_at, e.trace_parent`;

/** The select list of a claim: `l` the delivery, `e` its event, `d` its destination, `p` its endpoint. */
export const CLAIMED_COLUMNS = `${CLAIMED_DELIVERY_COLUMNS},
  ${CLAIMED_EVENT_COLUMNS}`;

/**
 * The last step of every claim, the workers' and a session's: stamp the deliveries in
 * `due` (a CTE of event_id and destination_id, locked FOR UPDATE SKIP LOCKED) with a
 * lease, `token` + the delivery's key, until `leaseMs` from now, and return what the
 * attempt needs (CLAIMED_COLUMNS). `pin`: more conditions on `l`, `e`, `d` and `p` (a
 * session's claim names its account on each, so it stays routable to one shard);
 * `extraSet`: more assignments (`, column = value`).
 */
export function leaseDue(params: { token: string; leaseMs: string }, pin = '', extraColumns = '', extraSet = ''): string {
  return `
    update delivery l
    set lease_id = ${params.token} || '.' || l.event_id || '.' || l.destination_id,
        locked_until = now() + make_interval(secs => ${params.leaseMs}::double precision / 1000)${extraSet}
    from due, event e, destination d, endpoint p
    where l.event_id = due.event_id and l.destination_id = due.destination_id and ${DELIVERY_OPEN}
      and e.id = l.event_id and d.id = l.destination_id and p.id = l.endpoint_id${pin}
    returning ${CLAIMED_COLUMNS}${extraColumns}`;
}

/** A row of CLAIMED_DELIVERY_COLUMNS. */
export interface ClaimedDeliveryRow {
  event_id: string;
  destination_id: string;
  account_id: string;
  endpoint_id: string;
  status: EventStatus;
  attempt_count: number;
  auto_attempts: number;
  next_trigger: 'auto' | 'replay';
  lease_id: string;
  retention_class: number;
  destination_type: DestinationType;
  destination_url: string | null;
  secret: string;
  previous_secret: string | null;
  transformation_code: string | null;
  filter: EndpointFilter | null;
  endpoint_name: string;
  delivery_count: number;
  destination_target: QueueTarget | null;
  auth: StoredAuth | null;
  tls: StoredTls | null;
  credentials: string | null;
  ordering: OrderingSettings | null;
  ordering_key: string | null;
}

/** A row of CLAIMED_COLUMNS. */
export interface ClaimedRow extends ClaimedDeliveryRow {
  headers: Record<string, string>;
  body: Buffer;
  type: string | null;
  method: string;
  path: string;
  query: string;
  content_type: string | null;
  size: number;
  received_at: string | Date;
  trace_parent: string | null;
}

/** The stored request a claimed delivery carries (CLAIMED_EVENT_COLUMNS). */
export type ClaimedEvent = Pick<ClaimedDelivery, 'headers' | 'body' | 'type' | 'method' | 'path' | 'query' | 'contentType' | 'size' | 'receivedAt' | 'traceParent'>;

/** A claimed row's event side. */
function eventOf(row: ClaimedRow): ClaimedEvent {
  return {
    headers: row.headers,
    body: row.body,
    type: row.type,
    method: row.method,
    path: row.path,
    query: row.query,
    contentType: row.content_type,
    size: row.size,
    // Timestamps arrive as text through the ORM's driver settings.
    receivedAt: new Date(row.received_at),
    traceParent: row.trace_parent,
  };
}

/**
 * A claimed row as a delivery: the only place one is made, whatever claimed it. An
 * automatic attempt for a `cli` destination is a `listen` attempt. `event`: the stored
 * request, when the row has only the delivery's side (ingest's shortcut, which has the
 * event in memory); otherwise it is read from the row.
 */
export function toClaimed(orm: Orm, row: ClaimedDeliveryRow, event: ClaimedEvent = eventOf(row as ClaimedRow)): ClaimedDelivery {
  const trigger: AttemptTrigger = row.next_trigger === 'replay' ? 'replay' : row.destination_type === 'cli' ? 'listen' : 'auto';
  return {
    id: row.event_id,
    destinationId: row.destination_id,
    destinationType: row.destination_type,
    destinationUrl: row.destination_url,
    accountId: row.account_id,
    endpointId: row.endpoint_id,
    headers: event.headers,
    body: event.body,
    type: event.type,
    method: event.method,
    path: event.path,
    query: event.query,
    contentType: event.contentType,
    size: event.size,
    receivedAt: event.receivedAt,
    traceParent: event.traceParent ?? null,
    status: row.status,
    attemptCount: row.attempt_count,
    autoAttempts: row.auto_attempts,
    trigger,
    leaseId: row.lease_id,
    secrets: openSigningSecrets(orm, row.secret, row.previous_secret),
    endpointName: row.endpoint_name,
    transformationCode: row.transformation_code,
    filter: row.filter,
    deliveryCount: row.delivery_count,
    retentionClass: row.retention_class,
    ...destinationOptionsOf(orm, row),
  };
}

/** Claims come back in no set order: hand them out oldest first, so deliveries start in arrival order. */
export function oldestFirst(orm: Orm, rows: ClaimedRow[]): ClaimedDelivery[] {
  rows.sort((a, b) => (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : a.destination_id < b.destination_id ? -1 : 1));
  return rows.map((row) => toClaimed(orm, row));
}

/** A claimed row's destination options: its broker target, its auth and TLS settings opened, its ordering. */
function destinationOptionsOf(orm: Orm, row: ClaimedDeliveryRow): DeliveryOptions {
  const secrets = row.auth === null && row.tls === null ? {} : openCredentials(orm, row.credentials);
  return {
    destinationTarget: row.destination_target,
    auth: destinationAuthOf(row.auth, secrets),
    tls: destinationTlsOf(row.tls, secrets),
    orderingKey: row.ordering_key,
    onGiveUp: row.ordering?.on_give_up ?? null,
  };
}
