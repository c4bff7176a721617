/**
 * Read replicas against a real streaming replica (test/support/streaming-replica.ts):
 * event lists are read from it, a client reads back what it just wrote, a replica past
 * the lag bound or stopped is skipped without an error, and the lag is a metric.
 *
 * The proof that a list came from the replica: its replay is paused, so an event
 * received afterwards is on the primary only, and a list without it was read there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createOrm, migrateToLatest, replicaName, type Orm } from '@hook/db';
import { buildApp } from '../src/app.ts';
import { loadConfig, type RelayConfig } from '../src/config.ts';
import { api, createEndpoint, sendEvent, signUp } from '@hook/test/relay';
import { checkResponses, type ResponseCheck } from '@hook/test/response-check';
import { TEST_SECRET_KEY_BYTES } from '@hook/test/secret-key';
import { startStreamingReplica, type StreamingReplicaPair } from '@hook/test/streaming-replica';

/** Short, so that the lagging case waits little; checks run every 600 ms (a fifth of it). */
const MAX_LAG_MS = 3000;

let pair: StreamingReplicaPair;
let orm: Orm;
let app: FastifyInstance;
let responses: ResponseCheck;
let baseUrl: string;
let replica: string;
let key: string;
let ingestUrl: string;
/** An event received while the replica's replay was paused: on the primary only until it resumes. */
let unreplicatedEventId: string;

beforeAll(async () => {
  pair = await startStreamingReplica({
    prepare: async (url) => {
      const migrating = await createOrm({ databaseUrl: url, poolMax: 2 });
      try {
        await migrateToLatest(migrating);
      } finally {
        await migrating.close();
      }
    },
  });
  replica = replicaName(pair.replicaUrl);
  orm = await createOrm({ databaseUrl: pair.primaryUrl, secretKey: TEST_SECRET_KEY_BYTES });
  const config: RelayConfig = {
    ...loadConfig({}),
    databaseUrl: pair.primaryUrl,
    databaseReadUrls: [pair.replicaUrl],
    databaseReadMaxLagMs: MAX_LAG_MS,
    secretKey: TEST_SECRET_KEY_BYTES,
    port: 0,
    signupsPerAddressPerHour: 0,
  };
  app = await buildApp({ config, orm });
  responses = checkResponses(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  ({ key } = await signUp(baseUrl));
  ingestUrl = (await createEndpoint(baseUrl, key, { name: 'replicated' })).url;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await orm?.close();
  await pair?.close();
  expect(responses?.drifts ?? []).toEqual([]);
});

/** This relay's metric samples, `name{labels}` → value. */
async function scrape(): Promise<Map<string, number>> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return new Map(text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).map((line) => {
    const space = line.lastIndexOf(' ');
    return [line.slice(0, space), Number(line.slice(space + 1))];
  }));
}

const replicaReads = async (): Promise<number> => (await scrape()).get(`hook_db_replica_reads_total{replica="${replica}"}`) ?? 0;
const fallbacks = async (reason: string): Promise<number> => (await scrape()).get(`hook_db_replica_fallbacks_total{reason="${reason}"}`) ?? 0;

/** GET /v1/events (must answer 200): the ids listed. */
async function listedIds(query = ''): Promise<string[]> {
  const page = await api(baseUrl, 'GET', `/v1/events${query}`, { key });
  expect(page.status, JSON.stringify(page.body)).toBe(200);
  return page.body.data.map((event: { id: string }) => event.id);
}

/** How many more of the lag-tolerant requests `read` makes the replica serves. */
async function servedByReplica(read: () => Promise<unknown>): Promise<number> {
  const before = await replicaReads();
  await read();
  return (await replicaReads()) - before;
}

