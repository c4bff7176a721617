/**
 * docs/deployment.md#backup-and-restore, run as written: a live relay process whose
 * destination is down (events retrying) is backed up with the doc's `npm run backup`
 * block, stopped, its archive restored with the doc's `npm run restore` block into a new
 * database, and a relay started there with the same HOOK_SECRET_KEY. When the destination
 * comes up, the events from before the backup reach it once each, byte-exact, signed with
 * the endpoint's secret.
 *
 * The blocks run with a PATH without any PostgreSQL command (no pg_dump, pg_restore or
 * psql), as on a machine with only Node and npm, where the suite's database is the embedded
 * PostgreSQL, whose npm package ships none of them.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyWebhook } from '@hook/client';
import { adminQuery, dropDatabaseForce, withDatabase, type TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { pathWithoutPostgres, onPath } from '../support/node-only-path.ts';
import { startRelayProcess, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';
import { api, readJson } from '../support/relay.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;
const DEPLOYMENT = readFileSync(join(repoRoot, 'docs', 'deployment.md'), 'utf8');
/** Short waits, so the restored relay's next retry comes within seconds; six of them outlast the test. */
const RETRY_SCHEDULE = '1s,2s,4s,8s,16s,32s';

/** The first ```sh block after a heading of docs/deployment.md. */
function shBlockAfter(heading: string): string {
  const section = DEPLOYMENT.split(`\n${heading}\n`)[1];
  const block = section && /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error(`docs/deployment.md has no sh block after '${heading}'`);
  return block;
}

let live: TestDatabase;
let restoredName: string;
/** Where the doc's commands run: inside the clone (npm finds the root package.json from there), in a folder git ignores. */
let workDir: string;
let bin: string;
const relays: RelayProcess[] = [];
let destination: Server | undefined;

beforeAll(async () => {
  live = await freshDatabase();
  restoredName = `hook_restore_${process.pid}_${Date.now()}`;
  mkdirSync(join(repoRoot, 'node_modules', '.cache'), { recursive: true });
  workDir = mkdtempSync(join(repoRoot, 'node_modules', '.cache', 'hook-backup-test-'));
  bin = pathWithoutPostgres(join(workDir, 'bin'));
});
afterAll(async () => {
  await stopRelayProcesses(relays.map((relay) => relay.child));
  await new Promise((resolve) => (destination ? destination.close(resolve) : resolve(undefined)));
  await dropDatabaseForce(inject('databaseServerUrl'), restoredName);
  await live?.drop();
  rmSync(workDir, { recursive: true, force: true });
});

/** A local port nothing listens on (yet). */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}

interface Delivered {
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** Runs a doc block in workDir with the PATH without PostgreSQL; returns its stdout. */
function runDocBlock(block: string, env: Record<string, string>): string {
  const result = spawnSync('bash', ['-euo', 'pipefail', '-c', block], {
    cwd: workDir,
    env: { PATH: bin, HOME: workDir, npm_config_update_notifier: 'false', ...env },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`bash exited ${result.status} running:\n${block}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result.stdout;
}

describe('backup and restore as docs/deployment.md says', () => {
  it('restores a live relay\'s pending deliveries, which a relay on the restored database signs and delivers', { timeout: 120_000 }, async () => {
    const serverUrl = inject('databaseServerUrl');
    // No PostgreSQL client tool can be found on the PATH the doc's blocks run with.
    for (const tool of ['pg_dump', 'pg_restore', 'psql']) expect(onPath(tool, bin), `${tool} on the blocks' PATH`).toBe(false);

    const port = await freePort();
    const old = await startRelayProcess(live.url, { HOOK_RETRY_SCHEDULE: RETRY_SCHEDULE });
    relays.push(old);
    const signup = await api(old.baseUrl, 'POST', '/v1/accounts');
    const key: string = signup.body.api_key;
    const endpoint = (await api(old.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'orders', destination: { type: 'url', url: `http://127.0.0.1:${port}/hooks` } } })).body;
    const secret: string = (await api(old.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}/secret`, { key })).body.secret;
    const bodies = ['{"order":1}', '{"order":2,"note":"héllo"}', '{"order":3}'];
    const eventIds: string[] = [];
    for (const body of bodies) {
      const response = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(response.status).toBe(200);
      eventIds.push((await readJson(response)).id);
    }
    // The destination is down: each event has failed an attempt and waits for its retry.
    await expect.poll(async () => {
      const page = (await api(old.baseUrl, 'GET', `/v1/events?endpoint_id=${endpoint.id}`, { key })).body;
      return page.data.map((event: { status: string }) => event.status);
    }, { timeout: 20_000 }).toEqual(['retrying', 'retrying', 'retrying']);

    const backedUp = runDocBlock(shBlockAfter('### Back up'), { HOOK_DATABASE_URL: live.url });
    expect(backedUp).toMatch(/Backed up \d+ tables, \d+ rows .* to \S+hook\.backup/);
    // The old machine is gone: only the restored database can deliver from here on.
    await stopRelayProcesses([old.child]);

    await adminQuery(serverUrl, `create database ${restoredName}`);
    const restoredUrl = withDatabase(serverUrl, restoredName);
    const restoredOutput = runDocBlock(shBlockAfter('### Restore'), { RESTORE_DATABASE_URL: restoredUrl });
    expect(restoredOutput).toMatch(/Restored \d+ tables, \d+ rows/);

    const received: Delivered[] = [];
    destination = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body: Buffer.concat(chunks) });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => destination!.listen(port, '127.0.0.1', resolve));
    const restored = await startRelayProcess(restoredUrl, { HOOK_RETRY_SCHEDULE: RETRY_SCHEDULE });
    relays.push(restored);

    // The old key works on the restored relay, and every event is delivered there.
    await expect.poll(async () => {
      const page = (await api(restored.baseUrl, 'GET', `/v1/events?endpoint_id=${endpoint.id}`, { key })).body;
      return page.data.map((event: { status: string }) => event.status);
    }, { timeout: 60_000, interval: 250 }).toEqual(['delivered', 'delivered', 'delivered']);
    // Once each: the three deliveries, no more.
    expect(received.map((delivery) => delivery.headers['webhook-id']).sort()).toEqual([...eventIds].sort());
    for (const delivery of received) {
      const verified = verifyWebhook(delivery.body, delivery.headers as Record<string, string>, secret);
      expect(verified.id).toBe(delivery.headers['webhook-id']);
      expect(delivery.body.toString('utf8')).toBe(bodies[eventIds.indexOf(verified.id)]);
    }
  });
});
