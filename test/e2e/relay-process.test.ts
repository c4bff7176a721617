/**
 * The relay as a user runs it: `npm start` in the repo, embedded PostgreSQL, real HTTP.
 * Covers the README's promise (start, get a key, send an event), data kept across a
 * clean restart, and recovery after the relay is killed with SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repoRoot = new URL('../../', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'hook-e2e-'));
const running = new Set<ChildProcess>();

interface StartedRelay {
  child: ChildProcess;
  baseUrl: string;
  stdout: () => string;
  stderr: () => string;
}

/** `npm start` in its own process group, so a signal reaches npm, the shell and node alike. */
async function npmStart(): Promise<StartedRelay> {
  const child = spawn('npm', ['start', '--silent'], {
    cwd: repoRoot,
    detached: true,
    env: { ...process.env, HOOK_DATA_DIR: dataDir, HOOK_PORT: '0', HOOK_DATABASE_URL: '', HOOK_LOG_LEVEL: 'warn' },
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
  rmSync(dataDir, { recursive: true, force: true });
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
