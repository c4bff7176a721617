import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestTargetCache } from '../src/routes/ingest/target-cache.ts';
import { createEndpoint, signUp, sqlRows, startTestRelay, type TestRelay } from '../../../test/support/relay.ts';

let relay: TestRelay;
let key: string;
beforeAll(async () => {
  relay = await startTestRelay();
  // One account for the whole file, with more endpoints than free allows.
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
});
afterAll(async () => relay.close());

const ingestIdOf = (url: string): string => url.split('/').pop()!;

describe('IngestTargetCache', () => {
  it('sees a change made elsewhere (another relay process) once its entry expires', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const cache = new IngestTargetCache(relay.orm, { ttlMs: 100 });
    const ingestId = ingestIdOf(endpoint.url);
    expect(await cache.get(ingestId)).toMatchObject({ id: endpoint.id, status: 'active', soleDestination: { id: endpoint.destinations[0].id, type: 'cli' } });
    await sqlRows(relay, "update endpoint set status = 'disabled' where id = ?", [endpoint.id]);
    expect((await cache.get(ingestId))?.status).toBe('active');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await cache.get(ingestId))?.status).toBe('disabled');
  });

  it('forgets an entry on invalidate, shares concurrent misses, and does not cache unknown ids', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key);
    const cache = new IngestTargetCache(relay.orm, { ttlMs: 60_000 });
    const ingestId = ingestIdOf(endpoint.url);
    const [first, second] = await Promise.all([cache.get(ingestId), cache.get(ingestId)]);
    expect(first).toBe(second);
    await sqlRows(relay, 'update endpoint set deleted_at = now() where id = ?', [endpoint.id]);
    expect(await cache.get(ingestId)).not.toBeNull();
    cache.invalidate(ingestId);
    expect(await cache.get(ingestId)).toBeNull();
    expect(await cache.get('unknown-ingest-id')).toBeNull();
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
