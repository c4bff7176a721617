/**
 * What `hook listen` prints for one delivery: a line a person reads at a glance, and the
 * JSON line a script reads (docs/cli.md#hook-listen). A delivery is reported once the
 * relay has said what the local server's answer decided (the stream's `recorded`
 * message: delivered, or retrying and when, or failed), or with what is known when that
 * cannot come (a mirror copy, a connection lost first, a relay that does not say).
 *
 *   13:03:10  200  POST /webhooks   9 ms  invoice.paid  evt_01M80PKA1A4D0JD7HEVS2AV4D5
 *   13:03:12  500  POST /webhooks  12 ms  invoice.paid  evt_01M80PKE2V3WJ6R0S3QXW1M2ZB  (attempt 1; next retry in 30 s at 13:03:42)
 */
import type { DeliveryMessage, RecordedMessage } from '@hook/core';
import type { ForwardOutcome } from './local-forwarder.ts';

/** Whose local answers `--print-body` shows: the failed deliveries' (the flag alone), or every one's. */
export type PrintBody = 'failed' | 'all';

/** Characters of the local server's answer shown under a line; the JSON line has all that was kept (4 KiB). */
export const PRINTED_BODY_MAX_CHARS = 1000;
/** Lines of the local server's answer shown under a line. */
export const PRINTED_BODY_MAX_LINES = 20;

export interface DeliveryReport {
  delivery: DeliveryMessage;
  outcome: ForwardOutcome;
  forwardedAt: string;
  /** Whether the result reached the relay. */
  reported: boolean;
  /** The relay's verdict on the result; undefined when none came. */
  recorded: RecordedMessage | undefined;
  /** Why no verdict came (when `reported` and not a mirror copy): the connection was lost, or the relay does not send one. */
  unconfirmed?: 'connection_lost' | 'relay_silent';
}

/** The output's colouring for stdout (plain off a terminal). */
export type Paint = (format: 'green' | 'yellow' | 'red' | 'dim', text: string) => string;

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** A local clock time, `13:05:10`. */
export function clockTime(date: Date): string {
  return `${pad2(date.getHours())}:${pad2(date.getMinutes())}:${pad2(date.getSeconds())}`;
}

/** A wait as people say it: `30 s`, `2 min`, `2 h 8 min`. */
export function waitText(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
}

function succeeded(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}

function statusText(report: DeliveryReport, paint: Paint): string {
  const status = report.outcome.status;
  const text = (status === null ? 'ERR' : String(status)).padEnd(3);
  if (status === null || status >= 500) return paint('red', text);
  if (status >= 400) return paint('yellow', text);
  if (status >= 200 && status < 300) return paint('green', text);
  return text;
}

/** What the relay made of it, in words: `attempt 2; next retry in 2 min at 13:05:10`. */
function verdictText(report: DeliveryReport, nowMs: number): string {
  const { delivery, recorded, outcome } = report;
  if (delivery.mirror) return 'mirror copy: your answer is not recorded';
  if (!report.reported) return 'connection lost before the result was sent; the relay will offer it again';
  if (recorded === undefined) {
    return report.unconfirmed === 'relay_silent' ? '' : 'result sent; connection lost before the relay confirmed it';
  }
  if (recorded.status === null) return `not recorded: ${recorded.error ?? 'the relay did not record it'}`;
  const parts: string[] = [];
  if (recorded.trigger === 'replay') parts.push('replay');
  if (!succeeded(outcome.status) || recorded.attempt > 1) parts.push(`attempt ${recorded.attempt}`);
  if (recorded.status === 'failed') {
    parts.push(recorded.trigger === 'replay' ? 'event failed' : 'retries exhausted: failed');
  } else if (recorded.status !== 'delivered' && recorded.next_attempt_at !== null) {
    const dueMs = Date.parse(recorded.next_attempt_at);
    parts.push(dueMs - nowMs < 1000 ? 'next retry now' : `next retry in ${waitText(dueMs - nowMs)} at ${clockTime(new Date(dueMs))}`);
  } else if (recorded.status !== 'delivered') {
    parts.push(recorded.status);
  }
  return parts.join('; ');
}

/** Whether `--print-body` shows this delivery's answer. */
function showsBody(report: DeliveryReport, printBody: PrintBody | undefined): boolean {
  return printBody === 'all' || (printBody === 'failed' && !succeeded(report.outcome.status));
}

/** The local server's answer, indented under the line: control characters shown as �, cut at PRINTED_BODY_MAX_* with a note. */
function bodyLines(body: string): string[] {
  // A terminal would act on escape sequences in a server's answer; tabs and line breaks stay.
  const clean = body.replaceAll(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\uFFFD').replace(/\s+$/, '');
  if (clean === '') return ['    (empty answer)'];
  let shown = clean.slice(0, PRINTED_BODY_MAX_CHARS);
  let lines = shown.split('\n');
  if (lines.length > PRINTED_BODY_MAX_LINES) {
    lines = lines.slice(0, PRINTED_BODY_MAX_LINES);
    shown = lines.join('\n');
  }
  const out = lines.map((line) => `    ${line}`);
  if (shown.length < clean.length) out.push(`    … (${clean.length - shown.length} more characters; --json has the first 4 KiB)`);
  return out;
}

/** The line (and, with --print-body, the answer under it) for a person. */
export function deliveryLine(report: DeliveryReport, options: { paint: Paint; printBody?: PrintBody; nowMs?: number }): string {
  const { delivery, outcome } = report;
  const url = new URL(outcome.url);
  const parts = [
    clockTime(new Date(report.forwardedAt)),
    statusText(report, options.paint),
    `POST ${url.pathname}${url.search}`,
    `${Math.round(outcome.durationMs)} ms`,
    delivery.event.type ?? '-',
    delivery.event.id,
  ];
  if (outcome.error) parts.push(outcome.error);
  const verdict = verdictText(report, options.nowMs ?? Date.now());
  if (verdict) parts.push(`(${verdict})`);
  const lines = [parts.join('  ')];
  if (showsBody(report, options.printBody) && outcome.responseBody !== null) lines.push(...bodyLines(outcome.responseBody).map((line) => options.paint('dim', line)));
  return lines.join('\n');
}

/** One JSON line per delivery (docs/cli.md#hook-listen lists every field). */
export function deliveryRecord(report: DeliveryReport, printBody: PrintBody | undefined): Record<string, unknown> {
  const { delivery, outcome, recorded } = report;
  const mirror = delivery.mirror === true;
  return {
    type: 'delivery',
    event_id: delivery.event.id,
    delivery_id: delivery.delivery_id,
    attempt: delivery.attempt,
    event_type: delivery.event.type,
    received_at: delivery.event.received_at,
    forwarded_at: report.forwardedAt,
    method: 'POST',
    url: outcome.url,
    status: outcome.status,
    duration_ms: outcome.durationMs,
    error: outcome.error,
    reported: report.reported,
    mirror,
    trigger: recorded?.trigger ?? null,
    recorded: recorded !== undefined && recorded.status !== null,
    delivery_status: recorded?.status ?? null,
    event_status: recorded?.event_status ?? null,
    next_attempt_at: recorded?.next_attempt_at ?? null,
    ...(showsBody(report, printBody) ? { response_body: outcome.responseBody } : {}),
  };
}
