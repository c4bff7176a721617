/**
 * Issues (docs/issues.md): failed delivery attempts grouped by account, destination and
 * the kind of failure, so that a person sees "dst_… answers 5xx since 14:02, 312 events"
 * rather than 312 failed events. The relay groups them in the statement that records
 * results (packages/db, record-results.ts); this decides the kind, and words it.
 */
import { attemptErrorClass } from './delivery.ts';

/**
 * Every kind of failure an issue groups: the receiver's answer (`http_4xx`, `http_5xx`,
 * `http_other`: 1xx or 3xx), or why none came: `timeout`, `connection_refused`, `dns`
 * (the name did not resolve), `tls` (the handshake or certificate failed), `network_error`
 * (any other transport error), `transformation_error` (the destination's transformation
 * threw: nothing was sent), `broker_error` (a queue destination's broker refused or failed).
 */
export const ISSUE_KINDS = [
  'http_4xx', 'http_5xx', 'http_other', 'timeout', 'connection_refused', 'dns', 'tls', 'network_error', 'transformation_error', 'broker_error',
] as const;
export type IssueKind = (typeof ISSUE_KINDS)[number];

/** An issue's lifecycle: `open` → `acknowledged` (a person saw it) → `resolved` (by a person, or by itself once its events are delivered). */
export const ISSUE_STATUSES = ['open', 'acknowledged', 'resolved'] as const;
export type IssueStatus = (typeof ISSUE_STATUSES)[number];

/** Who resolved an issue: a person (`user`), or the sweep once every event it covers was delivered (`auto`). */
export const ISSUE_RESOLVERS = ['user', 'auto'] as const;
export type IssueResolver = (typeof ISSUE_RESOLVERS)[number];

/**
 * The least time between two alerts (`issue.opened`/`issue.reopened`) of one issue: a
 * destination that flaps (fails, is resolved, fails again) alerts once an hour, not on
 * every cycle.
 */
export const ISSUE_ALERT_THROTTLE_MS = 60 * 60 * 1000;

/** How the sweep that resolves issues whose events were all delivered is paced (apps/relay, jobs/issue-sweep.ts). */
export const ISSUE_SWEEP_INTERVAL_MS = 5_000;

/** Transport errors, read from the error text an attempt recorded (node's codes and messages, undici's). */
const CONNECTION_REFUSED = /\bECONNREFUSED\b|connection refused/i;
const DNS = /\bENOTFOUND\b|\bEAI_AGAIN\b|\bEAI_NONAME\b|\bEAI_FAIL\b|getaddrinfo/i;
const TLS = /certificate|\bTLS\b|\bSSL\b|ERR_SSL_|_CERT_|\bCERT_/i;
const TIMEOUT = /\bUND_ERR_[A-Z_]*TIMEOUT\b|\bETIMEDOUT\b|timed out|\btimeout\b/i;

/**
 * The kind of a failed attempt, from what it recorded: its answer's status, else its error
 * text (attemptErrorClass reads the relay's own prefixes: a transformation's failure and
 * the delivery timeout; this refines its `network_error`). Null for a 2xx answer (no
 * failure). `queue`: the destination is a broker (amqp, nats, redis, mqtt), whose failures
 * other than refused, DNS, TLS and timeouts are `broker_error`.
 */
export function failureKind(attempt: { responseStatus: number | null; error: string | null; queue?: boolean }): IssueKind | null {
  const status = attempt.responseStatus;
  if (status !== null) {
    if (status >= 200 && status < 300) return null;
    if (status >= 400 && status < 500) return 'http_4xx';
    if (status >= 500 && status < 600) return 'http_5xx';
    return 'http_other';
  }
  const errorClass = attemptErrorClass({ response_status: null, error: attempt.error });
  if (errorClass === 'transformation_failed') return 'transformation_error';
  if (errorClass === 'timeout') return 'timeout';
  const error = attempt.error ?? '';
  if (CONNECTION_REFUSED.test(error)) return 'connection_refused';
  if (DNS.test(error)) return 'dns';
  if (TLS.test(error)) return 'tls';
  if (TIMEOUT.test(error)) return 'timeout';
  return attempt.queue === true ? 'broker_error' : 'network_error';
}

const TITLES: Record<IssueKind, string> = {
  http_4xx: 'Receiver answered 4xx',
  http_5xx: 'Receiver answered 5xx',
  http_other: 'Receiver answered 1xx or 3xx',
  timeout: 'Timed out',
  connection_refused: 'Connection refused',
  dns: 'Host name did not resolve',
  tls: 'TLS handshake failed',
  network_error: 'Network error',
  transformation_error: 'Transformation failed',
  broker_error: 'Broker refused the message',
};

/**
 * An issue's title in words: "Receiver answered 5xx", "Timed out", "Connection refused"…
 * The 4xx and 5xx titles name the class (the issue groups every status of it); a 1xx or
 * 3xx one names the last status, when there is one ("Receiver answered 302").
 */
export function issueTitle(kind: IssueKind, lastStatus: number | null = null): string {
  if (kind === 'http_other' && lastStatus !== null) return `Receiver answered ${lastStatus}`;
  return TITLES[kind];
}
