/**
 * The relay as a user runs it: `npm start` in the repo, embedded PostgreSQL, real HTTP.
 * Covers the README's promise (start, get a key, send an event), data kept across a
 * clean restart, recovery after the relay is killed with SIGKILL, and a clone in a
 * directory only its owner can enter (as root, the one the embedded PostgreSQL's OS user
 * `postgres` cannot).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repoRoot = new URL('../../', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'hook-e2e-'));
const running = new Set<ChildProcess>();
const removeAfterwards: string[] = [dataDir];

interface StartedRelay {
  child: ChildProcess;
  baseUrl: string;
  stdout: () => string;
  stderr: () => string;
}

/**
 * `npm start` in its own process group, so a signal reaches npm, the shell and node alike;
 * in the repository with the test's data dir, unless given another clone (which then uses
 * its own default data dir).
 */
async function npmStart(clone?: string): Promise<StartedRelay> {
  const env: NodeJS.ProcessEnv = { ...process.env, HOOK_DATA_DIR: dataDir, HOOK_PORT: '0', HOOK_DATABASE_URL: '', HOOK_LOG_LEVEL: 'warn' };
  if (clone) delete env.HOOK_DATA_DIR;
  const child = spawn('npm', ['start', '--silent'], {
    cwd: clone ?? repoRoot,
    detached: true,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`relay did not start in time\nstdout:${stdout}\nstderr:${stderr}`)), 60_000);
    const check = (): void => {
      const match = /Hook relay listening on (http:\/\/\S+)/.exec(stdout);
      if (match && stdout.includes('API description:')) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`relay exited with ${code} before listening\nstdout:${stdout}\nstderr:${stderr}`));
    });
  });
  return { child, baseUrl, stdout: () => stdout, stderr: () => stderr };
}

/**
 * SIGTERM goes to npm alone, as `docker stop` or a process manager sends it: npm must
 * pass it on to the relay. SIGKILL goes to the whole group, killing npm and the relay.
 */
async function stop(relay: StartedRelay, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  const exited = new Promise<void>((resolve) => relay.child.once('exit', () => resolve()));
  process.kill(signal === 'SIGKILL' ? -relay.child.pid! : relay.child.pid!, signal);
  await exited;
  running.delete(relay.child);
}

afterAll(async () => {
  for (const child of running) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of removeAfterwards) rmSync(dir, { recursive: true, force: true });
});

async function json(response: Response): Promise<any> {
  return response.json();
}

