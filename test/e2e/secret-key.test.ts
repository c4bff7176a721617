/**
 * HOOK_SECRET_KEY with real relay processes on a shared database: endpoint signing
 * secrets are encrypted at rest, a relay with the wrong key refuses to start (rather than
 * sign with garbage), an external database without a key is refused with how to make one,
 * and plaintext secrets left by an older relay are encrypted at start.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { TestDatabase } from '@hook/db/testing';
import { verifyWebhook } from '@hook/client';
import { freshDatabase } from '../support/database.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startRelayProcess } from '../support/relay-process.ts';
import { TEST_SECRET_KEY } from '../support/secret-key.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;
const children: ChildProcess[] = [];
let database: TestDatabase;
let receiver: Receiver;

async function query(text: string, params: unknown[] = []): Promise<any[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

async function startRelay(env: Record<string, string> = {}): Promise<string> {
  const relay = await startRelayProcess(database.url, env);
  children.push(relay.child);
  return relay.baseUrl;
}

async function stopRelays(): Promise<void> {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

/** A relay start that must fail: its exit code and everything it wrote to stderr. */
async function failedStart(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['apps/relay/src/server.ts'], {
    cwd: repoRoot,
    env: { ...process.env, HOOK_DATABASE_URL: database.url, HOOK_PORT: '0', HOOK_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  expect(stdout).not.toContain('Hook relay listening');
  return { code, stderr };
}

async function call(baseUrl: string, method: string, path: string, key?: string, json?: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(json ? { 'content-type': 'application/json' } : {}) },
    body: json ? JSON.stringify(json) : undefined,
  });
  return response.json();
}

beforeAll(async () => {
  database = await freshDatabase();
  receiver = await startReceiver();
});
afterAll(async () => {
  await stopRelays();
  await receiver.close();
  await database.drop();
});

describe('HOOK_SECRET_KEY', () => {
  let key = '';
  let endpointId = '';
  let shownSecret = '';

  it('keeps signing secrets encrypted in the database while deliveries verify with the secret the API shows', async () => {
    const baseUrl = await startRelay();
    key = (await call(baseUrl, 'POST', '/v1/accounts')).api_key;
    const endpoint = await call(baseUrl, 'POST', '/v1/endpoints', key, { name: 'orders', destination: { type: 'url', url: receiver.url } });
    endpointId = endpoint.id;
    shownSecret = (await call(baseUrl, 'GET', `/v1/endpoints/${endpointId}/secret`, key)).secret;
    expect(shownSecret).toMatch(/^whsec_/);
    expect(await query(`select id from destination where secret like 'whsec_%' or previous_secret like 'whsec_%'`)).toEqual([]);

    const { id } = await (await fetch(endpoint.url, { method: 'POST', body: '{"n":1}' })).json() as { id: string };
    await expect.poll(() => receiver.requests.some((request) => request.headers['webhook-id'] === id), { timeout: 15_000 }).toBe(true);
    const delivery = receiver.requests.find((request) => request.headers['webhook-id'] === id)!;
    expect(verifyWebhook(delivery.body, delivery.headers as Record<string, string>, shownSecret).id).toBe(id);
    await stopRelays();
  });

  it('refuses to start with a key that cannot decrypt the stored secrets', async () => {
    const wrongKey = Buffer.alloc(32, 0x11).toString('base64');
    const { code, stderr } = await failedStart({ HOOK_SECRET_KEY: wrongKey });
    expect(code).toBe(1);
    expect(stderr).toMatch(/could not start: HOOK_SECRET_KEY cannot decrypt the stored endpoint signing secrets/);
    expect(stderr).not.toContain(wrongKey);
  });

  it('refuses an external database without HOOK_SECRET_KEY and says how to make one', async () => {
    const { code, stderr } = await failedStart({ HOOK_SECRET_KEY: '' });
    expect(code).toBe(2);
    expect(stderr).toMatch(/HOOK_SECRET_KEY is not set: .*openssl rand -base64 32/);
  });

  it('encrypts at start the plaintext secrets an older relay stored, and shows them unchanged', async () => {
    const legacy = 'whsec_bGVnYWN5LXNlY3JldC1rZXktbWF0ZXJpYWwtMzJieXRlcw==';
    await query('update destination set secret = $1 where endpoint_id = $2', [legacy, endpointId]);
    const relay = await startRelayProcess(database.url, { HOOK_SECRET_KEY: TEST_SECRET_KEY, HOOK_LOG_LEVEL: 'info' });
    children.push(relay.child);
    const [row] = await query('select secret from destination where endpoint_id = $1', [endpointId]);
    expect(row.secret).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect((await call(relay.baseUrl, 'GET', `/v1/endpoints/${endpointId}/secret`, key)).secret).toBe(legacy);
  });
});
