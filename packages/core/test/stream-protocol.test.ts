import { describe, expect, it } from 'vitest';
import { parseClientMessages, STREAM_BATCH_MAX_MESSAGES } from '../src/stream-protocol.ts';

const result = { type: 'result', version: 1, delivery_id: 'ses_1.3', status: 200, duration_ms: 4 };

describe('parseClientMessages', () => {
  it('takes a late result naming the event, attempt and when it was forwarded (docs/listen.md#a-stalled-listener)', () => {
    const late = { event_id: 'evt_01M8D4TZT8CPCZC44ZDSVFJ5GM', attempt: 2, forwarded_at: '2026-11-27T00:00:41.120Z' };
    expect(parseClientMessages(JSON.stringify({ ...result, late }))).toEqual({ ok: true, messages: [{ ...result, late }] });
    expect(parseClientMessages(JSON.stringify(result))).toEqual({ ok: true, messages: [result] });
  });

  it('refuses a late result that does not say which attempt of which event, or when', () => {
    for (const late of [null, 'evt_1', { attempt: 1, forwarded_at: '2026-11-27T00:00:41Z' }, { event_id: 'evt_1', attempt: 0, forwarded_at: '2026-11-27T00:00:41Z' },
      { event_id: 'evt_1', attempt: 1.5, forwarded_at: '2026-11-27T00:00:41Z' }, { event_id: 'evt_1', attempt: 1, forwarded_at: 'yesterday' }, { event_id: 'evt_1', attempt: 1 }]) {
      expect(parseClientMessages(JSON.stringify({ ...result, late })), JSON.stringify(late)).toEqual({ ok: false, problem: expect.stringContaining('result.late') });
    }
  });

  it('reads a batch into its results, in order', () => {
    const second = { ...result, delivery_id: 'ses_1.4', status: null, error: 'connection refused' };
    expect(parseClientMessages(JSON.stringify({ type: 'batch', version: 1, messages: [result, second] }))).toEqual({ ok: true, messages: [result, second] });
  });

  it('refuses a batch with anything but results in it, nested batches, or too many, naming the place', () => {
    expect(parseClientMessages(JSON.stringify({ type: 'batch', version: 1, messages: [result, { ...result, status: 99 }] }))).toEqual({ ok: false, problem: expect.stringMatching(/^batch\.messages\[1\]: result\.status/) });
    expect(parseClientMessages(JSON.stringify({ type: 'batch', version: 1, messages: [{ type: 'batch', version: 1, messages: [] }] }))).toEqual({ ok: false, problem: expect.stringContaining('batch.messages[0]: unknown message type "batch"') });
    expect(parseClientMessages(JSON.stringify({ type: 'batch', version: 1, messages: [7] }))).toEqual({ ok: false, problem: 'batch.messages[0]: not a JSON object' });
    expect(parseClientMessages(JSON.stringify({ type: 'batch', version: 1, messages: Array.from({ length: STREAM_BATCH_MAX_MESSAGES + 1 }, () => result) }))).toEqual({ ok: false, problem: expect.stringContaining('at most') });
    expect(parseClientMessages(JSON.stringify([result]))).toEqual({ ok: false, problem: 'not a JSON object' });
  });
});
