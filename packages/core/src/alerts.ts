/**
 * Alerts (docs/alerts.md): the account notifications a person should hear about at once,
 * also sent to the account's alert channels: a Slack incoming webhook and email. The
 * signed notification webhook (notifications.ts) carries them too, as it carries every
 * notification.
 */
import type { NotificationType } from './notifications.ts';

/** Where alerts go besides the notification webhook. */
export const ALERT_CHANNELS = ['slack', 'email'] as const;
export type AlertChannel = (typeof ALERT_CHANNELS)[number];

/** The notification types that are alerts: each one is handed to every alert channel of its account. */
export const ALERT_TYPES = ['issue.opened', 'issue.reopened', 'destination.disabled', 'endpoint.disabled'] as const satisfies readonly NotificationType[];
export type AlertType = (typeof ALERT_TYPES)[number];

/** What an alert row carries: an alert type, or `test` (POST /v1/account/alerts/test). */
export type AlertMessageType = AlertType | 'test';

/** Whether a notification type is an alert. */
export function isAlertType(type: string): type is AlertType {
  return (ALERT_TYPES as readonly string[]).includes(type);
}

/**
 * Most alerts one channel of an account sends per hour (a sliding hour; test alerts do not
 * count). Past it alerts are counted, not sent, and the next one sent says how many were
 * held back since when: a flapping destination sends a handful, not a thousand.
 */
export const ALERT_CHANNEL_LIMIT_PER_HOUR = 20;

/**
 * Most test alerts an account may ask for per hour (POST /v1/account/alerts/test): they
 * skip the channel limit, and an email test sends the operator's mail to addresses no one
 * confirmed, so they have a limit of their own.
 */
export const ALERT_TESTS_PER_HOUR = 5;

/** Most times one alert is tried before it is marked failed. */
export const ALERT_MAX_ATTEMPTS = 5;

/** How long a Slack webhook may take to answer, in ms. */
export const SLACK_TIMEOUT_MS = 10_000;

/** Characters of a failed channel's answer kept in `last_error`. */
export const ALERT_ERROR_MAX_CHARS = 200;

/** Most email addresses one account's alerts go to. */
export const ALERT_EMAIL_RECIPIENTS_MAX = 10;

/** Alerts held back by a channel's hourly limit, told with the next alert it sends. */
export interface AlertsHeldBack {
  count: number;
  /** When the first of them was held back (ISO 8601, UTC). */
  since: string;
}
