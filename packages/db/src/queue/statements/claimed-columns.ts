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

/** The select list of a claim: `l` the delivery, `e` its event, `d` its destination, `p` its endpoint. */
export const CLAIMED_COLUMNS = `l.event_id, l.destination_id, l.account_id, l.endpoint_id, l.status, l.attempt_count, l.auto_attempts,
  l.next_trigger, l.lease_id, l.retention_class, d.type as destination_type, d.url as destination_url, d.secret,
  case when d.previous_secret_expires_at > now() then d.previous_secret end as previous_secret,
  d.transformation_code, d.filter, p.name as endpoint_name,
  d.target as destination_target, d.auth, d.tls, d.credentials, d.ordering, l.ordering_key,
  e.headers, e.body, e.type, e.method, e.path, e.query, e.content_type, e.size, e.received_at, e.delivery_count,
  e.trace_parent`;

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

export interface ClaimedRow {
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
  headers: Record<string, string>;
  body: Buffer;
  type: string | null;
  method: string;
  path: string;
  query: string;
  content_type: string | null;
  size: number;
  received_at: string | Date;
  delivery_count: number;
  trace_parent: string | null;
  destination_target: QueueTarget | null;
  auth: StoredAuth | null;
  tls: StoredTls | null;
  credentials: string | null;
  ordering: OrderingSettings | null;
  ordering_key: string | null;
}

/** A claimed row as a delivery. An automatic attempt for a `cli` destination is a `listen` attempt. */
export function toClaimed(orm: Orm, row: ClaimedRow): ClaimedDelivery {
  const trigger: AttemptTrigger = row.next_trigger === 'replay' ? 'replay' : row.destination_type === 'cli' ? 'listen' : 'auto';
  return {
    id: row.event_id,
    destinationId: row.destination_id,
    destinationType: row.destination_type,
    destinationUrl: row.destination_url,
    accountId: row.account_id,
    endpointId: row.endpoint_id,
    headers: row.headers,
    body: row.body,
    status: row.status,
    attemptCount: row.attempt_count,
    autoAttempts: row.auto_attempts,
    trigger,
    leaseId: row.lease_id,
    secrets: openSigningSecrets(orm, row.secret, row.previous_secret),
    type: row.type,
    method: row.method,
    path: row.path,
    query: row.query,
    contentType: row.content_type,
    size: row.size,
    // Timestamps arrive as text through the ORM's driver settings.
    receivedAt: new Date(row.received_at),
    endpointName: row.endpoint_name,
    transformationCode: row.transformation_code,
    filter: row.filter,
    deliveryCount: row.delivery_count,
    retentionClass: row.retention_class,
    traceParent: row.trace_parent,
    ...destinationOptionsOf(orm, row),
  };
}

/** Claims come back in no set order: hand them out oldest first, so deliveries start in arrival order. */
export function oldestFirst(orm: Orm, rows: ClaimedRow[]): ClaimedDelivery[] {
  rows.sort((a, b) => (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : a.destination_id < b.destination_id ? -1 : 1));
  return rows.map((row) => toClaimed(orm, row));
}

/** A claimed row's destination options: its broker target, its auth and TLS settings opened, its ordering. */
export function destinationOptionsOf(
  orm: Orm,
  row: Pick<ClaimedRow, 'destination_target' | 'auth' | 'tls' | 'credentials' | 'ordering' | 'ordering_key'>,
): DeliveryOptions {
  const secrets = row.auth === null && row.tls === null ? {} : openCredentials(orm, row.credentials);
  return {
    destinationTarget: row.destination_target,
    auth: destinationAuthOf(row.auth, secrets),
    tls: destinationTlsOf(row.tls, secrets),
    orderingKey: row.ordering_key,
    onGiveUp: row.ordering?.on_give_up ?? null,
  };
}
