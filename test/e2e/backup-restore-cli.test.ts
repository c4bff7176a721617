/**
 * `npm run backup` and `npm run restore` (apps/relay/src/backup.ts) beyond the doc's happy
 * path: every row of every table comes back and sequences continue past it; what it
 * refuses (a database with rows, an archive from a newer relay, a damaged or cut archive,
 * bad usage) with the exit code and a message saying what to do, loading nothing; and the
 * embedded database, backed up under a running relay and restored into a new HOOK_DATA_DIR.
 * Every command runs through npm with a PATH without any PostgreSQL command (pg_dump, psql …).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyWebhook } from '@hook/client';
import { adminQuery, dropDatabaseForce, withDatabase, type TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { onPath, pathWithoutPostgres } from '../support/node-only-path.ts';
import { startRelayProcess, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';
import { api, readJson } from '../support/relay.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;

let workDir: string;
let bin: string;
const databases: string[] = [];
const relays: RelayProcess[] = [];
let source: TestDatabase;
let archive: string;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run <script> -- ...args` from the clone, with no PostgreSQL command on the PATH. */
function npmRun(script: 'backup' | 'restore', args: string[], env: Record<string, string>): Run {
  const result = spawnSync('npm', ['run', '--silent', script, '--', ...args], {
    cwd: repoRoot,
    env: { PATH: bin, HOME: workDir, npm_config_update_notifier: 'false', ...env },
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function newDatabase(): Promise<string> {
  const name = `hook_restore_${process.pid}_${databases.length}_${Date.now()}`;
  await adminQuery(inject('databaseServerUrl'), `create database ${name}`);
  databases.push(name);
  return withDatabase(inject('databaseServerUrl'), name);
}

async function query<Row extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** Every table of the schema with a fingerprint of its rows (sorted text form), to compare two databases. */
async function tableFingerprints(url: string): Promise<Record<string, string>> {
  // a partitioned table (event, attempt: docs/retention.md#partitions) with all its partitions' rows, as the backup takes it
  const tables = await query<{ name: string }>(url, `select relname as name from pg_class where relnamespace = 'public'::regnamespace and relkind in ('r', 'p') and not relispartition order by 1`);
  const fingerprints: Record<string, string> = {};
  for (const { name } of tables) {
    const [row] = await query<{ count: string; digest: string | null }>(url, `select count(*) as count, md5(string_agg(t::text, '|' order by t::text)) as digest from "${name}" t`);
    fingerprints[name] = `${row!.count} ${row!.digest}`;
  }
  return fingerprints;
}

async function rowsIn(url: string, table: string): Promise<number> {
  return Number((await query<{ count: string }>(url, `select count(*) as count from "${table}"`))[0]!.count);
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'hook-backup-cli-'));
  // Enterable, so an embedded cluster stays inside it (as root, the server's OS user 'postgres' must reach it) and goes with it.
  chmodSync(workDir, 0o755);
  bin = pathWithoutPostgres(join(workDir, 'bin'));
  for (const tool of ['pg_dump', 'pg_restore', 'psql']) expect(onPath(tool, bin), `${tool} on the commands' PATH`).toBe(false);
  source = await freshDatabase();
  // Rows in every kind of table: an account with its key, member and endpoint, an event, outbox rows (a sequence), a rate-limit window (unlogged).
  const relay = await startRelayProcess(source.url);
  relays.push(relay);
  const key: string = (await api(relay.baseUrl, 'POST', '/v1/accounts')).body.api_key;
  const endpoint = (await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'orders', destination: { type: 'url', url: 'http://127.0.0.1:9/hooks' } } })).body;
  expect((await fetch(endpoint.url, { method: 'POST', body: '{"order":1}' })).status).toBe(200);
  await stopRelayProcesses([relay.child]);
  for (let i = 0; i < 3; i++) await query(source.url, `insert into notification_outbox (account_id, type, data) values ('acc_x', 'test', '{}')`);
  await query(source.url, `insert into rate_limit_counter (key, count, expires_at) values ('k', 1, now() + interval '1 minute')`);
  archive = join(workDir, 'source.backup');
  const run = npmRun('backup', [archive], { HOOK_DATABASE_URL: source.url });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
});

