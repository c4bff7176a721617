import { ALERT_MAX_ATTEMPTS, retryDelayMs } from '@hook/core';
import { claimDueAlerts, pruneAlertOutbox, recordAlertOutcome, type AlertOutcome, type ClaimedAlert, type Orm } from '@hook/db';
import type { EmailSender } from '../alerts/email.ts';
import { emailMessage, slackMessage, type AlertMessageInput } from '../alerts/messages.ts';
import type { SlackPoster } from '../alerts/slack.ts';
import { startPeriodic, type Periodic } from './periodic.ts';

/** How often the alert outbox is looked at without a wake: every second. */
export const ALERT_SENDER_INTERVAL_MS = 1000;

/** Most alerts one pass claims (and sends at once). */
export const ALERT_SENDER_BATCH_SIZE = 20;

/** How long a claimed alert is held: past the Slack and SMTP time limits, so a sender that died leaves it to another after this. */
export const ALERT_LEASE_MS = 120_000;

/** How often sent and failed alerts older than ALERT_KEPT_MS are removed. */
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** How long sent and failed alerts are kept (listed as recent). */
export const ALERT_KEPT_MS = 7 * 24 * 60 * 60 * 1000;

export interface AlertSenderOptions {
  orm: Orm;
  slack: SlackPoster;
  /** Null when the relay has no HOOK_SMTP_URL. */
  email: EmailSender | null;
  /** HOOK_PUBLIC_URL, for links into the console. */
  publicUrl: string | undefined;
  /** The waits before each retry (HOOK_RETRY_SCHEDULE, as deliveries). */
  retryScheduleMs: readonly number[];
  intervalMs?: number;
  onError?: (error: unknown) => void;
  stopGraceMs?: number;
}

/** What a failed try becomes: another try after the schedule's wait, or failed after ALERT_MAX_ATTEMPTS. */
function failure(alert: ClaimedAlert, error: string, retryScheduleMs: readonly number[]): AlertOutcome {
  return { sent: false, error, retryInMs: alert.attempt >= ALERT_MAX_ATTEMPTS ? null : retryDelayMs(retryScheduleMs, alert.attempt, Math.random) };
}

async function sendAlert(alert: ClaimedAlert, options: AlertSenderOptions): Promise<AlertOutcome> {
  const input: AlertMessageInput = {
    type: alert.type,
    accountId: alert.accountId,
    data: alert.payload.data,
    createdAt: alert.payload.created_at,
    heldBack: alert.payload.held_back,
    endpointName: alert.endpointName,
    destinationTarget: alert.destinationTarget,
    publicUrl: options.publicUrl,
  };
  if (alert.channel === 'slack') {
    if (alert.slackUrl === null) return { sent: false, error: 'the Slack channel was removed before the alert was sent', retryInMs: null };
    const outcome = await options.slack.post(alert.slackUrl, slackMessage(input));
    return outcome.ok ? { sent: true } : failure(alert, outcome.error, options.retryScheduleMs);
  }
  if (alert.emailTo === null) return { sent: false, error: 'the email channel was removed before the alert was sent', retryInMs: null };
  // Another relay process may have SMTP configured; this one tries again later, as after any failure.
  if (!options.email) return failure(alert, 'this relay process has no HOOK_SMTP_URL, so it cannot send email', options.retryScheduleMs);
  const outcome = await options.email.send(alert.emailTo, emailMessage(input));
  return outcome.ok ? { sent: true } : failure(alert, outcome.error, options.retryScheduleMs);
}

/**
 * Sends the alerts waiting in `alert_outbox` (docs/alerts.md) to Slack and by email, now,
 * every `intervalMs`, and when woken (the notifier queued some), batch after batch while
 * full ones come back. Any number of relay processes may run it: alerts are claimed with
 * SKIP LOCKED and held by a lease. Each alert is tried up to ALERT_MAX_ATTEMPTS times,
 * waiting as HOOK_RETRY_SCHEDULE says in between. Returns the function that stops it
 * (waiting for a pass in progress, within its grace: a post under way when it stops
 * keeps its lease, and another try comes after it) and `wake`. Its Slack and SMTP
 * connections are the caller's to close.
 */
export function startAlertSender(options: AlertSenderOptions): Periodic {
  let prunedAtMs = 0;
  return startPeriodic({ intervalMs: options.intervalMs ?? ALERT_SENDER_INTERVAL_MS, onError: options.onError, stopGraceMs: options.stopGraceMs, pass: async (signal) => {
    if (Date.now() - prunedAtMs > PRUNE_INTERVAL_MS) {
      prunedAtMs = Date.now();
      await pruneAlertOutbox(options.orm, ALERT_KEPT_MS);
    }
    while (!signal.aborted) {
      const alerts = await claimDueAlerts(options.orm, ALERT_SENDER_BATCH_SIZE, ALERT_LEASE_MS);
      await Promise.all(alerts.map(async (alert) => {
        const outcome = await sendAlert(alert, options).catch((error: unknown): AlertOutcome => failure(alert, String((error as Error).message ?? error), options.retryScheduleMs));
        await recordAlertOutcome(options.orm, alert.id, outcome);
      }));
      if (alerts.length < ALERT_SENDER_BATCH_SIZE) break;
    }
  } });
}