describe('npm start', () => {
  let apiKey = '';
  let endpointUrl = '';
  let eventId = '';
  let endpointSecretUrl = '';
  let signingSecret = '';
  let secretKeyFile = '';

  it('starts on an embedded PostgreSQL, says where, and serves the API', async () => {
    const relay = await npmStart();
    expect(relay.stdout()).toContain(`Get an API key: curl -X POST ${relay.baseUrl}/v1/accounts`);
    expect(relay.stdout()).toMatch(/Database: embedded PostgreSQL on 127\.0\.0\.1:(\d+)/);
    expect(relay.stdout()).not.toMatch(/127\.0\.0\.1:5432\b/);

    const signup = await fetch(`${relay.baseUrl}/v1/accounts`, { method: 'POST' });
    expect(signup.status).toBe(201);
    apiKey = (await json(signup)).api_key;
    const created = await fetch(`${relay.baseUrl}/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'orders' }),
    });
    expect(created.status).toBe(201);
    const endpoint = await json(created);
    endpointUrl = endpoint.url;
    // No HOOK_SECRET_KEY: the key that encrypts signing secrets is generated into the data dir, owner-only.
    secretKeyFile = readFileSync(join(dataDir, 'secret.key'), 'utf8');
    expect(statSync(join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
    endpointSecretUrl = `/v1/endpoints/${endpoint.id}/secret`;
    signingSecret = (await json(await fetch(`${relay.baseUrl}${endpointSecretUrl}`, { headers: { authorization: `Bearer ${apiKey}` } }))).secret;
    expect(signingSecret).toMatch(/^whsec_/);
    const ingest = await fetch(endpointUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"order.created","n":1}' });
    expect(ingest.status).toBe(200);
    eventId = (await json(ingest)).id;

    await stop(relay, 'SIGTERM');
    expect(relay.stderr()).toContain('SIGTERM received, shutting down');
    expect(relay.stderr()).not.toContain('shutdown failed');
  });

  it('keeps accounts, endpoints and events across a restart', async () => {
    const relay = await npmStart();
    // The clean shutdown before stopped its PostgreSQL: nothing stale to clean up.
    expect(relay.stderr()).not.toContain('stale');
    const event = await fetch(`${relay.baseUrl}/v1/events/${eventId}`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(event.status).toBe(200);
    expect(await json(event)).toMatchObject({ id: eventId, type: 'order.created', body: '{"type":"order.created","n":1}' });
    // The same key file is reused, so the stored signing secret still decrypts to what was shown.
    expect(readFileSync(join(dataDir, 'secret.key'), 'utf8')).toBe(secretKeyFile);
    expect((await json(await fetch(`${relay.baseUrl}${endpointSecretUrl}`, { headers: { authorization: `Bearer ${apiKey}` } }))).secret).toBe(signingSecret);
    // The ingest URL keeps working (its base may have a new port, the ingest id is the same).
    const ingestPath = new URL(endpointUrl).pathname;
    expect((await fetch(`${relay.baseUrl}${ingestPath}`, { method: 'POST', body: 'again' })).status).toBe(200);
    await stop(relay, 'SIGKILL');
  });

  it('recovers after being killed: cleans up the stale PostgreSQL and loses no accepted event', async () => {
    const relay = await npmStart();
    expect(relay.stderr()).toMatch(/stopping a stale embedded PostgreSQL/);
    const events = await fetch(`${relay.baseUrl}/v1/events`, { headers: { authorization: `Bearer ${apiKey}` } });
    const bodies = (await json(events)).data.map((event: { size: number }) => event.size);
    expect(bodies).toEqual([5, 30]);
    await stop(relay, 'SIGTERM');
  });
});

/** `source` again at `target` as hard links (same file system): a clone of the working tree in a second or two. */
function linkTree(source: string, target: string): void {
  const stat = lstatSync(source);
  if (stat.isSymbolicLink()) return symlinkSync(readlinkSync(source), target);
  if (!stat.isDirectory()) return linkSync(source, target);
  mkdirSync(target);
  for (const entry of readdirSync(source)) linkTree(join(source, entry), join(target, entry));
}

describe('npm start in a directory only its owner can enter', () => {
  it('serves on the embedded PostgreSQL (as root: its build and cluster go where the postgres user can reach them)', async () => {
    // Inside the repository, so hard links work; mkdtemp makes it mode 0700, as `mktemp -d` and /root are.
    mkdirSync(join(repoRoot, 'test', 'artifacts'), { recursive: true });
    const privateDir = mkdtempSync(join(repoRoot, 'test', 'artifacts', 'private-'));
    removeAfterwards.push(privateDir);
    expect(statSync(privateDir).mode & 0o777).toBe(0o700);
    const clone = join(privateDir, 'hook');
    mkdirSync(clone);
    for (const entry of ['package.json', 'scripts', 'apps', 'packages', 'node_modules']) linkTree(join(repoRoot, entry), join(clone, entry));

    const relay = await npmStart(clone);
    const clusterDir = /Database: embedded PostgreSQL on 127\.0\.0\.1:\d+ \(data in (\S+)\)/.exec(relay.stdout())?.[1];
    expect(clusterDir).toBeDefined();
    if (process.getuid?.() === 0) {
      // The postgres user cannot enter privateDir: the cluster lives under /var/lib/hook-embedded-postgres, and the data dir says where.
      removeAfterwards.push(dirname(clusterDir!));
      expect(clusterDir).toMatch(/^\/var\/lib\/hook-embedded-postgres\/clusters\/[0-9a-f]{16}\/postgres$/);
      expect(readFileSync(join(clone, '.hook', 'postgres-location'), 'utf8').trim()).toBe(clusterDir);
    } else {
      expect(clusterDir).toBe(join(clone, '.hook', 'postgres'));
    }

    const signup = await fetch(`${relay.baseUrl}/v1/accounts`, { method: 'POST' });
    expect(signup.status).toBe(201);
    const apiKey = (await json(signup)).api_key;
    const created = await fetch(`${relay.baseUrl}/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'private' }),
    });
    const ingest = await fetch((await json(created)).url, { method: 'POST', body: '{"kept":true}' });
    expect(ingest.status).toBe(200);
    const eventId = (await json(ingest)).id;
    await stop(relay, 'SIGTERM');
    expect(relay.stderr()).not.toContain('shutdown failed');

    // Started again from the same clone, it finds the same cluster and the stored event.
    const again = await npmStart(clone);
    expect(again.stdout()).toContain(`(data in ${clusterDir})`);
    const event = await fetch(`${again.baseUrl}/v1/events/${eventId}`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(await json(event)).toMatchObject({ id: eventId, body: '{"kept":true}' });
    await stop(again, 'SIGTERM');
  }, 120_000);
});
