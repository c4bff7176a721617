/**
 * A diagnostic for bench:delivery's figures: how many PostgreSQL transactions, and row
 * writes per table, one delivered event costs. Starts a relay on a fresh database, sends
 * BENCH_EVENTS events (default 5000) 50 at a time to an endpoint whose destination is a
 * local receiver, waits until all arrived, and prints the deltas of pg_stat_database and
 * pg_stat_user_tables per delivered event, with PostgreSQL's CPU per delivered event (all
 * postgres processes, from /proc; other work on the server counts too).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createAccount, createBenchDatabase, createEndpoint, databaseServerUrl, runBench, sampleCpu, startRelay } from './support.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);

interface TableRow { relname: string; ins: string; upd: string; hot: string }

async function main(): Promise<number> {
const arrived = new Set<string>();
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    arrived.add(String(request.headers['webhook-id']));
    response.writeHead(200, { 'content-length': '0' }).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
const database = await createBenchDatabase(databaseServerUrl());
const relay = await startRelay(database.url, { HOOK_ALLOW_PRIVATE_DESTINATIONS: 'true' });
const key = await createAccount(relay.url);
// BENCH_STORE_ONLY=1: an endpoint without a destination, for the same figures of storing alone.
const storeOnly = process.env.BENCH_STORE_ONLY === '1';
const endpoint = await createEndpoint(relay.url, key, storeOnly ? { name: 'stats' } : { name: 'stats', destination: { type: 'url', url: receiverUrl } });
const client = new pg.Client({ connectionString: database.url });
await client.connect();
const snapshot = async () => ({
  db: (await client.query('select xact_commit::bigint as commits from pg_stat_database where datname = current_database()')).rows[0],
  wal: (await client.query('select wal_records::bigint as records, wal_fpi::bigint as fpi, wal_bytes::bigint as bytes, wal_sync::bigint as syncs from pg_stat_wal')).rows[0],
  tables: Object.fromEntries((await client.query<TableRow>('select relname, n_tup_ins::bigint as ins, n_tup_upd::bigint as upd, n_tup_hot_upd::bigint as hot from pg_stat_user_tables')).rows.map((row) => [row.relname, row])) as Record<string, TableRow>,
});
const before = await snapshot();
const cpuBefore = sampleCpu([]);
const body = JSON.stringify({ padding: 'x'.repeat(1000) });
let next = 0;
await Promise.all(Array.from({ length: 50 }, async () => {
  while (next < EVENTS) {
    next++;
    const response = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    if (storeOnly) arrived.add(((await response.json()) as { id: string }).id);
    else await response.arrayBuffer();
  }
}));
while (arrived.size < EVENTS) await new Promise((resolve) => setTimeout(resolve, 50));
const cpuAfter = sampleCpu([]);
await new Promise((resolve) => setTimeout(resolve, 1500)); // statistics are reported with a short delay
const after = await snapshot();
console.log(`per delivered event: ${((Number(after.db.commits) - Number(before.db.commits)) / EVENTS).toFixed(2)} transactions`);
const walPer = (field: 'records' | 'fpi' | 'bytes' | 'syncs') => (Number(after.wal[field]) - Number(before.wal[field])) / EVENTS;
console.log(`  WAL (whole server): ${walPer('records').toFixed(1)} records, ${walPer('fpi').toFixed(2)} full-page images, ${Math.round(walPer('bytes'))} bytes, ${walPer('syncs').toFixed(2)} syncs`);
if (cpuBefore && cpuAfter) console.log(`  PostgreSQL CPU: ${((cpuAfter.postgresMs - cpuBefore.postgresMs) / EVENTS).toFixed(3)} ms (storing and delivering)`);
for (const [name, row] of Object.entries(after.tables)) {
  const was = before.tables[name] ?? { ins: 0, upd: 0, hot: 0 };
  const per = (field: 'ins' | 'upd' | 'hot') => ((Number(row[field]) - Number(was[field])) / EVENTS).toFixed(2);
  if (per('ins') !== '0.00' || per('upd') !== '0.00') console.log(`  ${name}: inserts ${per('ins')}, updates ${per('upd')} (HOT ${per('hot')})`);
}
await client.end();
await relay.stop();
receiver.close();
return 0;
}

await runBench(main);
