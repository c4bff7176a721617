import { describe, expect, it } from 'vitest';
import { nextUsageMonthStart, usageMonth } from '../src/index.ts';

describe('usageMonth', () => {
  it('names the UTC month of each moment, whichever month was asked for before it', () => {
    const moments = ['2026-11-30T23:59:59.999Z', '2026-12-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z', '2026-10-31T23:59:59.999Z', '2026-11-15T12:00:00.000Z', '2024-02-29T12:00:00.000Z', '2026-12-31T23:59:59.999Z', '2027-01-01T00:00:00.000Z'];
    expect(moments.map((moment) => usageMonth(new Date(moment)))).toEqual(['2026-11-01', '2026-12-01', '2026-11-01', '2026-10-01', '2026-11-01', '2024-02-01', '2026-12-01', '2027-01-01']);
    // every millisecond around a month's edges, asked in and out of order
    const edge = nextUsageMonthStart(new Date('2026-11-20T00:00:00Z')).getTime();
    for (const offset of [-2, 1, -1, 0, 2, -1]) expect(usageMonth(new Date(edge + offset))).toBe(offset < 0 ? '2026-11-01' : '2026-12-01');
  });

  it('refuses an invalid date', () => {
    expect(() => usageMonth(new Date(Number.NaN))).toThrow(RangeError);
  });
});