afterAll(async () => {
  await stopRelayProcesses(relays.map((relay) => relay.child));
  for (const name of databases) await dropDatabaseForce(inject('databaseServerUrl'), name);
  await source?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

describe('npm run backup and npm run restore', () => {
  it('restores every row of every table but the rate-limit windows, and sequences continue past the restored ids', { timeout: 60_000 }, async () => {
    const target = await newDatabase();
    const run = npmRun('restore', [archive], { HOOK_DATABASE_URL: target });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Restored \d+ tables, \d+ rows, backed up .* at migration \d{3}-[a-z-]+, into HOOK_DATABASE_URL \(ran migrations 001-initial to \d{3}-[a-z-]+\)/);

    const before = await tableFingerprints(source.url);
    const after = await tableFingerprints(target);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    for (const table of Object.keys(before)) {
      if (table === 'rate_limit_counter' || table === 'hook_migrations') continue;
      expect(after[table], table).toBe(before[table]);
    }
    expect(Number(before.event!.split(' ')[0])).toBeGreaterThan(0);
    expect(await rowsIn(target, 'rate_limit_counter')).toBe(0);
    expect((await query<{ name: string }>(target, 'select name from hook_migrations order by id')).map((row) => row.name))
      .toEqual((await query<{ name: string }>(source.url, 'select name from hook_migrations order by id')).map((row) => row.name));
    const [next] = await query<{ id: string }>(target, `insert into notification_outbox (account_id, type, data) values ('acc_x', 'test', '{}') returning id`);
    const [max] = await query<{ max: string }>(source.url, 'select max(id)::text as max from notification_outbox');
    expect(BigInt(next!.id)).toBeGreaterThan(BigInt(max!.max));
  });

  it('refuses a database that has rows, exit 1, changing nothing', async () => {
    const before = await tableFingerprints(source.url);
    const run = npmRun('restore', [archive], { HOOK_DATABASE_URL: source.url });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^hook restore: the database is not empty: table \w+ has rows\. Restore into a new, empty database/);
    expect(await tableFingerprints(source.url)).toEqual(before);
  });

  it('refuses an archive from a newer relay, naming the migration it lacks, and creates nothing', async () => {
    const bytes = readFileSync(archive);
    const headerEnd = bytes.indexOf('\n', bytes.indexOf('\n') + 1);
    const header = JSON.parse(bytes.subarray(bytes.indexOf('\n') + 1, headerEnd).toString('utf8'));
    header.migrations.push('999-from-the-future');
    const newer = join(workDir, 'newer.backup');
    writeFileSync(newer, Buffer.concat([Buffer.from(`hook-backup 1\n${JSON.stringify(header)}`), bytes.subarray(headerEnd)]));
    const target = await newDatabase();
    const run = npmRun('restore', [newer], { HOOK_DATABASE_URL: target });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('comes from a newer relay: its database has migration 999-from-the-future');
    expect(run.stderr).toContain('git pull && npm install');
    expect(await query(target, `select 1 from pg_class where relnamespace = 'public'::regnamespace`)).toEqual([]);
  });

  it('a damaged archive loads nothing, and the same database then takes a whole one', { timeout: 60_000 }, async () => {
    const bytes = Buffer.from(readFileSync(archive));
    const at = bytes.indexOf('orders', bytes.indexOf('\n', bytes.indexOf('\n') + 1));
    expect(at).toBeGreaterThan(0);
    bytes[at] = 'O'.charCodeAt(0); // still a valid row: only the checksum can tell
    const damaged = join(workDir, 'damaged.backup');
    writeFileSync(damaged, bytes);
    const cut = join(workDir, 'cut.backup');
    writeFileSync(cut, bytes.subarray(0, at));

    const target = await newDatabase();
    const damagedRun = npmRun('restore', [damaged], { HOOK_DATABASE_URL: target });
    expect(damagedRun.status).toBe(1);
    expect(damagedRun.stderr).toContain('is damaged (its checksum does not match its contents). Use another backup.');
    expect(await rowsIn(target, 'endpoint')).toBe(0);
    expect(await rowsIn(target, 'account')).toBe(0);

    const cutRun = npmRun('restore', [cut], { HOOK_DATABASE_URL: target });
    expect(cutRun.status).toBe(1);
    expect(cutRun.stderr).toContain('ends early: it is not a whole archive');
    expect(await rowsIn(target, 'account')).toBe(0);

    const wholeRun = npmRun('restore', [archive], { HOOK_DATABASE_URL: target });
    expect(wholeRun.stderr).toBe('');
    expect(wholeRun.status).toBe(0);
    expect(await rowsIn(target, 'endpoint')).toBe(1);
  });

  it('refuses a file that is not an archive and one that does not exist, exit 1', async () => {
    const target = await newDatabase();
    const notArchive = join(workDir, 'notes.txt');
    writeFileSync(notArchive, 'hello\n');
    const run = npmRun('restore', [notArchive], { HOOK_DATABASE_URL: target });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("is not a Hook backup archive (it does not start with 'hook-backup <version>')");
    const missing = npmRun('restore', [join(workDir, 'missing.backup')], { HOOK_DATABASE_URL: target });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('missing.backup does not exist');
  });

  it('refuses an archive path it cannot write, exit 1, before reading anything', () => {
    const noDirectory = npmRun('backup', [join(workDir, 'missing-dir', 'x.backup')], { HOOK_DATABASE_URL: source.url });
    expect(noDirectory.status).toBe(1);
    expect(noDirectory.stderr).toContain('missing-dir/x.backup.partial (ENOENT');
    expect(noDirectory.stderr).toContain('Give a file path in a directory that exists and that you can write to.');
    const directory = npmRun('backup', [workDir], { HOOK_DATABASE_URL: source.url });
    expect(directory.status).toBe(1);
    expect(directory.stderr).toContain(`${workDir} is a directory. Give the archive's file path, such as ${join(workDir, 'hook.backup')}.`);
  });

  it('bad usage exits 2 with the usage; --help exits 0', () => {
    for (const args of [[], ['a.backup', 'b.backup'], ['--force']]) {
      const run = npmRun('backup', args, { HOOK_DATABASE_URL: source.url });
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stderr).toContain('Usage:\n  npm run backup -- <file>');
    }
    const badUrl = npmRun('backup', ['x.backup'], { HOOK_DATABASE_URL: 'mysql://db/hook' });
    expect(badUrl.status).toBe(2);
    expect(badUrl.stderr).toContain('HOOK_DATABASE_URL must be a postgres:// URL');
    const help = npmRun('restore', ['--help'], {});
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('npm run restore -- <file>');
  });
});

