import { describe, expect, it } from 'vitest';
import type { DeliveryMessage, RecordedMessage } from '@hook/core';
import { deliveryLines, deliveryRecord, waitText, type DeliveryReport } from '../src/forward/delivery-report.ts';
import { STREAM_BODY_LIMITS } from '../src/output/body.ts';
import { plainLine } from '../src/output/view.ts';

const NOW_MS = Date.parse('2026-11-25T13:03:12.000Z');

const delivery: DeliveryMessage = {
  type: 'delivery',
  version: 1,
  delivery_id: 'ses_1.1',
  attempt: 1,
  event: {
    id: 'evt_01M80PKE2V3WJ6R0S3QXW1M2ZB', endpoint_id: 'ep_1', type: 'charge.failed', method: 'POST', path: '/stripe', query: '',
    content_type: 'application/json', size: 2, received_at: '2026-11-25T13:03:11.900Z', status: 'pending',
  },
  headers: {},
  body_base64: '',
};

function recorded(fields: Partial<RecordedMessage>): RecordedMessage {
  return {
    type: 'recorded', version: 1, delivery_id: 'ses_1.1', event_id: delivery.event.id, attempt: 1, trigger: 'listen',
    status: 'retrying', event_status: 'retrying', next_attempt_at: '2026-11-25T13:03:42.000Z', error: null, ...fields,
  };
}

function report(fields: Partial<DeliveryReport> & { status?: number | null; body?: string | null; error?: string | null }): DeliveryReport {
  const { status = 500, body = 'boom', error = null, ...rest } = fields;
  return {
    delivery,
    outcome: { url: 'http://127.0.0.1:3000/webhooks/stripe', status, durationMs: 12.4, error, responseBody: body },
    forwardedAt: '2026-11-25T13:03:12.000Z',
    reported: true,
    recorded: recorded({}),
    ...rest,
  };
}

/** The rows a pipe gets, as text. */
function piped(value: DeliveryReport, printBody?: 'failed' | 'all'): string[] {
  return deliveryLines(value, { terminal: false, printBody, nowMs: NOW_MS }).map(plainLine);
}

describe('waitText', () => {
  it('says a wait as people do', () => {
    expect([400, 30_000, 89_000, 120_000, 7_680_000, 7_200_000].map(waitText)).toEqual(['0 s', '30 s', '1 min', '2 min', '2 h 8 min', '2 h']);
  });
});

