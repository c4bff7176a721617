/**
 * The floor under bench:delivery's "extra PostgreSQL CPU per delivered event": what the
 * durable record of a delivery costs PostgreSQL with nothing else around it. On a fresh
 * migrated database, batches of 50 (as group commit makes them under load) of:
 *   A. storing: one statement inserting 50 events and their 50 deliveries;
 *   B. delivering: one statement moving 50 deliveries to delivered and inserting their 50
 *      attempts (the least any result record can write).
 * Runs A alone, then A and B, each for BENCH_EVENTS events (default 20000), and prints
 * PostgreSQL's CPU per event for each (all postgres processes, from /proc) and B's share:
 * no claim, lease, notification or wake-up is included, so the real engine's extra cost
 * can only be above it. Then C: A with the engine's own result statement
 * (record-results.ts) instead of B, with 50, 5 and 1 result(s) a statement.
 */
import pg from 'pg';
import { createOrm, migrateToLatest, recordResults, type RecordInput } from '@hook/db';
import { createBenchDatabase, databaseServerUrl, runBench, sampleCpu } from './support.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const BATCH = 50;

async function main(): Promise<number> {
  const database = await createBenchDatabase(databaseServerUrl());
  if (process.env.BENCH_PLAN_CACHE_MODE) {
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query(`alter database ${new URL(database.url).pathname.slice(1)} set plan_cache_mode = ${process.env.BENCH_PLAN_CACHE_MODE}`);
    await admin.end();
  }
  const orm = await createOrm({ databaseUrl: database.url, poolMax: 1 });
  await migrateToLatest(orm);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query(`insert into account (id, plan, created_at) values ('acct_floor', 'enterprise', now())`);
  await client.query(`insert into endpoint (id, account_id, name, ingest_id, status, created_at, updated_at) values ('ep_floor', 'acct_floor', 'f', 'floor', 'active', now(), now())`);
  await client.query(`insert into destination (id, account_id, endpoint_id, position, type, url, secret, status, created_at, updated_at)
                      values ('dst_floor', 'acct_floor', 'ep_floor', 0, 'url', 'http://127.0.0.1:9/', 'whsec_x', 'active', now(), now())`);
  const body = Buffer.from(JSON.stringify({ padding: 'x'.repeat(1000) }));
  let seq = 0;
  const store = async (ids: string[]) => client.query(
    `with e as (
       insert into event (id, account_id, endpoint_id, method, path, query, headers, body, content_type, size, received_at)
       select id, 'acct_floor', 'ep_floor', 'POST', '', '', '{"content-type":"application/json"}', $2, 'application/json', 1024, now() from unnest($1::text[]) id
       returning id
     )
     insert into delivery (event_id, destination_id, account_id, endpoint_id, status, next_attempt_at, lease_id, locked_until)
     select id, 'dst_floor', 'acct_floor', 'ep_floor', 'pending', now(), 'lease.' || id, now() + interval '30 s' from e`, [ids, body]);
  const deliver = async (ids: string[]) => client.query(
    `with updated as (
       update delivery l set status = 'delivered', attempt_count = 1, auto_attempts = 1, next_attempt_at = null, lease_id = null, locked_until = null
       where l.destination_id = 'dst_floor' and l.event_id = any($1::text[]) and l.lease_id = 'lease.' || l.event_id
         and l.layout = 1 and (l.status in ('pending', 'retrying') or l.next_trigger = 'replay') is true -- the queue's partition alone (DELIVERY_OPEN)
       returning l.event_id
     )
     insert into attempt (id, event_id, destination_id, account_id, n, trigger, started_at, duration_ms, response_status, response_body)
     select 'att_' || substr(event_id, 5), event_id, 'dst_floor', 'acct_floor', 1, 'auto', now(), 3, 200, '' from updated`, [ids]);
  const batchIds = () => Array.from({ length: BATCH }, () => `evt_${String(++seq).padStart(26, '0')}`);
  const measure = async (withDelivery: boolean): Promise<number> => {
    const before = sampleCpu([])!;
    for (let n = 0; n < EVENTS; n += BATCH) {
      const ids = batchIds();
      await store(ids);
      if (withDelivery) await deliver(ids);
    }
    return (sampleCpu([])!.postgresMs - before.postgresMs) / EVENTS;
  };
  // C. The engine's own result statement (record-results.ts) on the same deliveries, in
  // batches of `size`: what it costs beyond the least a record can write.
  const engine = async (size: number): Promise<number> => {
    const before = sampleCpu([])!;
    for (let n = 0; n < EVENTS; n += BATCH) {
      const ids = batchIds();
      await store(ids);
      for (let i = 0; i < ids.length; i += size) {
        await recordResults(orm, ids.slice(i, i + size).map((id): RecordInput => ({
          delivery: { id, destinationId: 'dst_floor', accountId: 'acct_floor', leaseId: `lease.${id}`, attemptCount: 0, trigger: 'auto', deliveryCount: 1, retentionClass: 0 },
          attempt: { id: `att_${id.slice(4)}`, startedAt: new Date(), durationMs: 3, responseStatus: 200, responseBody: '', error: null, failureKind: null },
          next: { status: 'delivered', autoAttempts: 1, nextAttemptAt: null },
          health: 'ok',
        })));
      }
    }
    return (sampleCpu([])!.postgresMs - before.postgresMs) / EVENTS;
  };
  await measure(false); // warm-up
  const storeMs = await measure(false);
  const bothMs = await measure(true);
  const storeAgainMs = await measure(false);
  const bothAgainMs = await measure(true);
  console.log(`PostgreSQL CPU per event, batches of ${BATCH}, ${EVENTS} events per run:`);
  console.log(`  store (event + delivery): ${storeMs.toFixed(4)}, ${storeAgainMs.toFixed(4)} ms`);
  console.log(`  store and record the delivery (+ delivery update + attempt): ${bothMs.toFixed(4)}, ${bothAgainMs.toFixed(4)} ms`);
  console.log(`  the record alone: ${(bothMs - storeMs).toFixed(4)}, ${(bothAgainMs - storeAgainMs).toFixed(4)} ms per delivered event`);
  // B with one result a statement: what a statement and its commit cost by themselves.
  const before = sampleCpu([])!;
  for (let n = 0; n < EVENTS; n += BATCH) {
    const ids = batchIds();
    await store(ids);
    for (const id of ids) await deliver([id]);
  }
  const leastOneMs = (sampleCpu([])!.postgresMs - before.postgresMs) / EVENTS - (storeMs + storeAgainMs) / 2;
  console.log(`  the least record, 1 result a statement: ${leastOneMs.toFixed(4)} ms per delivered event`);
  for (const size of [50, 5, 1]) {
    const engineMs = await engine(size);
    console.log(`  the engine's result statement, ${size} result(s) a statement: ${(engineMs - (storeMs + storeAgainMs) / 2).toFixed(4)} ms per delivered event`);
  }
  await orm.close();
  await client.end();
  return 0;
}

await runBench(main);
