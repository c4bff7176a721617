/**
 * What `hook listen` prints for one delivery: rows a person reads at a glance, and the
 * JSON line a script reads (docs/cli.md#hook-listen). A delivery is reported once the
 * relay has said what the local server's answer decided (the stream's `recorded`
 * message: delivered, or retrying and when, or failed), or with what is known when that
 * cannot come (a mirror copy, a connection lost first, a relay that does not say).
 *
 * In a pipe, one line per delivery, whole (grep finds the verdict beside the id):
 *
 *   2026-11-25T13:03:12Z  500  POST /webhooks  12 ms  evt_01M80PKE2V3WJ6R0S3QXW1M2ZB  charge.failed  (attempt 1; next retry in 30 s at 2026-11-25T13:03:42Z)
 *
 * On a terminal the rows are cut to its width, never wrapped: the delivery's row first
 * (local time, coloured status, path, duration, id, type), and what the relay made of
 * it on an indented row of its own, so an 80-column terminal still shows both:
 *
 *   13:03:12  500  POST /webhooks  12 ms  evt_01M80PKE2V3WJ6R0S3QXW1M2ZB  charge.failed
 *             attempt 1; next retry in 30 s at 13:03:42
 */
import { isSuccessStatus, type DeliveryMessage, type RecordedMessage } from '@hook/core';
import { bodyExcerpt, STREAM_BODY_LIMITS } from '../output/body.ts';
import { isoSeconds, type Cell, type Line } from '../output/view.ts';
import type { ForwardOutcome } from './local-forwarder.ts';

/** Whose local answers `--print-body` shows: the failed deliveries' (the flag alone), or every one's. */
export type PrintBody = 'failed' | 'all';

export interface DeliveryReport {
  delivery: DeliveryMessage;
  outcome: ForwardOutcome;
  forwardedAt: string;
  /** Whether the result reached the relay (or will, on the next connection: `late`). */
  reported: boolean;
  /** The answer came after the connection that sent the delivery was lost: it went to the relay on a later one (docs/listen.md#a-stalled-listener). */
  late?: boolean;
  /** The relay's verdict on the result; undefined when none came. */
  recorded: RecordedMessage | undefined;
  /** Why no verdict came (when `reported` and not a mirror copy): the connection was lost, or the relay does not send one. */
  unconfirmed?: 'connection_lost' | 'relay_silent';
}

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

/** The local server's status, toned: 2xx good (green), 4xx warn (yellow), 5xx and no answer bad (red). */
function statusCellOf(status: number | null): Cell {
  const text = status === null ? 'ERR' : String(status);
  if (status === null || status >= 500) return { text, tone: 'bad' };
  if (status >= 400) return { text, tone: 'warn' };
  if (isSuccessStatus(status)) return { text, tone: 'good' };
  return text;
}

/** What the relay made of it, in words: `attempt 2; next retry in 2 min at 13:05:10`. */
function verdictText(report: DeliveryReport, nowMs: number, clock: (date: Date) => string): string {
  const { delivery, recorded, outcome } = report;
  if (delivery.mirror) return 'mirror copy: your answer is not recorded';
  if (!report.reported) return 'connection lost before the result was sent; the relay will offer it again';
  if (recorded === undefined) {
    return report.unconfirmed === 'relay_silent' ? '' : 'result sent; connection lost before the relay confirmed it';
  }
  if (recorded.status === null) {
    return recorded.attempt_recorded === true
      ? `attempt ${recorded.attempt} recorded, not deciding: ${recorded.error ?? 'the delivery had moved on'}`
      : `not recorded: ${recorded.error ?? 'the relay did not record it'}`;
  }
  const parts: string[] = [];
  if (report.late) parts.push('answer sent after a reconnect');
  if (recorded.trigger === 'replay') parts.push('replay');
  if (!isSuccessStatus(outcome.status) || recorded.attempt > 1) parts.push(`attempt ${recorded.attempt}`);
  if (recorded.status === 'failed') {
    parts.push(recorded.trigger === 'replay' ? 'event failed' : 'retries exhausted: failed');
  } else if (recorded.status !== 'delivered' && recorded.next_attempt_at !== null) {
    const dueMs = Date.parse(recorded.next_attempt_at);
    parts.push(dueMs - nowMs < 1000 ? 'next retry now' : `next retry in ${waitText(dueMs - nowMs)} at ${clock(new Date(dueMs))}`);
  } else if (recorded.status !== 'delivered') {
    parts.push(recorded.status);
  }
  return parts.join('; ');
}

/** Whether `--print-body` shows this delivery's answer. */
function showsBody(report: DeliveryReport, printBody: PrintBody | undefined): boolean {
  return printBody === 'all' || (printBody === 'failed' && !isSuccessStatus(report.outcome.status));
}

/** The local server's answer, indented under the line: its start (STREAM_BODY_LIMITS), with a note when there was more. */
function bodyLines(body: string): string[] {
  const excerpt = bodyExcerpt({ text: body.replace(/\s+$/, ''), json: false }, STREAM_BODY_LIMITS);
  if (excerpt.totalBytes === 0) return ['    (empty answer)'];
  const out = excerpt.lines.map((line) => `    ${line}`);
  if (excerpt.moreBytes > 0) out.push(`    … (${excerpt.moreBytes.toLocaleString('en-US')} more bytes; --json has the first 4 KiB)`);
  return out;
}

/** Where the verdict row starts on a terminal: under the status. */
const VERDICT_INDENT = ' '.repeat(10);

/**
 * The rows for a person: in a pipe (`terminal` false) one whole line, on a terminal the
 * delivery's row and, when there is more to say, the verdict's; with --print-body the
 * local answer under them.
 */
export function deliveryLines(report: DeliveryReport, options: { terminal: boolean; printBody?: PrintBody; nowMs?: number }): Line[] {
  const { delivery, outcome } = report;
  const url = new URL(outcome.url);
  const clock = options.terminal ? clockTime : (date: Date) => isoSeconds(date.toISOString());
  const row: Cell[] = [
    { at: report.forwardedAt },
    statusCellOf(outcome.status),
    `POST ${url.pathname}${url.search}`,
    `${Math.round(outcome.durationMs)} ms`,
    delivery.event.id,
    delivery.event.type ?? '-',
  ];
  const verdict = verdictText(report, options.nowMs ?? Date.now(), clock);
  const lines: Line[] = [];
  if (options.terminal) {
    lines.push(row);
    const said = [outcome.error, verdict].filter(Boolean).join('; ');
    if (said) lines.push([{ text: `${VERDICT_INDENT}${said}`, tone: 'dim' }]);
  } else {
    if (outcome.error) row.push(outcome.error);
    if (verdict) row.push(`(${verdict})`);
    lines.push(row);
  }
  if (showsBody(report, options.printBody) && outcome.responseBody !== null) lines.push(...bodyLines(outcome.responseBody).map((line): Line => [{ text: line, tone: 'dim' }]));
  return lines;
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
    attempt_recorded: recorded !== undefined && (recorded.attempt_recorded ?? recorded.status !== null),
    late: report.late === true,
    delivery_status: recorded?.status ?? null,
    event_status: recorded?.event_status ?? null,
    next_attempt_at: recorded?.next_attempt_at ?? null,
    ...(showsBody(report, printBody) ? { response_body: outcome.responseBody } : {}),
  };
}
