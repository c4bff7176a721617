/**
 * HOOK_ROLE: an `api` process takes events but delivers nothing; a `worker` process
 * serves only /healthz and delivers what the api process stored, through the shared
 * database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;
const children: ChildProcess[] = [];
let database: TestDatabase | undefined;
let receiver: Receiver | undefined;

async function startRelay(role: string, databaseUrl: string): Promise<string> {
  const child = spawn(process.execPath, ['apps/relay/src/server.ts'], {
    cwd: repoRoot,
    env: { ...process.env, HOOK_DATABASE_URL: databaseUrl, HOOK_PORT: '0', HOOK_LOG_LEVEL: 'warn', HOOK_ROLE: role, HOOK_ALLOW_PRIVATE_DESTINATIONS: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /Hook relay listening on (\S+)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`relay (${role}) exited with ${code}`)));
  });
}

afterAll(async () => {
  for (const child of children) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await receiver?.close();
  await database?.drop();
});

describe('HOOK_ROLE', () => {
  it('splits the API and delivery across processes sharing one database', async () => {
    database = await freshDatabase();
    receiver = await startReceiver();
    const apiUrl = await startRelay('api', database.url);
    const { api_key: key } = (await (await fetch(`${apiUrl}/v1/accounts`, { method: 'POST' })).json()) as { api_key: string };
    const endpoint = (await (await fetch(`${apiUrl}/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'split', destination: { type: 'url', url: receiver.url } }),
    })).json()) as { url: string };
    const accepted = (await (await fetch(endpoint.url, { method: 'POST', body: 'stored by the api process' })).json()) as { id: string };
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requests).toHaveLength(0);

    const workerUrl = await startRelay('worker', database.url);
    expect((await fetch(`${workerUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${workerUrl}/v1/accounts`, { method: 'POST' })).status).toBe(404);
    const [delivery] = await receiver.waitFor(1);
    expect(delivery!.headers['webhook-id']).toBe(accepted.id);
    expect(delivery!.body.toString()).toBe('stored by the api process');
  });
});
