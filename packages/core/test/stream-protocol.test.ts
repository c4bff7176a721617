import { describe, expect, it } from 'vitest';
import { parseClientMessage } from '../src/stream-protocol.ts';

const result = { type: 'result', version: 1, delivery_id: 'ses_1.3', status: 200, duration_ms: 4 };

describe('parseClientMessage', () => {
  it('takes a late result naming the event, attempt and when it was forwarded (docs/listen.md#a-stalled-listener)', () => {
    const late = { event_id: 'evt_01M8D4TZT8CPCZC44ZDSVFJ5GM', attempt: 2, forwarded_at: '2026-11-27T00:00:41.120Z' };
    expect(parseClientMessage(JSON.stringify({ ...result, late }))).toEqual({ ok: true, message: { ...result, late } });
    expect(parseClientMessage(JSON.stringify(result))).toEqual({ ok: true, message: result });
  });

  it('refuses a late result that does not say which attempt of which event, or when', () => {
    for (const late of [null, 'evt_1', { attempt: 1, forwarded_at: '2026-11-27T00:00:41Z' }, { event_id: 'evt_1', attempt: 0, forwarded_at: '2026-11-27T00:00:41Z' },
      { event_id: 'evt_1', attempt: 1.5, forwarded_at: '2026-11-27T00:00:41Z' }, { event_id: 'evt_1', attempt: 1, forwarded_at: 'yesterday' }, { event_id: 'evt_1', attempt: 1 }]) {
      expect(parseClientMessage(JSON.stringify({ ...result, late })), JSON.stringify(late)).toEqual({ ok: false, problem: expect.stringContaining('result.late') });
    }
  });
});
