/** The rules that decide whether a read replica may serve a read (read-replicas.ts); the real replica is tested in apps/relay/test/read-replicas.test.ts. */
import { describe, expect, it } from 'vitest';
import { chooseReplica, parseLsn, replicaCheckIntervalMs, replicaName, replicaProgress, type PrimaryPosition } from '../src/read-replicas.ts';

describe('parseLsn', () => {
  it('orders WAL positions as PostgreSQL does, across the 32-bit halves', () => {
    expect(parseLsn('0/16B3748')).toBe(0x16b3748n);
    expect(parseLsn('16/B374D848')).toBe(0x16b374d848n);
    expect(parseLsn('1/0') > parseLsn('0/FFFFFFFF')).toBe(true);
    expect(() => parseLsn('16B374D848')).toThrow(/not a WAL position/);
  });
});

describe('replicaProgress', () => {
  const positions: PrimaryPosition[] = [{ atMs: 1000, lsn: 100n }, { atMs: 2000, lsn: 200n }, { atMs: 3000, lsn: 300n }];

  it('has no lag once the replica has replayed the newest position', () => {
    expect(replicaProgress(positions, 300n, 3010, null)).toEqual({ caughtUpToMs: 3000, lagMs: 0 });
    expect(replicaProgress(positions, 350n, 3010, null)).toEqual({ caughtUpToMs: 3000, lagMs: 0 });
  });

  it('holds the commits before the newest position it has replayed, and lags by the time since', () => {
    expect(replicaProgress(positions, 250n, 3010, null)).toEqual({ caughtUpToMs: 2000, lagMs: 1010 });
  });

  it('keeps what was known when the positions it passed are no longer listed (replay only moves forward)', () => {
    expect(replicaProgress(positions, 50n, 3010, 900)).toEqual({ caughtUpToMs: 900, lagMs: 2110 });
  });

  it('behind every known position and with nothing known, it lags at least since the oldest', () => {
    expect(replicaProgress(positions, 50n, 3010, null)).toEqual({ caughtUpToMs: null, lagMs: 2010 });
  });

  it('an idle primary (the same position again) leaves a caught-up replica at no lag', () => {
    const idle: PrimaryPosition[] = [{ atMs: 1000, lsn: 100n }, { atMs: 2000, lsn: 100n }];
    expect(replicaProgress(idle, 100n, 2005, null)).toEqual({ caughtUpToMs: 2000, lagMs: 0 });
  });
});

describe('chooseReplica', () => {
  const now = 10_000;
  const options = { nowMs: now, maxLagMs: 5000, writtenAtMs: undefined, start: 0 };

  it('takes a replica that answers and holds every commit older than the bound', () => {
    expect(chooseReplica([{ up: true, caughtUpToMs: now - 100 }], options)).toEqual({ index: 0 });
    expect(chooseReplica([{ up: true, caughtUpToMs: now - 5000 }], options)).toEqual({ index: 0 });
  });

  it('skips a replica past the lag bound, and one that does not answer', () => {
    expect(chooseReplica([{ up: true, caughtUpToMs: now - 5001 }], options)).toEqual({ reason: 'lagging' });
    expect(chooseReplica([{ up: false, caughtUpToMs: now - 10 }, { up: true, caughtUpToMs: null }], options)).toEqual({ reason: 'down' });
    expect(chooseReplica([], options)).toEqual({ reason: 'down' });
    expect(chooseReplica([{ up: false, caughtUpToMs: now }, { up: true, caughtUpToMs: now - 100 }], options)).toEqual({ index: 1 });
  });

  it("reads the primary until a replica holds the account's last write (read-your-writes)", () => {
    const replicas = [{ up: true, caughtUpToMs: now - 500 }, { up: true, caughtUpToMs: now - 100 }];
    expect(chooseReplica(replicas, { ...options, writtenAtMs: now - 300 })).toEqual({ index: 1 });
    expect(chooseReplica(replicas, { ...options, writtenAtMs: now - 100 })).toEqual({ reason: 'own_write' });
    expect(chooseReplica(replicas, { ...options, writtenAtMs: now - 50 })).toEqual({ reason: 'own_write' });
    expect(chooseReplica(replicas, { ...options, writtenAtMs: now - 501 })).toEqual({ index: 0 });
  });

  it('spreads reads over the replicas that may serve them', () => {
    const replicas = [{ up: true, caughtUpToMs: now }, { up: true, caughtUpToMs: now }, { up: false, caughtUpToMs: now }];
    expect([0, 1, 2, 3].map((start) => chooseReplica(replicas, { ...options, start }))).toEqual([{ index: 0 }, { index: 1 }, { index: 0 }, { index: 0 }]);
  });
});

describe('replicaCheckIntervalMs and replicaName', () => {
  it('checks often enough that a caught-up replica never looks older than the bound', () => {
    expect(replicaCheckIntervalMs(5000)).toBe(1000);
    expect(replicaCheckIntervalMs(2000)).toBe(400);
    expect(replicaCheckIntervalMs(100)).toBe(100);
  });

  it('names a replica by host, port and database, never its credentials', () => {
    expect(replicaName('postgres://hook:secret@replica-1.internal:6432/hook')).toBe('replica-1.internal:6432/hook');
    expect(replicaName('postgresql://replica-2/hook?sslmode=require')).toBe('replica-2:5432/hook');
  });
});
