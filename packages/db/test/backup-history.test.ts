/**
 * Backup and restore of partitioned history (docs/retention.md#partitions): a restore into
 * an empty database has only the partitions its migrations make (the current periods), so
 * history from older periods and other classes must get its partitions made as it is
 * loaded. Every row comes back, in the partition of its class and period, with its
 * deliveries and attempts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { firstIdAt, newId } from '@hook/core';
import pg from 'pg';
import { adminQuery, dropDatabaseForce, withDatabase, type TestDatabase } from '../src/testing.ts';
import { backupDatabase, restoreDatabase } from '../src/index.ts';
import { freshDatabase } from '@hook/test/database';
import { insertEndpoint } from './rows.ts';

const DAY_MS = 86_400_000;
let source: TestDatabase;
let workDir: string;
const target = `hook_test_restore_${randomBytes(4).toString('hex')}`;

async function query(url: string, text: string, params: unknown[] = []): Promise<any[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** `?` placeholders (rows.ts writes them) as node-postgres's `$1, $2, …`. */
function positional(text: string): string {
  let n = 0;
  return text.replaceAll('?', () => `$${++n}`);
}

/** An event received at `atMs` in `retentionClass`, with a delivery and an attempt. */
async function storeEvent(accountId: string, endpointId: string, atMs: number, retentionClass: number): Promise<string> {
  const id = firstIdAt('event', atMs).slice(0, -16) + newId('event').slice(-16);
  await query(source.url, `insert into event (id, account_id, endpoint_id, method, path, query, headers, body, size, received_at, retention_class)
                           values ($1, $2, $3, 'POST', '', '', '{}', '\\x7b7d', 2, $4, $5)`, [id, accountId, endpointId, new Date(atMs), retentionClass]);
  await query(source.url, `insert into delivery (event_id, destination_id, account_id, endpoint_id, status, retention_class)
                           values ($1, $2, $3, $4, 'failed', $5)`, [id, `dst_${endpointId.slice(3)}`, accountId, endpointId, retentionClass]);
  await query(source.url, `insert into attempt (id, event_id, account_id, n, trigger, started_at, duration_ms, response_status, retention_class)
                           values ($1, $2, $3, 1, 'auto', $4, 5, 500, $5)`, [newId('attempt'), id, accountId, new Date(atMs + 1), retentionClass]);
  return id;
}

beforeAll(async () => {
  source = await freshDatabase();
  workDir = mkdtempSync(join(tmpdir(), 'hook-backup-history-'));
  await adminQuery(inject('databaseServerUrl'), `create database ${target}`);
});
afterAll(async () => {
  await source?.drop();
  await dropDatabaseForce(inject('databaseServerUrl'), target);
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

it('restores history of old periods and of a class the new database has no partition for, each row in its partition', async () => {
  const accountId = newId('account');
  await query(source.url, `insert into account (id, plan, created_at) values ($1, 'enterprise', now())`, [accountId]);
  const { endpointId } = await insertEndpoint((text, params) => query(source.url, positional(text), params), accountId);
  // partitions the source has and a fresh database does not: 40 days ago in class 90, a class of 45 days
  for (const [retentionClass, atMs] of [[90, Date.now() - 40 * DAY_MS], [45, Date.now() - 10 * DAY_MS]] as const) {
    await query(source.url, 'select hook_ensure_history_partitions($1, $2, $2)', [retentionClass, new Date(atMs)]);
  }
  const ids = [
    await storeEvent(accountId, endpointId, Date.now() - 40 * DAY_MS, 90),
    await storeEvent(accountId, endpointId, Date.now() - 10 * DAY_MS, 45),
    await storeEvent(accountId, endpointId, Date.now() - 50 * DAY_MS, 0),
  ];
  const placement = `select e.id, e.tableoid::regclass::text as event, l.tableoid::regclass::text as delivery, a.tableoid::regclass::text as attempt
                     from event e join delivery l on l.event_id = e.id join attempt a on a.event_id = e.id where e.account_id = $1 order by e.id`;
  const before = await query(source.url, placement, [accountId]);
  expect(before.map((row) => row.id).sort()).toEqual([...ids].sort());

  const file = join(workDir, 'history.backup');
  await backupDatabase(source.url, file);
  await restoreDatabase(withDatabase(inject('databaseServerUrl'), target), file);
  const after = await query(withDatabase(inject('databaseServerUrl'), target), placement, [accountId]);
  expect(after).toEqual(before);
  expect(after.map((row) => row.event)).toEqual(expect.arrayContaining(['event_r0', expect.stringMatching(/^event_r90_\d{8}$/), expect.stringMatching(/^event_r45_\d{8}$/)]));
});
