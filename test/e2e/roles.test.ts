/**
 * HOOK_ROLE: an `api` process takes events but delivers nothing; a `worker` process
 * serves only /healthz and delivers what the api process stored, through the shared
 * database.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { relayMetric, startRelayProcess, stopRelayProcesses } from '../support/relay-process.ts';

const children: ChildProcess[] = [];
let database: TestDatabase | undefined;
let receiver: Receiver | undefined;

async function startRelay(role: string, databaseUrl: string): Promise<string> {
  const relay = await startRelayProcess(databaseUrl, { HOOK_ROLE: role });
  children.push(relay.child);
  return relay.baseUrl;
}

afterAll(async () => {
  await stopRelayProcesses(children);
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
    expect(receiver.requests).toHaveLength(0);

    const workerUrl = await startRelay('worker', database.url);
    expect((await fetch(`${workerUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${workerUrl}/v1/accounts`, { method: 'POST' })).status).toBe(404);
    const [delivery] = await receiver.waitFor(1);
    expect(delivery!.headers['webhook-id']).toBe(accepted.id);
    expect(delivery!.body.toString()).toBe('stored by the api process');
    // The one attempt was the worker's: the api process, which had the event from its ingest on, made none.
    await expect.poll(() => relayMetric(workerUrl, 'hook_delivery_attempts_total')).toBe(1);
    expect(await relayMetric(apiUrl, 'hook_delivery_attempts_total')).toBe(0);
    expect(receiver.requests).toHaveLength(1);
  });
});
