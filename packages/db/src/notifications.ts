/**
 * Account notifications (docs/notifications.md): facts about an account itself, sent to
 * its notification URL through the ordinary delivery engine. A cause writes a row to
 * `notification_outbox` in its own statement or transaction (so a notification exists
 * exactly when its cause committed); the notifier job turns rows into events on the
 * account's hidden `kind = 'notifications'` endpoint, where workers deliver them like
 * any other event: signed, retried, with attempts and replay.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { generateSigningSecret, isAlertType, newId, newIngestId, type EndpointStatus, type NotificationData, type NotificationType } from '@hook/core';
import { queueAlerts } from './alerts.ts';
import type { Orm } from './orm.ts';
import { retentionClassSql } from './partitions.ts';
import { destinationOfEvent } from './queue/statements/claimed-columns.ts';
import { DUE_CHANNEL } from './queue/types.ts';
import { openSigningSecret, sealSigningSecret } from './signing-secrets.ts';

export interface NotificationInput<T extends NotificationType = NotificationType> {
  accountId: string;
  type: T;
  data: NotificationData[T];
}

/**
 * Queues a notification in `em`'s transaction (call it inside the transaction of its
 * cause, e.g. a plan change): the notifier sends it only if that transaction commits.
 * Dropped if the account has no notification URL when the notifier gets to it.
 */
export async function enqueueNotification<T extends NotificationType>(em: EntityManager, notification: NotificationInput<T>): Promise<void> {
  await sql`insert into notification_outbox (account_id, type, data)
            values (${notification.accountId}, ${notification.type}, ${JSON.stringify(notification.data)}::jsonb)`.execute(em.getKysely());
}

/** The account's notification destination: its hidden endpoint. */
export interface NotificationEndpointRow {
  id: string;
  destinationUrl: string;
  secret: string;
  status: EndpointStatus;
  createdAt: Date;
  updatedAt: Date;
}

interface EndpointRow {
  id: string;
  destination_url: string;
  secret: string;
  status: EndpointStatus;
  created_at: string | Date;
  updated_at: string | Date;
}

function toEndpointRow(em: EntityManager, row: EndpointRow): NotificationEndpointRow {
  // Timestamps arrive as text through the ORM's driver settings.
  return { id: row.id, destinationUrl: row.destination_url, secret: openSigningSecret(em, row.secret), status: row.status, createdAt: new Date(row.created_at), updatedAt: new Date(row.updated_at) };
}

/**
 * Sets the account's notification URL: creates its notifications endpoint (active, a
 * fresh whsec_ secret) or, if it has one, points it at `url` and makes it active again
 * (after a 410 disabled it). One statement on the partial unique index, so concurrent
 * calls leave exactly one live notifications endpoint.
 */
export async function setNotificationUrl(em: EntityManager, accountId: string, url: string): Promise<NotificationEndpointRow> {
  const { rows } = await sql<EndpointRow>`
    with ep as (
      insert into endpoint (id, account_id, kind, name, ingest_id, status, created_at, updated_at)
      values (${newId('endpoint')}, ${accountId}, 'notifications', 'notifications', ${newIngestId()}, 'active', now(), now())
      on conflict (account_id) where kind = 'notifications' and deleted_at is null
      do update set status = 'active', updated_at = now()
      returning id, account_id, status, created_at, updated_at
    ),
    dst as (
      insert into destination (id, account_id, endpoint_id, position, type, url, secret, status, created_at, updated_at)
      select 'dst_' || substr(ep.id, 4), ep.account_id, ep.id, 0, 'url', ${url}, ${sealSigningSecret(em, generateSigningSecret())}, 'active', now(), now() from ep
      on conflict (id) do update
      set url = excluded.url, status = 'active', disabled_reason = null, consecutive_failures = 0, failing_since = null, updated_at = now()
      returning url, secret
    )
    select ep.id, dst.url as destination_url, dst.secret, ep.status, ep.created_at, ep.updated_at from ep, dst`.execute(em.getKysely());
  return toEndpointRow(em, rows[0]!);
}

/** The account's live notifications endpoint, or null. */
export async function findNotificationEndpoint(em: EntityManager, accountId: string): Promise<NotificationEndpointRow | null> {
  const { rows } = await sql<EndpointRow>`
    select p.id, d.url as destination_url, d.secret, p.status, p.created_at, p.updated_at
    from endpoint p join destination d on d.endpoint_id = p.id and d.position = 0 and d.deleted_at is null
    where p.account_id = ${accountId} and p.kind = 'notifications' and p.deleted_at is null`.execute(em.getKysely());
  return rows[0] ? toEndpointRow(em, rows[0]) : null;
}