describe('read replicas', () => {
  it('serves event lists and usage from the replica once it holds the account\'s writes', async () => {
    // The account's own writes (sign-up, endpoint) keep its reads on the primary until a check finds them replayed.
    await expect.poll(() => servedByReplica(() => listedIds()), { timeout: 10_000, interval: 200 }).toBe(1);
    expect(await servedByReplica(async () => expect((await api(baseUrl, 'GET', '/v1/account/usage/daily?days=2', { key })).status).toBe(200))).toBe(1);

    await pair.pauseReplay();
    unreplicatedEventId = await sendEvent(ingestUrl, '{"type":"after.pause"}');
    // By id: the primary, always; an event just received is never reported missing.
    expect((await api(baseUrl, 'GET', `/v1/events/${unreplicatedEventId}`, { key })).status).toBe(200);
    // The list comes from the paused replica, which does not have it (ingest is not the API client's own write).
    let listed: string[] = [];
    expect(await servedByReplica(async () => (listed = await listedIds()))).toBe(1);
    expect(listed).not.toContain(unreplicatedEventId);
  });

  it('reads the primary for an account that just wrote: a replayed event and a new endpoint are listed at once', async () => {
    const ownWrites = await fallbacks('own_write');
    const replayed = await api(baseUrl, 'POST', `/v1/events/replay/${unreplicatedEventId}`, { key, json: {} });
    expect(replayed.status, JSON.stringify(replayed.body)).toBe(200);
    expect(await listedIds()).toContain(unreplicatedEventId);
    const endpoint = await createEndpoint(baseUrl, key, { name: 'made while the replica is behind' });
    expect(await listedIds(`?endpoint_id=${endpoint.id}`)).toEqual([]);
    expect(await fallbacks('own_write')).toBe(ownWrites + 2);
  });

  it('skips a replica lagging past HOOK_DATABASE_READ_MAX_LAG_MS, and measures its lag', async () => {
    const lag = `hook_db_replica_lag_seconds{replica="${replica}"}`;
    await expect.poll(async () => (await scrape()).get(lag), { timeout: 10_000, interval: 200 }).toBeGreaterThan(MAX_LAG_MS / 1000);
    expect((await scrape()).get(`hook_db_replica_up{replica="${replica}"}`)).toBe(1);
    const lagging = await fallbacks('lagging');
    const { key: otherKey } = await signUp(baseUrl); // an account with no write of its own for the replica to lack
    expect((await api(baseUrl, 'GET', '/v1/events', { key: otherKey })).status).toBe(200);
    expect(await listedIds()).toContain(unreplicatedEventId);
    expect(await fallbacks('lagging')).toBe(lagging + 2);
  });

  it('serves from the replica again once it has caught up', async () => {
    await pair.resumeReplay();
    await expect.poll(() => pair.caughtUp(), { timeout: 10_000, interval: 100 }).toBe(true);
    await expect.poll(async () => {
      let listed: string[] = [];
      const served = await servedByReplica(async () => (listed = await listedIds()));
      return served === 1 && listed.includes(unreplicatedEventId);
    }, { timeout: 10_000, interval: 200 }).toBe(true);
    const samples = await scrape();
    expect(samples.get(`hook_db_replica_lag_seconds{replica="${replica}"}`)).toBeLessThan(MAX_LAG_MS / 1000);
  });

  it('answers from the primary, without an error, once the replica stops', async () => {
    await pair.stopReplica();
    // The first read may still be sent to the replica (no check has seen it stop yet): it is run again on the primary.
    const primaryReads = async (): Promise<number> => (await fallbacks('replica_failed')) + (await fallbacks('down'));
    const before = await primaryReads();
    expect(await listedIds()).toContain(unreplicatedEventId);
    expect(await primaryReads()).toBe(before + 1);
    await expect.poll(async () => (await scrape()).get(`hook_db_replica_up{replica="${replica}"}`), { timeout: 10_000, interval: 200 }).toBe(0);
    const down = await fallbacks('down');
    expect(await listedIds()).toContain(unreplicatedEventId);
    expect((await api(baseUrl, 'GET', '/v1/account/usage/daily', { key })).status).toBe(200);
    expect(await fallbacks('down')).toBe(down + 2);
    expect((await scrape()).has(`hook_db_replica_lag_seconds{replica="${replica}"}`)).toBe(false);
  });
});
