import { Migration } from '@mikro-orm/migrations';

/**
 * Alerts (docs/alerts.md): each account's alert channels and the alerts waiting for them.
 *
 * `alert_channel`: one row per channel an account set up. The Slack incoming-webhook URL
 * is a credential (whoever holds it posts to the channel), so it is stored sealed like
 * signing secrets (signing-secrets.ts), with a hint to show instead. The row also holds
 * the channel's hourly-limit count of alerts held back (`held_back`, since
 * `held_back_since`): the notification drain locks the account's rows while it queues
 * alerts, so relays draining at once never send past the limit together.
 *
 * `alert_outbox`: one row per alert and channel, queued by the notification drain in the
 * transaction that takes its notification, sent and retried by the alert sender. Rows
 * stay after they are sent (the account's recent alerts and the hourly limit read them)
 * and are pruned after a week. No foreign key, like notification_outbox: account erasure
 * deletes them (account-erasure.ts).
 */
export class Alerts extends Migration {
  override name = '026-alerts';

  override up(): void {
    this.addSql(`
      create table alert_channel (
        account_id text not null references account (id) on delete cascade,
        channel text not null check (channel in ('slack', 'email')),
        slack_url text null,
        slack_url_hint text null,
        email_to text[] null,
        held_back integer not null default 0,
        held_back_since timestamptz null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        primary key (account_id, channel),
        check (channel <> 'slack' or (slack_url is not null and slack_url_hint is not null)),
        check (channel <> 'email' or cardinality(email_to) > 0)
      );`);
    this.addSql(`
      create table alert_outbox (
        id bigserial primary key,
        account_id text not null,
        channel text not null check (channel in ('slack', 'email')),
        type text not null,
        payload jsonb not null,
        status text not null default 'pending' check (status in ('pending', 'sent', 'failed')),
        attempts integer not null default 0,
        next_attempt_at timestamptz not null default now(),
        last_error text null,
        created_at timestamptz not null default now(),
        sent_at timestamptz null
      );`);
    // The sender's claim: due pending rows only, a small index however many were sent.
    this.addSql(`create index alert_outbox_due_idx on alert_outbox (next_attempt_at) where status = 'pending';`);
    // The hourly limit (an account's channel, the last hour) and the account's recent alerts.
    this.addSql('create index alert_outbox_account_idx on alert_outbox (account_id, channel, created_at);');
  }
}
