import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { IngestTargetCache } from '../src/routes/ingest/target-cache.ts';
import { createEndpoint, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
let key: string;
beforeAll(async () => {
  relay = await startTestRelay();
  // One account for the whole file, with more endpoints than free allows.
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
});
afterAll(async () => relay.close());
afterEach(() => vi.restoreAllMocks());

const ingestIdOf = (url: string): string => url.split('/').pop()!;

type Orm = TestRelay['orm'];
type Find = ReturnType<Orm['em']['fork']>['find'];

/**
 * The relay's ORM as the cache sees it, with its loads counted (one fork per load); when
 * `hold` is given, each load waits for it after reading the endpoint and before reading its
 * destinations, and `endpointRead` settles when the first one got there.
 */
function watchedOrm(hold?: Promise<void>): { orm: Orm; loads: () => number; endpointRead: Promise<void> } {
  let loads = 0;
  const endpointRead = Promise.withResolvers<void>();
  const fork = () => {
    loads++;
    const em = relay.orm.em.fork();
    const find = em.find.bind(em) as Find;
    em.find = (async (...args: Parameters<Find>) => {
      endpointRead.resolve();
      await hold;
      return find(...args);
    }) as Find;
    return em;
  };
  const orm = Object.create(relay.orm, { em: { value: { fork } } }) as Orm;
  return { orm, loads: () => loads, endpointRead: endpointRead.promise };
}

/**
 * Moves the clock the cache reads entry ages from ahead by `ms`. lru-cache 10 keeps the
 * `performance` object it found when loaded, so vi.useFakeTimers (which installs a new one)
 * would not move its clock; this moves that object's `now`, only ever forward.
 */
function clockAhead(): { by: (ms: number) => void } {
  const now = performance.now.bind(performance);
  let ahead = 0;
  vi.spyOn(performance, 'now').mockImplementation(() => now() + ahead);
  return { by: (ms) => { ahead += ms; } };
}

describe('IngestTargetCache', () => {
  it('sees a change made elsewhere (another relay process) once its entry expires', async () => {
    const clock = clockAhead();
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const cache = new IngestTargetCache(relay.orm, { ttlMs: 60_000 });
    const ingestId = ingestIdOf(endpoint.url);
    expect(await cache.get(ingestId)).toMatchObject({ id: endpoint.id, status: 'active', soleDestination: { id: endpoint.destinations[0].id, type: 'cli' } });
    await sqlRows(relay, "update endpoint set status = 'disabled' where id = ?", [endpoint.id]);
    clock.by(30_000);
    expect((await cache.get(ingestId))?.status).toBe('active');
    clock.by(30_000);
    expect((await cache.get(ingestId))?.status).toBe('disabled');
  });

  it('forgets an entry on invalidate and shares concurrent misses', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const { orm, loads } = watchedOrm();
    const cache = new IngestTargetCache(orm, { ttlMs: 60_000 });
    const ingestId = ingestIdOf(endpoint.url);
    const [first, second] = await Promise.all([cache.get(ingestId), cache.get(ingestId)]);
    expect(first).toBe(second);
    expect(loads()).toBe(1);
    await sqlRows(relay, 'update endpoint set deleted_at = now() where id = ?', [endpoint.id]);
    expect(await cache.get(ingestId)).not.toBeNull();
    cache.invalidate(ingestId);
    expect(await cache.get(ingestId)).toBeNull();
    expect(loads()).toBe(2);
  });

  it('does not cache an id that is no endpoint\'s: each lookup reads again, and one created later is found', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const ingestId = ingestIdOf(endpoint.url);
    await sqlRows(relay, 'update endpoint set deleted_at = now() where id = ?', [endpoint.id]);
    const { orm, loads } = watchedOrm();
    const cache = new IngestTargetCache(orm, { ttlMs: 60_000 });
    expect(await cache.get('unknown-ingest-id')).toBeNull();
    expect(await cache.get('unknown-ingest-id')).toBeNull();
    expect(loads()).toBe(2);
    expect(await cache.get(ingestId)).toBeNull();
    await sqlRows(relay, 'update endpoint set deleted_at = null where id = ?', [endpoint.id]);
    expect(await cache.get(ingestId)).toMatchObject({ id: endpoint.id });
  });

  it('does not keep a load that an invalidate overtook: the next lookup reads the change', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const hold = Promise.withResolvers<void>();
    const { orm, loads, endpointRead } = watchedOrm(hold.promise);
    const cache = new IngestTargetCache(orm, { ttlMs: 60_000 });
    const ingestId = ingestIdOf(endpoint.url);
    const inFlight = cache.get(ingestId);
    await endpointRead; // the load has read the endpoint as it was, still active
    await sqlRows(relay, "update endpoint set status = 'disabled' where id = ?", [endpoint.id]);
    cache.invalidate(ingestId);
    hold.resolve();
    // The request that was waiting gets what the load read; the cache does not keep it.
    expect((await inFlight)?.status).toBe('active');
    expect((await cache.get(ingestId))?.status).toBe('disabled');
    expect(loads()).toBe(2);
  });

  it('keeps at most maxEntries ids', async () => {
    const cache = new IngestTargetCache(relay.orm, { ttlMs: 60_000, maxEntries: 2 });
    const endpoints = [await createEndpoint(relay.baseUrl, key), await createEndpoint(relay.baseUrl, key), await createEndpoint(relay.baseUrl, key)];
    for (const endpoint of endpoints) await cache.get(ingestIdOf(endpoint.url));
    await sqlRows(relay, "update endpoint set name = 'x', status = 'paused' where id = ?", [endpoints[0]!.id]);
    // The oldest entry was evicted, so it is read again and shows the change at once.
    expect((await cache.get(ingestIdOf(endpoints[0]!.url)))?.status).toBe('paused');
  });
});
