/**
 * Issues (docs/issues.md): failed delivery attempts grouped by account, destination and
 * the kind of failure, so that a person sees "dst_… answers 5xx since 14:02, 312 events"
 * rather than 312 failed events. The relay groups them in the statement that records
 * results (packages/db, record-results.ts) by the kind each attempt was given where it
 * failed (AttemptKind, below); this words it.
 */
import { isSuccessStatus } from './delivery.ts';
import type { AttemptErrorClass } from './events.ts';

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

/**
 * What one delivery attempt came to, decided where it happened and carried from there to
 * the recorded attempt (`attempt.failure_kind`), the issue it joins, metrics and traces:
 * `ok` (a 2xx, or a broker's acknowledgement), or the kind of its failure (ISSUE_KINDS).
 * Nothing reads an attempt's error text to tell kinds apart; that text is for people.
 */
export const ATTEMPT_KINDS = ['ok', ...ISSUE_KINDS] as const;
export type AttemptKind = (typeof ATTEMPT_KINDS)[number];

/** The kind of an attempt that got an HTTP answer: `ok` for 2xx (isSuccessStatus), else its class. */
export function answerKind(status: number): AttemptKind {
  if (isSuccessStatus(status)) return 'ok';
  if (status >= 400 && status < 500) return 'http_4xx';
  if (status >= 500 && status < 600) return 'http_5xx';
  return 'http_other';
}

/** Node's and undici's error codes for a name that did not resolve. */
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA']);
/** Codes of a connection or an answer given up for time (the caller's own deadline is an AbortError or TimeoutError). */
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Node's codes for a certificate the TLS handshake refused (besides ERR_SSL_* and ERR_TLS_*). */
const CERTIFICATE_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_REVOKED', 'CERT_UNTRUSTED', 'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH',
]);

/**
 * The kind of a transport failure, from the error thrown (its name and its code, or its
 * cause's; never its message): `timeout`, `connection_refused`, `dns`, `tls`, else
 * `otherwise` (`network_error` for an HTTP destination, `broker_error` for a broker's).
 */
export function transportFailureKind(error: unknown, otherwise: 'network_error' | 'broker_error' = 'network_error'): AttemptKind {
  for (let err = error as (Error & { code?: unknown; cause?: unknown }) | undefined, depth = 0; err && depth < 4; err = err.cause as typeof err, depth++) {
    if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timeout';
    const code = typeof err.code === 'string' ? err.code : undefined;
    if (code === undefined) continue;
    if (code === 'ECONNREFUSED') return 'connection_refused';
    if (DNS_CODES.has(code)) return 'dns';
    if (TIMEOUT_CODES.has(code)) return 'timeout';
    if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || CERTIFICATE_CODES.has(code)) return 'tls';
  }
  return otherwise;
}

/**
 * How the event list's `last_attempt.error_class` (docs/api.md) and the delivery metrics'
 * outcomes sum an attempt's kind up: null for an answer (its status says the rest) or a
 * success, `timeout`, `transformation_failed`, or `network_error` for every other failure
 * without an answer. `responseStatus` is needed for attempts recorded before kinds were
 * (their kind is null).
 */
export function attemptErrorClass(attempt: { kind: AttemptKind | null; responseStatus: number | null }): AttemptErrorClass | null {
  if (attempt.responseStatus !== null) return null;
  switch (attempt.kind) {
    case 'ok': case 'http_4xx': case 'http_5xx': case 'http_other': return null;
    case 'timeout': return 'timeout';
    case 'transformation_error': return 'transformation_failed';
    default: return 'network_error';
  }
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
