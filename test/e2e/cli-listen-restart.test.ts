/**
 * `hook listen` across relay outages, with the relay as a real process on a fixed port
 * and database: a relay that is down when listen starts is waited for; a relay killed
 * (SIGKILL) while listen runs is reconnected to, and every event sent meanwhile
 * arrives; a relay that stops answering without closing the connection (SIGSTOP) is
 * noticed by the heartbeats and reconnected to once it answers again.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { HookUser } from '../support/cli.ts';
import { freshDatabase } from '../support/database.ts';
import { eventually, freePort, startHook, startLocalServer, stopAllHookProcesses, type LocalServer } from '../support/hook-process.ts';
import { startRelayProcess, type RelayProcess } from '../support/relay-process.ts';

const user = new HookUser();
const relays = new Set<ChildProcess>();
let database: TestDatabase | undefined;
let server: LocalServer | undefined;

async function startRelay(port: number): Promise<RelayProcess> {
  const relay = await startRelayProcess(database!.url, { HOOK_PORT: String(port), HOOK_RETRY_SCHEDULE: '50ms,50ms,50ms,50ms,50ms,50ms' });
  relays.add(relay.child);
  relay.child.once('exit', () => relays.delete(relay.child));
  return relay;
}

async function stopRelay(relay: RelayProcess, signal: NodeJS.Signals): Promise<void> {
  const exited = new Promise((resolve) => relay.child.once('exit', resolve));
  relay.child.kill(signal);
  await exited;
}

/** Waits until every id in `sent` has reached the local server (at least once: delivery is at-least-once, so a result lost with a killed relay means a repeat). */
async function allArrived(sent: readonly string[], timeoutMs = 20_000): Promise<void> {
  const arrived = (): Set<unknown> => new Set(server!.requests.map((request) => request.headers['webhook-id']));
  await eventually(async () => sent.filter((id) => !arrived().has(id)), (missing) => missing.length === 0, timeoutMs, 'every event at the local server');
}

async function ingest(url: string, body: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

afterAll(async () => {
  await stopAllHookProcesses();
  for (const child of relays) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
  await server?.close();
  await database?.drop().catch(() => undefined);
  user.remove();
});

describe('hook listen when the relay goes away', () => {
  it('waits for a relay that is down at start, survives a killed relay and a frozen one, and every event arrives', async () => {
    database = await freshDatabase();
    const port = await freePort();
    let relay = await startRelay(port);
    const signup = await user.json(['signup', '--api-url', relay.baseUrl]);
    await stopRelay(relay, 'SIGTERM');

    // Down at start: listen says so and keeps trying.
    server = await startLocalServer();
    const hook = startHook(user, ['listen', String(server.port), '--endpoint', 'outages', '--json']);
    const waiting = JSON.parse(await hook.waitForStderr((line) => line.includes('"waiting_for_relay"')));
    expect(waiting).toMatchObject({ type: 'connection', state: 'waiting_for_relay', reason: expect.stringContaining('refused'), retry_in_ms: expect.any(Number) });
    relay = await startRelay(port);
    const ready = await hook.waitForJson((line) => line.type === 'ready', 30_000);
    const sent = [await ingest(ready.ingest_url, '{"n":0}')];
    await server.waitFor(1);

    // Killed: the connection drops, listen reconnects with backoff to the restarted relay,
    // and events sent before it has reconnected arrive too.
    await stopRelay(relay, 'SIGKILL');
    await hook.waitForStderr((line) => line.includes('"reconnecting"'));
    relay = await startRelay(port);
    for (let n = 1; n <= 5; n++) sent.push(await ingest(ready.ingest_url, JSON.stringify({ n })));
    await hook.waitForStderr((line) => line.includes('"reconnected":true'), 30_000);
    await allArrived(sent);

    // Frozen: the TCP connection stays up but nothing answers; two missed heartbeats
    // (5 s each) end it, and the next connection is made once the relay runs again.
    const reconnectsBefore = hook.stderrLines.filter((line) => line.includes('"reconnected":true')).length;
    relay.child.kill('SIGSTOP');
    const frozenAt = Date.now();
    const dropped = JSON.parse(await hook.waitForStderr((line) => line.includes('no answer to 2 heartbeats'), 25_000));
    expect(dropped).toMatchObject({ state: 'reconnecting', reason: expect.stringContaining('no answer to 2 heartbeats') });
    expect(Date.now() - frozenAt).toBeLessThan(20_000);
    relay.child.kill('SIGCONT');
    await eventually(async () => hook.stderrLines.filter((line) => line.includes('"reconnected":true')).length, (n) => n > reconnectsBefore, 30_000, 'a reconnect');
    sent.push(await ingest(ready.ingest_url, '{"after":"freeze"}'));
    await allArrived(sent);
    expect(new Set(server.requests.map((request) => request.headers['webhook-id']))).toEqual(new Set(sent));

    // One list request per poll, a few times a second: polling each event 20 times a second ran into the key's rate limit (429).
    const statuses = async (): Promise<Record<string, string>> => {
      const page = (await (await fetch(`${relay.baseUrl}/v1/events?limit=100`, { headers: { authorization: `Bearer ${signup.api_key}` } })).json()) as { data: { id: string; status: string }[] };
      return Object.fromEntries(page.data.filter((event) => sent.includes(event.id)).map((event) => [event.id, event.status]));
    };
    await expect.poll(async () => { const all = await statuses(); return sent.filter((id) => all[id] !== 'delivered'); },
      { timeout: 30_000, interval: 250, message: 'every event delivered' }).toEqual([]);
    const repeats = server.requests.length - new Set(server.requests.map((request) => request.headers['webhook-id'])).size;
    console.info(`listen across outages: ${sent.length} events, ${server.requests.length} forwarded (${repeats} repeated: delivery is at-least-once)`);
    expect((await hook.stop('SIGINT')).code).toBe(0);
  }, 150_000);
});
