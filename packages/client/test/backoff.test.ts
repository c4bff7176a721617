import { describe, expect, it } from 'vitest';
import { backoffDelayMs, RECONNECT_BACKOFF } from '../src/backoff.ts';

describe('backoffDelayMs', () => {
  it('starts at 125–250 ms, doubles per retry, stops at 5–10 s', () => {
    const low = (retry: number) => backoffDelayMs(retry, RECONNECT_BACKOFF, () => 0);
    const high = (retry: number) => backoffDelayMs(retry, RECONNECT_BACKOFF, () => 1);
    expect([1, 2, 3, 4].map(low)).toEqual([125, 250, 500, 1000]);
    expect([1, 2, 3, 4].map(high)).toEqual([250, 500, 1000, 2000]);
    expect([7, 8, 50].map(low)).toEqual([5000, 5000, 5000]);
    expect([7, 8, 50].map(high)).toEqual([10_000, 10_000, 10_000]);
  });

  it('takes its own start and cap', () => {
    expect(backoffDelayMs(3, { initialDelayMs: 20, maxDelayMs: 60 }, () => 0.5)).toBe(45);
    expect(backoffDelayMs(1, { initialDelayMs: 20, maxDelayMs: 60 }, () => 0.5)).toBe(15);
  });
});
