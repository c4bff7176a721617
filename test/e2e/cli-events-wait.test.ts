/**
 * `hook events wait`, as a CI script runs it, against a real relay: it exits 0 with the
 * event as JSON once one matches (endpoint, type, status; only events received after it
 * began, unless --since), 1 with `wait_timed_out` when none does; and a relay that is
 * restarted, down or frozen during the wait neither makes it hang past its timeout nor
 * makes it say something false.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { HookUser } from '../support/cli.ts';
import { freshDatabase } from '../support/database.ts';
import { freePort, startHook, stopAllHookProcesses, type HookProcess } from '../support/hook-process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startRelayProcess, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';
import { sendEvent, startTestRelay, type TestRelay } from '../support/relay.ts';

async function exitOf(process: HookProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { code } = await process.exited;
  return { code, stdout: process.stdoutLines.join('\n'), stderr: process.stderrLines.join('\n') };
}

/** Starts `hook events wait …` and resolves once it says it is waiting (counting has begun). */
async function startWait(user: HookUser, args: readonly string[]): Promise<HookProcess> {
  const wait = startHook(user, ['events', 'wait', ...args]);
  await wait.waitForStderr((line) => line.startsWith('Waiting up to'), 15_000);
  return wait;
}

describe('hook events wait against a running relay', () => {
  let relay: TestRelay;
  let receiver: Receiver;
  const user = new HookUser();
  let ci: any;
  let held: any;

  beforeAll(async () => {
    relay = await startTestRelay({ allowPrivateDestinations: true }, { workerPollMs: 20 });
    receiver = await startReceiver();
    await user.json(['signup', '--api-url', relay.baseUrl]);
    ci = await user.json(['endpoints', 'create', 'ci', '--destination', receiver.url]);
    held = await user.json(['endpoints', 'create', 'held']);
  });

  afterAll(async () => {
    await stopAllHookProcesses();
    await receiver?.close();
    await relay?.close();
    user.remove();
  });

  it('prints the first matching event received after it began, once it has the status asked for', async () => {
    await sendEvent(ci.url, '{"type":"order.paid","n":0}');
    const wait = await startWait(user, ['--endpoint', 'ci', '--type', 'order.paid', '--status', 'delivered', '--timeout', '20s', '--json']);
    await sendEvent(ci.url, '{"type":"order.refunded","n":1}');
    const paid = await sendEvent(ci.url, '{"type":"order.paid","n":2}');
    const result = await exitOf(wait);
    expect(result.code, result.stderr).toBe(0);
    const event = JSON.parse(result.stdout);
    expect(event).toMatchObject({ id: paid, endpoint_id: ci.id, type: 'order.paid', status: 'delivered', body: '{"type":"order.paid","n":2}', attempts: [expect.objectContaining({ response_status: 200 })] });
    expect(result.stderr).not.toContain('matched after'); // a line for people, left out with --json
  });

  it('times out with wait_timed_out when only older events match, and says so', async () => {
    await sendEvent(held.url, '{"type":"old"}');
    const started = Date.now();
    const result = await user.run(['events', 'wait', '--endpoint', 'held', '--timeout', '1500ms', '--json']);
    expect(result.code).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(result.stdout).toBe('');
    const problem = JSON.parse(result.stderr.trim().split('\n').at(-1)!);
    expect(problem).toMatchObject({ code: 'wait_timed_out', detail: 'No matching event (endpoint held) within 1.5 s: nothing arrived after the wait began', fix: expect.stringContaining('hook events list') });
  });

  it('counts an earlier event with --since, and names the event that arrived without the status', async () => {
    const id = await sendEvent(ci.url, '{"type":"invoice.paid"}');
    const since = await user.run(['events', 'wait', '--since', id, '--status', 'delivered', '--timeout', '15s']);
    expect(since.code, since.stderr).toBe(0);
    // JSON on stdout without --json too: a script reads it the same way.
    expect(JSON.parse(since.stdout)).toMatchObject({ id, status: 'delivered' });
    expect(since.stderr).toMatch(new RegExp(`${id} matched after [\\d.]+ m?s: invoice.paid, delivered`));

    const pending = await sendEvent(held.url, '{"type":"order.created"}');
    const stuck = await user.run(['events', 'wait', '--endpoint', held.id, '--since', '1m', '--status', 'delivered', '--timeout', '1s']);
    expect(stuck.code).toBe(1);
    expect(stuck.stdout).toBe('');
    expect(stuck.stderr).toContain(`Error: No matching event (endpoint ${held.id}, status delivered) within 1 s: ${pending} arrived (order.created) but is pending`);
  });

  it('refuses bad values as usage errors and an unknown endpoint at once', async () => {
    const timeout = await user.run(['events', 'wait', '--timeout', 'soon']);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain("The value 'soon' of --timeout is invalid");
    const since = await user.run(['events', 'wait', '--since', 'evt_x']);
    expect(since.code).toBe(2);
    const started = Date.now();
    const endpoint = await user.run(['events', 'wait', '--endpoint', 'nope', '--timeout', '30s', '--json']);
    expect(endpoint.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(JSON.parse(endpoint.stderr.trim().split('\n').at(-1)!)).toMatchObject({ code: 'endpoint_not_found' });
  });

  it('states the --timeout default once, in its own words, in --help', async () => {
    const help = await user.run(['events', 'wait', '--help']);
    expect(help.code).toBe(0);
    const timeoutHelp = help.stdout.slice(help.stdout.indexOf('--timeout'), help.stdout.indexOf('-h, --help'));
    expect(timeoutHelp.match(/\(default/g)).toEqual(['(default']);
    expect(timeoutHelp.replace(/\s+/g, ' ')).toContain('(default 30s)');
  });
});

describe('hook events wait while the relay restarts', () => {
  const user = new HookUser();
  const relays = new Set<ChildProcess>();
  let database: TestDatabase | undefined;
  let port = 0;

  async function startRelay(): Promise<RelayProcess> {
    const relay = await startRelayProcess(database!.url, { HOOK_PORT: String(port) });
    relays.add(relay.child);
    relay.child.once('exit', () => relays.delete(relay.child));
    return relay;
  }

  afterAll(async () => {
    await stopAllHookProcesses();
    for (const child of relays) child.kill('SIGCONT');
    await stopRelayProcesses([...relays]);
    await database?.drop().catch(() => undefined);
    user.remove();
  });

  it('keeps waiting across a killed relay and returns the event sent after it came back', async () => {
    database = await freshDatabase();
    port = await freePort();
    let relay = await startRelay();
    await user.json(['signup', '--api-url', relay.baseUrl]);
    const endpoint = await user.json(['endpoints', 'create', 'restarts']);

    const wait = await startWait(user, ['--endpoint', 'restarts', '--timeout', '60s']);
    relay.child.kill('SIGKILL');
    await wait.waitForStderr((line) => line.startsWith('The relay is not answering'), 15_000);
    relay = await startRelay();
    await wait.waitForStderr((line) => line.startsWith('The relay answers again'), 15_000);
    const id = await sendEvent(endpoint.url, '{"after":"restart"}');
    const result = await exitOf(wait);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id, body: '{"after":"restart"}' });
  }, 90_000);

  it('ends at its timeout, saying the relay did not answer, when the relay is down or frozen', async () => {
    const down = Date.now();
    await stopRelayProcesses([...relays]);
    const refused = await user.run(['events', 'wait', '--endpoint', 'restarts', '--timeout', '2s', '--json']);
    expect(refused.code).toBe(1);
    expect(Date.now() - down).toBeLessThan(8_000);
    expect(JSON.parse(refused.stderr.trim().split('\n').at(-1)!)).toMatchObject({ code: 'wait_timed_out', detail: expect.stringMatching(/within 2 s: the relay has not answered for the last [\d.]+ s \(connection refused/) });

    // Frozen: connections are accepted but nothing answers; the wait still ends near its timeout.
    const relay = await startRelay();
    relay.child.kill('SIGSTOP');
    const frozen = Date.now();
    const silent = await user.run(['events', 'wait', '--endpoint', 'restarts', '--timeout', '2s'], { timeoutMs: 20_000 });
    expect(silent.code).toBe(1);
    expect(Date.now() - frozen).toBeLessThan(9_000);
    expect(silent.stderr).toMatch(/within 2 s: the relay has not answered for the last [\d.]+ s/);
    relay.child.kill('SIGCONT');
  }, 60_000);
});