describe('deliveryLines in a pipe', () => {
  it('puts the relay\'s verdict at the end of the one line: the attempt and when the next retry is due', () => {
    expect(piped(report({}))).toEqual([
      '2026-11-25T13:03:12Z  500  POST /webhooks/stripe  12 ms  evt_01M80PKE2V3WJ6R0S3QXW1M2ZB  charge.failed  (attempt 1; next retry in 30 s at 2026-11-25T13:03:42Z)',
    ]);
  });

  it('says when the retries ran out, marks replays and later attempts, and says nothing more for a first success', () => {
    expect(piped(report({ recorded: recorded({ attempt: 7, status: 'failed', next_attempt_at: null }) }))[0]).toMatch(/  \(attempt 7; retries exhausted: failed\)$/);
    expect(piped(report({ status: 200, recorded: recorded({ attempt: 8, trigger: 'replay', status: 'delivered', next_attempt_at: null }) }))[0]).toMatch(/charge\.failed  \(replay; attempt 8\)$/);
    expect(piped(report({ status: 200, recorded: recorded({ attempt: 3, status: 'delivered', next_attempt_at: null }) }))[0]).toMatch(/charge\.failed  \(attempt 3\)$/);
    expect(piped(report({ status: 200, recorded: recorded({ status: 'delivered', next_attempt_at: null }) }))[0]).toMatch(/charge\.failed$/);
  });

  it('says why there is no verdict: a mirror copy, a lost connection, a late answer', () => {
    expect(piped(report({ delivery: { ...delivery, mirror: true }, recorded: undefined }))[0]).toMatch(/\(mirror copy: your answer is not recorded\)$/);
    expect(piped(report({ reported: false, recorded: undefined }))[0]).toMatch(/\(connection lost before the result was sent; the relay will offer it again\)$/);
    expect(piped(report({ recorded: undefined, unconfirmed: 'connection_lost' }))[0]).toMatch(/\(result sent; connection lost before the relay confirmed it\)$/);
    expect(piped(report({ recorded: recorded({ status: null, event_status: null, next_attempt_at: null, error: 'too late' }) }))[0]).toMatch(/\(not recorded: too late\)$/);
    // An answer that came after its connection was lost went on the next one: recorded as an attempt, deciding or not.
    expect(piped(report({ recorded: recorded({ status: null, event_status: null, next_attempt_at: null, error: 'offered again', attempt_recorded: true }) }))[0]).toMatch(/\(attempt 1 recorded, not deciding: offered again\)$/);
    expect(piped(report({ late: true, status: 200, recorded: recorded({ status: 'delivered', next_attempt_at: null, attempt_recorded: true }) }))[0]).toMatch(/\(answer sent after a reconnect\)$/);
  });

  it('shows ERR and the reason when the local server did not answer', () => {
    const [line] = piped(report({ status: null, body: null, error: 'connection refused: nothing listens on 127.0.0.1:3000' }));
    expect(line).toMatch(/  ERR  POST .*charge\.failed  connection refused: nothing listens on 127\.0\.0\.1:3000  \(attempt 1; next retry/);
  });
});

describe('deliveryLines on a terminal', () => {
  it('gives the verdict a row of its own, under the status', () => {
    const lines = deliveryLines(report({ status: null, body: null, error: 'refused' }), { terminal: true, nowMs: NOW_MS });
    expect(lines).toHaveLength(2);
    expect(lines[0]![1]).toEqual({ text: 'ERR', tone: 'bad' });
    expect(plainLine(lines[1]!)).toBe(`${' '.repeat(10)}refused; attempt 1; next retry in 30 s at ${new Date(Date.parse('2026-11-25T13:03:42Z')).toTimeString().slice(0, 8)}`);
    const ok = deliveryLines(report({ status: 200, recorded: recorded({ status: 'delivered', next_attempt_at: null }) }), { terminal: true, nowMs: NOW_MS });
    expect(ok).toHaveLength(1);
    expect(ok[0]![1]).toEqual({ text: '200', tone: 'good' });
    expect(deliveryLines(report({ status: 404 }), { terminal: true, nowMs: NOW_MS })[0]![1]).toEqual({ text: '404', tone: 'warn' });
  });
});

describe('--print-body', () => {
  it('shows the answer under failed deliveries only, or under all of them', () => {
    expect(piped(report({ body: 'Error: boom\n  at handler' }), 'failed').slice(1)).toEqual(['    Error: boom', '      at handler']);
    expect(piped(report({ status: 200, body: 'ok' }), 'failed')).toHaveLength(1);
    expect(piped(report({ status: 200, body: 'ok' }), 'all').slice(1)).toEqual(['    ok']);
    expect(piped(report({ body: '' }), 'failed').slice(1)).toEqual(['    (empty answer)']);
    expect(piped(report({ body: 'no print' }))).toHaveLength(1);
  });

  it('cuts a long answer, says how much more there was, and never lets it drive the terminal', () => {
    const long = piped(report({ body: 'x'.repeat(STREAM_BODY_LIMITS.chars + 500) }), 'failed');
    expect(long.slice(1)).toEqual([`    ${'x'.repeat(STREAM_BODY_LIMITS.chars)}`, '    … (500 more bytes; --json has the first 4 KiB)']);
    const tall = piped(report({ body: Array.from({ length: 30 }, (_, n) => `line ${n}`).join('\n') }), 'failed');
    expect(tall).toHaveLength(1 + STREAM_BODY_LIMITS.lines + 1);
    expect(tall.at(-1)).toMatch(/^    … \(\d+ more bytes/);
    expect(piped(report({ body: 'red \u001b[31mtext\u0007\tend' }), 'failed')[1]).toBe('    red \uFFFD[31mtext\uFFFD  end');
  });
});

describe('deliveryRecord', () => {
  it('carries the relay\'s verdict, and the answer only with --print-body', () => {
    expect(deliveryRecord(report({}), undefined)).toEqual({
      type: 'delivery', event_id: delivery.event.id, delivery_id: 'ses_1.1', attempt: 1, event_type: 'charge.failed', received_at: delivery.event.received_at,
      forwarded_at: '2026-11-25T13:03:12.000Z', method: 'POST', url: 'http://127.0.0.1:3000/webhooks/stripe', status: 500, duration_ms: 12.4, error: null,
      reported: true, mirror: false, trigger: 'listen', recorded: true, attempt_recorded: true, late: false, delivery_status: 'retrying', event_status: 'retrying', next_attempt_at: '2026-11-25T13:03:42.000Z',
    });
    expect(deliveryRecord(report({}), 'failed').response_body).toBe('boom');
    expect(deliveryRecord(report({ recorded: undefined, unconfirmed: 'connection_lost' }), undefined)).toMatchObject({ recorded: false, trigger: null, delivery_status: null, next_attempt_at: null });
  });
});