describe('the embedded database', () => {
  let destination: Server | undefined;
  afterAll(async () => {
    await new Promise((resolve) => (destination ? destination.close(resolve) : resolve(undefined)));
  });

  it('is backed up under its running relay and restored into a new HOOK_DATA_DIR, whose relay delivers with the old key', { timeout: 180_000 }, async () => {
    const oldDir = join(workDir, 'old-data');
    const newDir = join(workDir, 'new-data');
    const embedded = (dataDir: string): Record<string, string> => ({ HOOK_DATABASE_URL: '', HOOK_SECRET_KEY: '', HOOK_DATA_DIR: dataDir, HOOK_RETRY_SCHEDULE: '1s,2s,4s,8s,16s' });
    const port = await freePort();
    const old = await startRelayProcess('', embedded(oldDir));
    relays.push(old);
    const key: string = (await api(old.baseUrl, 'POST', '/v1/accounts')).body.api_key;
    const endpoint = (await api(old.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'orders', destination: { type: 'url', url: `http://127.0.0.1:${port}/hooks` } } })).body;
    const secret: string = (await api(old.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/secret`, { key })).body.secret;
    const body = '{"order":"embedded"}';
    const response = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const eventId: string = (await readJson(response)).id;
    await expect.poll(async () => (await api(old.baseUrl, 'GET', `/v1/events/${eventId}`, { key })).body.status, { timeout: 20_000 }).toBe('retrying');

    const file = join(workDir, 'embedded.backup');
    const backup = npmRun('backup', [file], { HOOK_DATA_DIR: oldDir });
    expect(backup.stderr).toBe('');
    expect(backup.status, backup.stderr).toBe(0);
    expect(backup.stdout).toContain(`from the embedded PostgreSQL in ${oldDir} (running) to ${file}`);
    expect(backup.stdout).toMatch(/encrypted under HOOK_SECRET_KEY key id [0-9a-f]{8}, which is not in the archive/);
    await stopRelayProcesses([old.child]);

    // No relay on the new data dir yet: the restore starts its database, and says the key is missing.
    const restore = npmRun('restore', [file], { HOOK_DATA_DIR: newDir });
    expect(restore.status, restore.stderr).toBe(0);
    expect(restore.stdout).toContain(`into the embedded PostgreSQL in ${newDir}`);
    expect(restore.stderr).toContain(`copy the backed-up relay's key to ${join(newDir, 'secret.key')}`);
    copyFileSync(join(oldDir, 'secret.key'), join(newDir, 'secret.key'));

    const received: { headers: IncomingMessage['headers']; body: Buffer }[] = [];
    destination = createServer((request, reply) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body: Buffer.concat(chunks) });
        reply.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => destination!.listen(port, '127.0.0.1', resolve));
    const restored = await startRelayProcess('', embedded(newDir));
    relays.push(restored);
    // While a relay runs on it, a restore is refused.
    const again = npmRun('restore', [file], { HOOK_DATA_DIR: newDir });
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(`a relay is running on the embedded database in ${newDir}. Stop it`);

    await expect.poll(async () => (await api(restored.baseUrl, 'GET', `/v1/events/${eventId}`, { key })).body.status, { timeout: 60_000, interval: 250 }).toBe('delivered');
    expect(received).toHaveLength(1);
    expect(verifyWebhook(received[0]!.body, received[0]!.headers as Record<string, string>, secret).id).toBe(eventId);
    expect(received[0]!.body.toString('utf8')).toBe(body);
  });
});
