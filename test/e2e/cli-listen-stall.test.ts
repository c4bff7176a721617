/**
 * `hook listen` after a stall (issue 28, item 8): the hook process is stopped (SIGSTOP,
 * as a laptop lid or a debugger does) long enough for the relay to take its connection
 * for dead, events arrive meanwhile, and it is continued. The relay has already sent it
 * those deliveries (they wait in its socket) and, once the connection is gone, offers
 * them again on the next one: the local server may get each twice. Whatever it gets,
 * every request is a line on the terminal, and every one is an attempt on the relay.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { HookUser } from '../support/cli.ts';
import { freshDatabase } from '../support/database.ts';
import { eventually, startLocalServer, type LocalServer } from '../support/hook-process.ts';
import { relayMetric, startRelayProcess, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';
import { runOnTerminal, stopAllTerminalRuns } from '../support/terminal.ts';

const user = new HookUser();
let database: TestDatabase | undefined;
let relay: RelayProcess | undefined;
let local: LocalServer | undefined;

afterAll(async () => {
  await stopAllTerminalRuns();
  if (relay) await stopRelayProcesses([relay.child]);
  await local?.close();
  await database?.drop().catch(() => undefined);
  user.remove();
});


describe('hook listen after a stall', () => {
  it('shows every request the local server got, and the relay records each as an attempt', async () => {
    database = await freshDatabase();
    relay = await startRelayProcess(database.url);
    const signup = await user.json(['signup', '--api-url', relay.baseUrl]);
    local = await startLocalServer();
    const listen = runOnTerminal(user, ['listen', String(local.port), '--endpoint', 'stall'], { columns: 200 });
    await listen.waitFor('the Connected line', (rows) => rows.some((row) => row.text.startsWith('Connected.')));
    const endpoint = await user.json(['endpoints', 'get', 'stall']);
    const ingest = async (n: number): Promise<string> => {
      const response = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }) });
      expect(response.status).toBe(200);
      return ((await response.json()) as { id: string }).id;
    };

    listen.signalProgram('SIGSTOP');
    const sent = [await ingest(1), await ingest(2), await ingest(3)];
    // Stopped until the relay has taken its connection for dead (two unanswered heartbeats, 5 s each; short of a delivery's lease).
    const stalledAt = Date.now();
    await expect.poll(() => relayMetric(relay!.baseUrl, 'hook_stream_connections{mode="listen"}'), { timeout: 60_000, interval: 250 }).toBe(0);
    const stallMs = Date.now() - stalledAt;
    listen.signalProgram('SIGCONT');

    // Every event ends delivered, whichever connection's answer did it.
    const statuses = async (): Promise<Record<string, string>> => {
      const page = (await (await fetch(`${relay!.baseUrl}/v1/events?limit=100`, { headers: { authorization: `Bearer ${signup.api_key}` } })).json()) as { data: { id: string; status: string }[] };
      return Object.fromEntries(page.data.map((event) => [event.id, event.status]));
    };
    await eventually(statuses, (all) => sent.every((id) => all[id] === 'delivered'), 60_000, 'every event delivered');

    const forwarded = (id: string): number => local!.requests.filter((request) => request.headers['webhook-id'] === id).length;
    const shown = (id: string): string[] => listen.lines().filter((line) => line.includes(id));
    // A line per request the local server got (the relay may have sent some twice: at-least-once).
    await eventually(async () => sent.map((id) => [forwarded(id), shown(id).length]), (counts) => counts.every(([got, lines]) => got === lines), 20_000, 'a line per request')
      .catch((error: Error) => {
        throw new Error(`${error.message}\n${listen.text()}`);
      });
    // And an attempt per request: the answers to the lost connection's deliveries went on the next one.
    const attempts = async (): Promise<number[]> => {
      const counts = await Promise.all(sent.map(async (id) => {
        const event = (await (await fetch(`${relay!.baseUrl}/v1/events/${id}`, { headers: { authorization: `Bearer ${signup.api_key}` } })).json()) as { attempts?: unknown[] };
        return event.attempts?.length ?? -1;
      }));
      return counts;
    };
    await eventually(attempts, (counts) => counts.every((n, i) => n === forwarded(sent[i]!)), 20_000, `an attempt per request (${sent.map(forwarded).join(', ')})`);
    // The answers that went on the next connection say so: each request sent again has its late twin.
    const late = listen.lines().filter((line) => /answer sent after a reconnect|recorded, not deciding/.test(line)).length;
    expect(late, listen.text()).toBeGreaterThan(0);
    expect(late, listen.text()).toBeGreaterThanOrEqual(local.requests.length - sent.length);
    // No line says a request went unrecorded.
    expect(listen.lines().filter((line) => /not recorded|before the result was sent|before the relay confirmed/.test(line)), listen.text()).toEqual([]);
    console.info(`listen after a ${Math.round(stallMs / 1000)} s stall: ${local.requests.length} requests for ${sent.length} events\n${listen.lines().filter((line) => line.includes('evt_')).join('\n')}`);
    listen.type('\x03');
    expect(await listen.exited).toBe(0);
  }, 150_000);
});
