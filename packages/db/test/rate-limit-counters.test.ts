/**
 * The shared rate-limit counters (rate-limit-counters.ts): exact counts under concurrency
 * from separate connection pools (as separate relay processes would count), windows that
 * start again once ended, and pruning that removes only ended windows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRateLimitedRequest, createOrm, pruneRateLimitCounters, type Orm } from '../src/index.ts';
import type { TestDatabase } from '../src/testing.ts';
import { freshDatabase } from '@hook/test/database';

let database: TestDatabase;
const orms: Orm[] = [];
const orm = (index = 0) => orms[index]!;
const sql = (text: string, params: unknown[] = []) => orm().em.fork().getConnection().execute<any[]>(text, params);

beforeAll(async () => {
  database = await freshDatabase();
  // Separate ORMs have separate pools, as separate relay processes would (two connections each).
  for (let i = 0; i < 4; i++) orms.push(await createOrm({ databaseUrl: database.url, poolMax: 4 }));
  // Each ORM connects through its own first query, as a relay's has long before it counts a request
  // (an ORM whose first use is the named-statement executor's keeps pool connections past close()).
  for (const each of orms) await each.em.fork().getConnection().execute('select 1');
});
afterAll(async () => {
  for (const orm of orms) await orm.close();
  await database.drop();
});

describe('countRateLimitedRequest', () => {
  it('counts every request once when four pools count one key at the same time', async () => {
    const counts = await Promise.all(Array.from({ length: 200 }, (_, i) => countRateLimitedRequest(orm(i % orms.length), 'concurrent', 60_000)));
    // Each request saw a different count: none was lost or counted twice.
    expect(counts.map((result) => result.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    for (const { ttlMs } of counts) {
      expect(ttlMs).toBeGreaterThan(50_000);
      expect(ttlMs).toBeLessThanOrEqual(60_000);
    }
  });

  it('keeps the window of the first request, and starts a new one once it has ended', async () => {
    const first = await countRateLimitedRequest(orm(), 'window', 60_000);
    const second = await countRateLimitedRequest(orm(1), 'window', 60_000);
    expect([first.count, second.count]).toEqual([1, 2]);
    expect(second.ttlMs).toBeLessThanOrEqual(first.ttlMs);
    await sql("update rate_limit_counter set expires_at = now() - interval '1 second' where key = 'window'");
    const after = await countRateLimitedRequest(orm(2), 'window', 60_000);
    expect(after.count).toBe(1);
    expect(after.ttlMs).toBeGreaterThan(59_000);
    // Another key has its own count.
    expect((await countRateLimitedRequest(orm(), 'other', 60_000)).count).toBe(1);
  });

  it('keeps its counts in an unlogged table (no WAL per request)', async () => {
    expect(await sql("select relpersistence from pg_class where relname = 'rate_limit_counter'")).toEqual([{ relpersistence: 'u' }]);
  });
});

describe('pruneRateLimitCounters', () => {
  it('removes the rows whose window has ended and keeps the others', async () => {
    await countRateLimitedRequest(orm(), 'prune-live', 60_000);
    await countRateLimitedRequest(orm(), 'prune-ended', 60_000);
    await sql("update rate_limit_counter set expires_at = now() - interval '1 second' where key = 'prune-ended'");
    expect(await pruneRateLimitCounters(orm())).toBeGreaterThanOrEqual(1);
    const keys = (await sql("select key from rate_limit_counter where key like 'prune-%'")).map((row) => row.key);
    expect(keys).toEqual(['prune-live']);
    expect(await pruneRateLimitCounters(orm())).toBe(0);
  });
});
