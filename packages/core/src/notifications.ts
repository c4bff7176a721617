/**
 * Account notifications (docs/notifications.md): events about the account itself that
 * the relay sends, signed, to the account's notification URL.
 */
import type { IssueKind } from './issues.ts';

/** Every notification type; each is both the event `type` and the `type` field of the JSON body. */
export const NOTIFICATION_TYPES = ['usage.threshold', 'plan.changed', 'endpoint.disabled', 'destination.disabled', 'event.failed', 'transformation.throttled', 'issue.opened', 'issue.reopened'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** Why the relay disabled a destination: its receiver answered 410 Gone, or it kept failing (docs/delivery.md#destination-health). */
export type DestinationDisabledReason = 'gone_410' | 'failing';

/** An issue's alert (docs/issues.md#alerts): what failed, where, and how often so far. `last_status`/`last_error` describe its last failure. */
export interface IssueNotificationData {
  issue_id: string;
  endpoint_id: string;
  destination_id: string;
  kind: IssueKind;
  title: string;
  event_id: string;
  last_status?: number;
  last_error?: string;
  failure_count: number;
}

/** Each type's `data` object. */
export interface NotificationData {
  /** The account crossed `threshold` (0.8 or 1) of its plan's monthly events. */
  'usage.threshold': { month: string; threshold: number; events_accepted: number; events_per_month: number };
  'plan.changed': { from_plan: string; to_plan: string; changed_at: string };
  /** Every destination of the endpoint was disabled (the last one's reason), so the endpoint stopped taking events. */
  'endpoint.disabled': { endpoint_id: string; reason: DestinationDisabledReason; disabled_at: string };
  /** A destination was disabled: its receiver answered 410 Gone, or it failed every attempt for DESTINATION_FAILURE_LIMIT's span. */
  'destination.disabled': { endpoint_id: string; destination_id: string; reason: DestinationDisabledReason; consecutive_failures: number; disabled_at: string };
  /** A delivery spent its automatic retries. `attempts` counts that delivery's attempts; `last_status`/`last_error` describe its last attempt, when there was one. */
  'event.failed': { event_id: string; endpoint_id: string; destination_id: string; attempts: number; last_status?: number; last_error?: string };
  /** The account's transformations ran past the plan's CPU allowance (once a month): its deliveries with a transformation now slow down to the allowance. */
  'transformation.throttled': { month: string; plan: string; cpu_ms_per_minute: number; throttled_at: string };
  /** A new issue: a destination began failing in a new way (at most one alert per issue per ISSUE_ALERT_THROTTLE_MS). */
  'issue.opened': IssueNotificationData;
  /** A resolved issue failed again (throttled like `issue.opened`). */
  'issue.reopened': IssueNotificationData;
}

/** A notification's JSON body, as its receiver gets it. */
export interface NotificationBody<T extends NotificationType = NotificationType> {
  type: T;
  /** The event id (also the `webhook-id` header). */
  id: string;
  /** When its cause happened (ISO 8601, UTC). */
  created_at: string;
  account_id: string;
  data: NotificationData[T];
}
