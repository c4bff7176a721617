import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_SCHEDULE_MS, forwardableHeaders, isPrivateAddress, isPrivateHostname, isSuccessStatus, withoutHopByHop, MAX_RETRY_AFTER_MS, parseDuration,
  parseRetryAfter, parseRetrySchedule, retryDelayMs, stateAfterAttempt, type DeliveryState,
} from '../src/index.ts';

const middle = (): number => 0.5; // no jitter
const schedule = parseRetrySchedule('100ms,2s,5m');

describe('retry schedule', () => {
  it('parses durations and schedules', () => {
    expect(parseDuration('2h8m')).toBe(2 * 3_600_000 + 8 * 60_000);
    expect(parseDuration('100ms')).toBe(100);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDuration('5')).toBeNull();
    expect(parseDuration('m5')).toBeNull();
    expect(schedule).toEqual([100, 2000, 300_000]);
    expect(DEFAULT_RETRY_SCHEDULE_MS).toEqual([30_000, 120_000, 480_000, 1_920_000, 7_680_000, 30_720_000]);
    expect(() => parseRetrySchedule('30s,,2m')).toThrow(/empty step/);
    expect(() => parseRetrySchedule('30s,soon')).toThrow(/"soon" is not a duration/);
    expect(() => parseRetrySchedule('0s')).toThrow(/not a duration/);
  });

  it('jitters each delay within ±10%', () => {
    expect(retryDelayMs(schedule, 2, middle)).toBe(2000);
    expect(retryDelayMs(schedule, 2, () => 0)).toBe(1800);
    expect(retryDelayMs(schedule, 2, () => 0.999999)).toBe(2200);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});

describe('stateAfterAttempt', () => {
  const now = 1_000_000;
  const pending: DeliveryState = { status: 'pending', autoAttempts: 0 };

  it('delivers on 2xx', () => {
    expect(stateAfterAttempt(pending, 'auto', { ok: true }, schedule, now, middle)).toEqual({ status: 'delivered', autoAttempts: 1, nextAttemptAtMs: null });
  });

  it.each(['auto', 'listen'] as const)('walks the schedule with %s attempts, then fails after the last retry', (trigger) => {
    let state: DeliveryState = pending;
    const waits: number[] = [];
    for (let attempt = 1; attempt <= schedule.length + 1; attempt++) {
      const next = stateAfterAttempt(state, trigger, { ok: false }, schedule, now, middle);
      if (next.nextAttemptAtMs !== null) waits.push(next.nextAttemptAtMs - now);
      state = next;
    }
    expect(waits).toEqual(schedule);
    expect(state).toEqual({ status: 'failed', autoAttempts: schedule.length + 1, nextAttemptAtMs: null });
  });

  it('honours Retry-After when longer than the schedule, capped at a day', () => {
    expect(stateAfterAttempt(pending, 'auto', { ok: false, retryAfterMs: 60_000 }, schedule, now, middle).nextAttemptAtMs).toBe(now + 60_000);
    expect(stateAfterAttempt(pending, 'auto', { ok: false, retryAfterMs: 10 }, schedule, now, middle).nextAttemptAtMs).toBe(now + 100);
    expect(stateAfterAttempt(pending, 'auto', { ok: false, retryAfterMs: 10 * MAX_RETRY_AFTER_MS }, schedule, now, middle).nextAttemptAtMs).toBe(now + MAX_RETRY_AFTER_MS);
  });

  it('replays: success delivers; failure keeps a scheduled event scheduled and leaves a finished one failed', () => {
    const failed: DeliveryState = { status: 'failed', autoAttempts: 4 };
    expect(stateAfterAttempt(failed, 'replay', { ok: true }, schedule, now, middle)).toEqual({ status: 'delivered', autoAttempts: 4, nextAttemptAtMs: null });
    expect(stateAfterAttempt(failed, 'replay', { ok: false }, schedule, now, middle)).toEqual({ status: 'failed', autoAttempts: 4, nextAttemptAtMs: null });
    expect(stateAfterAttempt({ status: 'delivered', autoAttempts: 1 }, 'replay', { ok: false }, schedule, now, middle).status).toBe('failed');
    expect(stateAfterAttempt({ status: 'retrying', autoAttempts: 2 }, 'replay', { ok: false }, schedule, now, middle)).toEqual({ status: 'retrying', autoAttempts: 2, nextAttemptAtMs: now + 2000 });
    expect(stateAfterAttempt(pending, 'replay', { ok: false }, schedule, now, middle)).toEqual({ status: 'pending', autoAttempts: 0, nextAttemptAtMs: now });
  });
});

describe('forwardableHeaders', () => {
  it('drops hop-by-hop headers, those named by Connection, and the relay\'s own', () => {
    expect(
      forwardableHeaders({
        host: 'relay', 'content-length': '5', connection: 'keep-alive, x-trace', 'keep-alive': 'timeout=5', 'x-trace': '1',
        'transfer-encoding': 'chunked', 'webhook-signature': 'v1,forged', 'content-type': 'application/json', 'stripe-signature': 't=1,v1=x',
      }),
    ).toEqual({ 'content-type': 'application/json', 'stripe-signature': 't=1,v1=x' });
  });
});

describe('withoutHopByHop', () => {
  it('drops hop-by-hop headers and those named by Connection, whatever their case, and keeps the relay\'s own', () => {
    expect(
      withoutHopByHop({
        Host: 'relay', 'Content-Length': '5', Connection: 'Keep-Alive, X-Trace', 'keep-alive': 'timeout=5', 'x-trace': '1', TE: 'trailers',
        'transfer-encoding': 'chunked', 'webhook-signature': 'v1,abc', 'x-hook-attempt': '2', 'Content-Type': 'application/json',
      }),
    ).toEqual({ 'webhook-signature': 'v1,abc', 'x-hook-attempt': '2', 'Content-Type': 'application/json' });
  });
});

describe('private destinations', () => {
  it('knows private, loopback, link-local, metadata and reserved addresses', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:a9fe:a9fe', '64:ff9b::10.0.0.1', '64:ff9b::a9fe:a9fe', 'not-an-ip']) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::6810:85e5', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });

  it('allows only global unicast IPv6, judging mapped and NAT64 addresses by their IPv4 address and refusing other transition ranges', () => {
    for (const address of [
      '0:0:0:0:0:ffff:a00:1', '::ffff:0:a00:1', '::a00:1', '::127.0.0.1', // IPv4-mapped (another spelling), translated, IPv4-compatible
      '64:ff9b::7f00:1', '64:ff9b:1::a00:1', '64:ff9b:1::808:808', // NAT64: the well-known prefix by its IPv4 address; local-use always
      '2002:a00:1::1', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', // 6to4 and Teredo, whatever they embed
      'fec0::1', '2001:db8::1', '3fff::1', '100::1', 'fe80::1%eth0', 'ff02::1', '4000::1', // site-local, documentation, discard, link-local, multicast, unassigned
      '255.255.255.255', '192.88.99.1', '198.18.0.1', '240.0.0.1',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ['2606:4700:4700::1111', '2a00:1450:4001:82a::200e', '2001:4860:4860::8888', '0:0:0:0:0:ffff:808:808']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });

  it('knows host names that always mean this machine or a metadata service', () => {
    for (const host of ['localhost', 'api.localhost', 'LOCALHOST.', 'metadata.google.internal', '[::1]', '127.0.0.1']) expect(isPrivateHostname(host), host).toBe(true);
    for (const host of ['example.com', '8.8.8.8']) expect(isPrivateHostname(host), host).toBe(false);
  });
});

describe('isSuccessStatus', () => {
  it('is true for 2xx only', () => {
    expect([200, 201, 204, 299].map(isSuccessStatus)).toEqual([true, true, true, true]);
    expect([100, 199, 300, 302, 404, 500].map(isSuccessStatus)).toEqual([false, false, false, false, false, false]);
    expect(isSuccessStatus(null)).toBe(false);
    expect(isSuccessStatus(undefined)).toBe(false);
  });
});
