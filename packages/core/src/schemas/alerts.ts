/** The account's alert channels (docs/alerts.md): `/v1/account/alerts`. */
import { Type } from 'typebox';
import { ALERT_CHANNELS, ALERT_EMAIL_RECIPIENTS_MAX, ALERT_TYPES } from '../alerts.ts';
import { NullableTimestamp, Timestamp } from './common.ts';

export const AlertRecordSchema = Type.Object({
  channel: Type.Enum([...ALERT_CHANNELS]),
  type: Type.String({ description: 'The alert type (one of `types`), or `test`' }),
  status: Type.Enum(['pending', 'sent', 'failed'], { description: 'pending: waiting for its first or next try; sent; failed: every try failed (last_error says why)' }),
  attempts: Type.Integer({ minimum: 0 }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last try failed (the first 200 characters of the answer or error)' }),
  created_at: Timestamp,
  sent_at: NullableTimestamp,
}, { description: 'One alert handed to a channel' });

/** `GET`/`PUT /v1/account/alerts`. */
export const AlertSettingsSchema = Type.Object({
  slack: Type.Union([
    Type.Object({ url_hint: Type.String({ description: 'The incoming-webhook URL with its secret path cut short, e.g. https://hooks.slack.com/…XYZ1' }) }),
    Type.Null(),
  ], { description: 'The Slack incoming webhook alerts are posted to; null when none is set' }),
  email: Type.Object({
    to: Type.Array(Type.String(), { description: 'Addresses alerts are mailed to; empty when none' }),
    available: Type.Boolean({ description: 'Whether this relay sends email (its operator set HOOK_SMTP_URL); without it email_to cannot be set' }),
  }),
  types: Type.Array(Type.String(), { description: `What is alerted: ${ALERT_TYPES.join(', ')}` }),
  recent: Type.Array(AlertRecordSchema, { description: 'The latest alerts handed to the channels, newest first (at most 20)' }),
}, { description: 'The account\'s alert channels (docs/alerts.md)' });

/** `PUT /v1/account/alerts` body: a field left out stays as it is. */
export const AlertSettingsUpdateSchema = Type.Object({
  slack_webhook_url: Type.Optional(Type.Union([
    Type.String({ minLength: 1, maxLength: 2048, description: 'A Slack incoming-webhook URL (https://hooks.slack.com/services/…)' }),
    Type.Null(),
  ], { description: 'The Slack incoming webhook to post alerts to; null stops Slack alerts' })),
  email_to: Type.Optional(Type.Array(Type.String({ format: 'email', maxLength: 254 }), {
    maxItems: ALERT_EMAIL_RECIPIENTS_MAX,
    description: `Addresses to mail alerts to (at most ${ALERT_EMAIL_RECIPIENTS_MAX}); [] stops email alerts. Needs a relay that sends email (email.available)`,
  })),
}, { additionalProperties: false });

/** `POST /v1/account/alerts/test`. */
export const AlertTestResultSchema = Type.Object({
  queued: Type.Array(Type.Enum([...ALERT_CHANNELS]), { description: 'The channels a test alert was queued for; GET /v1/account/alerts shows how it went' }),
});