/** Stops notifications: deletes (softly) the live notifications endpoint. False when there was none. */
export async function clearNotificationUrl(em: EntityManager, accountId: string): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    update endpoint set deleted_at = now(), updated_at = now()
    where account_id = ${accountId} and kind = 'notifications' and deleted_at is null
    returning id`.execute(em.getKysely());
  return rows.length > 0;
}

/**
 * Every notifications endpoint the account has had, deleted ones too (their events stay
 * in the history): a handful of ids, so lists can include or exclude their events by
 * endpoint id on the events' own indexes.
 */
export async function notificationEndpointIds(em: EntityManager, accountId: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`select id from endpoint where account_id = ${accountId} and kind = 'notifications'`.execute(em.getKysely());
  return rows.map((row) => row.id);
}

interface OutboxRow {
  id: string;
  account_id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: string;
  endpoint_id: string | null;
}

/**
 * Turns up to `limit` outbox rows, oldest first, into events, in one transaction: takes
 * them with FOR UPDATE SKIP LOCKED (so concurrent notifiers never take the same row),
 * stores one event per row on the account's active notifications endpoint (rows of an
 * account without one, or whose URL answered 410, are dropped), deletes the rows, and
 * wakes delivery workers as ingest does. Each event gets its deliveries as ingest's do
 * (destinationOfEvent: the notifications endpoint's one destination). Events are stored by
 * a statement of their own, not through insertEvents: notifications do not count toward
 * the monthly allowance, and are stored in the transaction that takes their outbox rows. Rows of an alert
 * type (ALERT_TYPES) are also queued for the account's alert channels (alerts.ts), whether
 * or not it has a notification URL, in the same transaction, so an alert exists exactly
 * when its notification was taken. Returns how many rows it took (events stored or not).
 */
export async function drainNotificationOutbox(orm: Orm, limit: number): Promise<number> {
  return orm.em.fork().transactional(async (em) => {
    const { rows: taken } = await sql<OutboxRow>`
      select o.id, o.account_id, o.type, o.data,
             to_char(o.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at, p.id as endpoint_id
      from notification_outbox o
      left join endpoint p on p.account_id = o.account_id and p.kind = 'notifications' and p.deleted_at is null and p.status = 'active'
      order by o.id
      limit ${limit}
      for update of o skip locked`.execute(em.getKysely());
    if (taken.length === 0) return 0;
    await queueAlerts(em, taken.flatMap((row) => (isAlertType(row.type) ? [{ accountId: row.account_id, type: row.type, data: row.data, createdAt: row.created_at }] : [])));
    const events = taken.filter((row) => row.endpoint_id !== null).map((row) => {
      const id = newId('event');
      const body = Buffer.from(JSON.stringify({ type: row.type, id, created_at: row.created_at, account_id: row.account_id, data: row.data }));
      return { id, row, body };
    });
    const column = <T>(pick: (event: (typeof events)[number]) => T): T[] => events.map(pick);
    const bodies = events.length > 0 ? sql`array[${sql.join(events.map((event) => sql`${event.body}`))}]::bytea[]` : sql`array[]::bytea[]`;
    await sql`
      with removed as (
        delete from notification_outbox where id = any(${taken.map((row) => row.id)}::bigint[])
      ),
      input as (
        select * from unnest(${column((e) => e.id)}::text[], ${column((e) => e.row.account_id)}::text[], ${column((e) => e.row.endpoint_id)}::text[],
                             ${column((e) => e.row.type)}::text[], ${bodies}, ${column((e) => e.body.length)}::int[])
          as n(id, account_id, endpoint_id, type, body, size)
      ),
      classes as (
        -- each account's retention class: the partitions its events go to (partitions.ts)
        select a.id as account_id, ${sql.raw(retentionClassSql('a'))} as retention_class from account a
        where a.id in (select account_id from input)
      ),
      inserted as (
        insert into event (id, account_id, endpoint_id, type, method, path, query, headers, body, content_type, size, received_at, retention_class, delivery_count)
        select n.id, n.account_id, n.endpoint_id, n.type, 'POST', '', '', '{"content-type":"application/json"}'::jsonb, n.body,
               'application/json', n.size, now(), c.retention_class,
               (select count(*) from destination d where ${sql.raw(destinationOfEvent('n'))})
        from input n join classes c on c.account_id = n.account_id
      ),
      deliveries as (
        -- a delivery to each of the event's destinations, as ingest decides them (destinationOfEvent)
        insert into delivery (event_id, destination_id, account_id, endpoint_id, status, next_attempt_at, retention_class)
        select n.id, d.id, n.account_id, n.endpoint_id, 'pending', now(), c.retention_class
        from input n join classes c on c.account_id = n.account_id
        join destination d on ${sql.raw(destinationOfEvent('n'))}
        returning 1
      )
      select pg_notify(${DUE_CHANNEL}, '') from (select 1 from deliveries limit 1) as due
    `.execute(em.getKysely());
    return taken.length;
  });
}
