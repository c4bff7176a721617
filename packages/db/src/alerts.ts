/**
 * Alerts (docs/alerts.md): the account's alert channels (a Slack incoming webhook, email
 * addresses) and `alert_outbox`, the alerts waiting for them (migration 026).
 *
 * The notification drain (notifications.ts) queues one row per alert and channel, in the
 * transaction that takes the notification, through `queueAlerts`, which also applies each
 * channel's hourly limit. The relay's alert sender claims due rows (`claimDueAlerts`),
 * sends them, and records how it went (`recordAlertOutcome`): a failed try is tried again
 * later, up to ALERT_MAX_ATTEMPTS.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { ALERT_CHANNEL_LIMIT_PER_HOUR, ALERT_TESTS_PER_HOUR, type AlertChannel, type AlertMessageType, type AlertsHeldBack, type AlertType } from '@hook/core';
import type { Orm } from './orm.ts';
import { openSigningSecret, sealSigningSecret } from './signing-secrets.ts';

/** A timestamp column as ISO 8601 UTC text (the ORM's driver hands timestamps over as text in the session's zone). */
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** How many of an account's latest alerts its settings show. */
export const RECENT_ALERTS_SHOWN = 20;

/** One alert handed to a channel, as the account's settings list it. */
export interface AlertRecord {
  channel: AlertChannel;
  type: string;
  status: 'pending' | 'sent' | 'failed';
  attempts: number;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

/** The account's channels: the Slack URL only as its hint. */
export interface AlertSettings {
  slackUrlHint: string | null;
  emailTo: string[];
  recent: AlertRecord[];
}

/**
 * What is shown of a Slack webhook URL: its origin and the last four characters. The path
 * is the credential (`/services/T…/B…/<secret>`), so most of it stays hidden.
 */
export function slackUrlHint(url: string): string {
  return `${new URL(url).origin}/…${url.slice(-4)}`;
}

export async function readAlertSettings(em: EntityManager, accountId: string): Promise<AlertSettings> {
  const db = em.getKysely();
  const { rows: channels } = await sql<{ channel: AlertChannel; slack_url_hint: string | null; email_to: string[] | null }>`
    select channel, slack_url_hint, email_to from alert_channel where account_id = ${accountId}`.execute(db);
  const { rows: recent } = await sql<AlertRecord>`
    select channel, type, status, attempts, last_error, ${sql.raw(iso('created_at'))} as created_at, ${sql.raw(iso('sent_at'))} as sent_at
    from alert_outbox where account_id = ${accountId} order by created_at desc, id desc limit ${RECENT_ALERTS_SHOWN}`.execute(db);
  return {
    slackUrlHint: channels.find((row) => row.channel === 'slack')?.slack_url_hint ?? null,
    emailTo: channels.find((row) => row.channel === 'email')?.email_to ?? [],
    recent,
  };
}

/** A change to the account's channels: a field left undefined stays as it is; null (Slack) or [] (email) removes the channel. */
export interface AlertSettingsChange {
  slackUrl?: string | null;
  emailTo?: string[];
}

/** Sets or removes the account's channels (the caller checked the URL and addresses). */
export async function writeAlertSettings(em: EntityManager, accountId: string, change: AlertSettingsChange): Promise<void> {
  const db = em.getKysely();
  if (change.slackUrl !== undefined) {
    if (change.slackUrl === null) await sql`delete from alert_channel where account_id = ${accountId} and channel = 'slack'`.execute(db);
    else {
      await sql`
        insert into alert_channel (account_id, channel, slack_url, slack_url_hint) values (${accountId}, 'slack', ${sealSigningSecret(em, change.slackUrl)}, ${slackUrlHint(change.slackUrl)})
        on conflict (account_id, channel) do update set slack_url = excluded.slack_url, slack_url_hint = excluded.slack_url_hint, updated_at = now()`.execute(db);
    }
  }
  if (change.emailTo !== undefined) {
    if (change.emailTo.length === 0) await sql`delete from alert_channel where account_id = ${accountId} and channel = 'email'`.execute(db);
    else {
      await sql`
        insert into alert_channel (account_id, channel, email_to) values (${accountId}, 'email', ${change.emailTo}::text[])
        on conflict (account_id, channel) do update set email_to = excluded.email_to, updated_at = now()`.execute(db);
    }
  }
}

/** A notification of an alert type, as the drain took it. */
export interface AlertNotice {
  accountId: string;
  type: AlertType;
  data: Record<string, unknown>;
  /** When its cause happened (ISO 8601, UTC). */
  createdAt: string;
}

/** What an alert row carries: the notification's data and time, and what the channel's limit held back before it. */
export interface AlertPayload {
  data: Record<string, unknown>;
  created_at: string;
  held_back: AlertsHeldBack | null;
}

/**
 * Queues each notice for every channel of its account, in `em`'s transaction (the drain's),
 * within each channel's hourly limit (ALERT_CHANNEL_LIMIT_PER_HOUR alerts in the last hour,
 * test alerts aside): past it the alert is counted on the channel instead, and the next
 * alert the channel sends carries that count and when it began. The account's channel rows
 * are locked first, so two relays draining at once count one after the other and never
 * pass the limit together. Returns how many alert rows it queued.
 */
export async function queueAlerts(em: EntityManager, notices: AlertNotice[]): Promise<number> {
  if (notices.length === 0) return 0;
  const kysely = em.getKysely();
  const accounts = [...new Set(notices.map((notice) => notice.accountId))];
  const { rows: channels } = await sql<{ account_id: string; channel: AlertChannel; held_back: number; held_back_since: string | null }>`
    select account_id, channel, held_back, ${sql.raw(iso('held_back_since'))} as held_back_since
    from alert_channel where account_id = any(${accounts}::text[])
    order by account_id, channel
    for update`.execute(kysely);
  if (channels.length === 0) return 0;
  const { rows: counts } = await sql<{ account_id: string; channel: AlertChannel; sent: number }>`
    select account_id, channel, count(*)::int as sent from alert_outbox
    where account_id = any(${accounts}::text[]) and type <> 'test' and created_at > now() - interval '1 hour'
    group by account_id, channel`.execute(kysely);

  const state = new Map(channels.map((row) => [`${row.account_id} ${row.channel}`, {
    ...row,
    sent: counts.find((count) => count.account_id === row.account_id && count.channel === row.channel)?.sent ?? 0,
    changed: false,
  }]));
  const queued: { accountId: string; channel: AlertChannel; type: AlertType; payload: AlertPayload }[] = [];
  for (const notice of notices) {
    for (const channel of state.values()) {
      if (channel.account_id !== notice.accountId) continue;
      channel.changed = true;
      if (channel.sent >= ALERT_CHANNEL_LIMIT_PER_HOUR) {
        channel.held_back += 1;
        channel.held_back_since ??= notice.createdAt;
        continue;
      }
      const heldBack = channel.held_back > 0 ? { count: channel.held_back, since: channel.held_back_since ?? notice.createdAt } : null;
      queued.push({ accountId: notice.accountId, channel: channel.channel, type: notice.type, payload: { data: notice.data, created_at: notice.createdAt, held_back: heldBack } });
      channel.sent += 1;
      channel.held_back = 0;
      channel.held_back_since = null;
    }
  }
  const changed = [...state.values()].filter((channel) => channel.changed);
  if (changed.length > 0) {
    await sql`
      update alert_channel c set held_back = v.held_back, held_back_since = v.held_back_since
      from unnest(${changed.map((c) => c.account_id)}::text[], ${changed.map((c) => c.channel)}::text[],
                  ${changed.map((c) => c.held_back)}::int[], ${changed.map((c) => c.held_back_since)}::timestamptz[])
        as v(account_id, channel, held_back, held_back_since)
      where c.account_id = v.account_id and c.channel = v.channel`.execute(kysely);
  }
  if (queued.length > 0) await insertAlertRows(em, queued);
  return queued.length;
}

async function insertAlertRows(em: EntityManager, rows: { accountId: string; channel: AlertChannel; type: AlertMessageType; payload: AlertPayload }[]): Promise<void> {
  await sql`
    insert into alert_outbox (account_id, channel, type, payload)
    select * from unnest(${rows.map((row) => row.accountId)}::text[], ${rows.map((row) => row.channel)}::text[],
                         ${rows.map((row) => row.type)}::text[], ${rows.map((row) => JSON.stringify(row.payload))}::jsonb[])`.execute(em.getKysely());
}

/**
 * Queues a test alert for each of the account's channels (an admin checking them): not
 * counted by the hourly limit, nor held back by it, but at most ALERT_TESTS_PER_HOUR tests
 * an hour per account (an email test mails addresses no one confirmed). Returns the
 * channels, or how long until another test is allowed.
 */
export async function queueTestAlerts(em: EntityManager, accountId: string, data: Record<string, unknown>): Promise<AlertChannel[] | { retryAfterSeconds: number }> {
  // each test's rows share their transaction's created_at: one distinct value per test
  const db = em.getKysely();
  const { rows: [recent] } = await sql<{ tests: number; oldest_age_s: number | null }>`
    select count(distinct created_at)::int as tests, extract(epoch from now() - min(created_at))::float8 as oldest_age_s
    from alert_outbox where account_id = ${accountId} and type = 'test' and created_at > now() - interval '1 hour'`.execute(db);
  if (recent && recent.tests >= ALERT_TESTS_PER_HOUR) return { retryAfterSeconds: Math.max(1, Math.ceil(3600 - (recent.oldest_age_s ?? 0))) };
  const { rows: channels } = await sql<{ channel: AlertChannel }>`select channel from alert_channel where account_id = ${accountId} order by channel`.execute(db);
  const createdAt = new Date().toISOString();
  await insertAlertRows(em, channels.map(({ channel }) => ({ accountId, channel, type: 'test', payload: { data, created_at: createdAt, held_back: null } })));
  return channels.map((row) => row.channel);
}

/** A claimed alert, with where its channel sends it now. */
export interface ClaimedAlert {
  id: string;
  accountId: string;
  channel: AlertChannel;
  type: AlertMessageType;
  payload: AlertPayload;
  /** This try's number, from 1. */
  attempt: number;
  /** The Slack webhook URL, opened; null for email, or when the channel was removed since. */
  slackUrl: string | null;
  /** The email recipients; null for Slack, or when the channel was removed since. */
  emailTo: string[] | null;
  /** The name of the endpoint the alert names, when it still exists. */
  endpointName: string | null;
  /** The URL (or broker address) of the destination the alert names, when it still exists. */
  destinationTarget: string | null;
}

/**
 * Takes up to `limit` due alerts (FOR UPDATE SKIP LOCKED, so relays never take the same
 * row) and holds them for `leaseMs`: their next try is pushed past the lease and counted
 * now, so an alert whose sender died is tried again once the lease ends, and never more
 * than ALERT_MAX_ATTEMPTS times. Each comes with its channel's settings as they are now (a
 * URL changed meanwhile is the one used).
 */
export async function claimDueAlerts(orm: Orm, limit: number, leaseMs: number): Promise<ClaimedAlert[]> {
  const em = orm.em.fork();
  const { rows } = await sql<{ id: string; account_id: string; channel: AlertChannel; type: AlertMessageType; payload: AlertPayload; attempts: number; slack_url: string | null; email_to: string[] | null; endpoint_name: string | null; destination_target: string | null }>`
    with due as (
      select id from alert_outbox
      where status = 'pending' and next_attempt_at <= now()
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    ),
    claimed as (
      update alert_outbox o set attempts = o.attempts + 1, next_attempt_at = now() + make_interval(secs => ${leaseMs}::double precision / 1000)
      from due where o.id = due.id
      returning o.id, o.account_id, o.channel, o.type, o.payload, o.attempts
    )
    select c.id::text as id, c.account_id, c.channel, c.type, c.payload, c.attempts, a.slack_url, a.email_to,
           p.name as endpoint_name, d.url as destination_target
    from claimed c
    left join alert_channel a on a.account_id = c.account_id and a.channel = c.channel
    left join endpoint p on p.id = c.payload #>> '{data,endpoint_id}' and p.account_id = c.account_id and p.deleted_at is null
    left join destination d on d.id = c.payload #>> '{data,destination_id}' and d.account_id = c.account_id and d.deleted_at is null
    order by c.id`.execute(em.getKysely());
  return rows.map((row) => ({
    id: row.id,
    accountId: row.account_id,
    channel: row.channel,
    type: row.type,
    payload: row.payload,
    attempt: row.attempts,
    slackUrl: row.slack_url === null ? null : openSigningSecret(em, row.slack_url),
    emailTo: row.email_to,
    endpointName: row.endpoint_name,
    destinationTarget: row.destination_target,
  }));
}

/** How a try went: sent, or failed with why and when to try again (null: never, the alert is failed). */
export type AlertOutcome = { sent: true } | { sent: false; error: string; retryInMs: number | null };

/** Records a claimed alert's try. */
export async function recordAlertOutcome(orm: Orm, id: string, outcome: AlertOutcome): Promise<void> {
  const db = orm.em.fork().getKysely();
  if (outcome.sent) {
    await sql`update alert_outbox set status = 'sent', sent_at = now(), last_error = null where id = ${id}`.execute(db);
  } else if (outcome.retryInMs === null) {
    await sql`update alert_outbox set status = 'failed', last_error = ${outcome.error} where id = ${id}`.execute(db);
  } else {
    await sql`
      update alert_outbox set last_error = ${outcome.error}, next_attempt_at = now() + make_interval(secs => ${outcome.retryInMs}::double precision / 1000)
      where id = ${id}`.execute(db);
  }
}

/** Deletes sent and failed alerts older than `olderThanMs` (they only fill the recent list and the hourly count, which look at the last hour). Returns how many. */
export async function pruneAlertOutbox(orm: Orm, olderThanMs: number): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    delete from alert_outbox where status <> 'pending' and created_at < now() - make_interval(secs => ${olderThanMs}::double precision / 1000) returning id`.execute(orm.em.fork().getKysely());
  return rows.length;
}
