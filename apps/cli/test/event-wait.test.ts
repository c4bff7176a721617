import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from 'commander';
import { countsFrom, parseSince, parseTimeout } from '../src/event-wait.ts';

describe('hook events wait: --timeout', () => {
  it('takes 30s, 2m, 500ms, 1m30s and plain seconds', () => {
    expect(parseTimeout('30s')).toBe(30_000);
    expect(parseTimeout('2m')).toBe(120_000);
    expect(parseTimeout('500ms')).toBe(500);
    expect(parseTimeout('1m30s')).toBe(90_000);
    expect(parseTimeout('45')).toBe(45_000);
    expect(parseTimeout('2.5')).toBe(2_500);
    expect(parseTimeout('0')).toBe(0);
  });

  it('refuses anything else as a usage error naming the forms it takes', () => {
    for (const value of ['30x', '-5', 'soon', '', '1.5m', '30 s']) {
      expect(() => parseTimeout(value), value).toThrow(InvalidArgumentError);
      expect(() => parseTimeout(value), value).toThrow(/30s, 2m or 500ms, or plain seconds/);
    }
  });
});

describe('hook events wait: which events count', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  const since = parseSince(() => now);
  const at = (id: string, received: string) => ({ id, received_at: received });

  it('--since an event id counts that event and later ones', () => {
    const start = since('evt_01JN0000000000000000000002');
    expect(start).toEqual({ kind: 'event', id: 'evt_01JN0000000000000000000002' });
    expect(countsFrom(start, at('evt_01JN0000000000000000000002', '2026-03-01T11:00:00Z'))).toBe(true);
    expect(countsFrom(start, at('evt_01JN0000000000000000000003', '2026-03-01T11:00:00Z'))).toBe(true);
    expect(countsFrom(start, at('evt_01JN0000000000000000000001', '2026-03-01T11:00:00Z'))).toBe(false);
  });

  it('--since a time or a duration ago counts events received at or after it', () => {
    expect(since('10m')).toEqual({ kind: 'time', at: '2026-03-01T11:50:00.000Z' });
    const start = since('2026-03-01T11:00:00Z');
    expect(countsFrom(start, at('evt_01JN0000000000000000000001', '2026-03-01T11:00:00.000Z'))).toBe(true);
    expect(countsFrom(start, at('evt_01JN0000000000000000000001', '2026-03-01T10:59:59.999Z'))).toBe(false);
    expect(() => since('evt_nope')).toThrow(/event id \(evt_…\) or a time/);
    expect(() => since('yesterday')).toThrow(InvalidArgumentError);
  });

  it('by default counts only events that were not among the newest when the wait began', () => {
    const few = { kind: 'snapshot' as const, seen: new Set(['evt_01JN0000000000000000000005']), floorId: null };
    expect(countsFrom(few, at('evt_01JN0000000000000000000005', ''))).toBe(false);
    expect(countsFrom(few, at('evt_01JN0000000000000000000006', ''))).toBe(true);
    // With more events than one page held, anything older than the page's oldest existed already.
    const many = { kind: 'snapshot' as const, seen: new Set(['evt_01JN0000000000000000000009', 'evt_01JN0000000000000000000007']), floorId: 'evt_01JN0000000000000000000007' };
    expect(countsFrom(many, at('evt_01JN0000000000000000000008', ''))).toBe(true);
    expect(countsFrom(many, at('evt_01JN0000000000000000000006', ''))).toBe(false);
  });
});
