import { describe, expect, it } from 'vitest';
import { firstIdAt, idTimeMs, isId, newId, newIngestId, newUlid } from '../src/index.ts';

describe('ids', () => {
  it('carries its prefix and a 26-character ULID', () => {
    const id = newId('event');
    expect(id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(isId('event', id)).toBe(true);
    expect(isId('endpoint', id)).toBe(false);
    expect(isId('event', 'evt_not-an-id')).toBe(false);
  });

  it('sorts in creation order, even many in one millisecond', () => {
    const ids = Array.from({ length: 2000 }, () => newId('event', 1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('sorts by time across milliseconds and encodes the time', () => {
    const earlier = newUlid(1_700_000_000_000);
    const later = newUlid(1_700_000_000_001);
    expect(earlier < later).toBe(true);
    // A clock that steps back never makes an id sort before one already issued.
    const future = Date.now() + 60_000;
    expect(idTimeMs(newId('account', future))).toBe(future);
    expect(idTimeMs(newId('account', future - 5_000))).toBe(future);
  });

  it('makes ingest ids of at least 128 random bits', () => {
    const ingestId = newIngestId();
    expect(Buffer.from(ingestId, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
    expect(ingestId).not.toEqual(newIngestId());
  });
});

describe('firstIdAt', () => {
  it('is the lower bound of the ids made at that time or later', () => {
    const timeMs = Date.UTC(2026, 10, 22, 12, 0, 0);
    const floor = firstIdAt('event', timeMs);
    expect(isId('event', floor)).toBe(true);
    expect(idTimeMs(floor)).toBe(timeMs);
    expect(newId('event', timeMs + 1) > floor).toBe(true);
    expect(firstIdAt('event', timeMs - 1) < floor).toBe(true);
  });
});
