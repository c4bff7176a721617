/**
 * What a person sees of `hook events tail` and `hook listen`, read from a terminal
 * emulator fed by a real pseudo-terminal at 80 and 120 columns: the "Connected" line
 * stays, no stray first line, every event on one row (cut with "…", never wrapped),
 * endpoint names, colours only on a terminal; a relay that goes away shows one status
 * line rewritten in place, replaced on return by one line that says for how long it was
 * down and what arrived meanwhile (the events are shown, or follow); in a pipe, a line at
 * the drop and one on return, not one per try; a session that cannot recover (endpoint
 * deleted, key revoked) exits 1 with the reason.
 *
 * The relay runs as two processes on one database: the one hook talks to is stopped and
 * started again on its port, the other takes events meanwhile.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { HookUser } from '../support/cli.ts';
import { freshDatabase } from '../support/database.ts';
import { eventually, freePort, startHook, startLocalServer, stopAllHookProcesses, type LocalServer } from '../support/hook-process.ts';
import { RelayProcesses, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';
import { runOnTerminal, stopAllTerminalRuns, type ScreenRow, type TerminalRun } from '../support/terminal.ts';

const user = new HookUser();
const relays = new RelayProcesses();
let database: TestDatabase;
let portA: number;
/** The relay hook talks to (stopped and started again by the tests). */
let relayA: RelayProcess;
/** Another process on the same database: takes events while relayA is down. */
let relayB: RelayProcess;
let local: LocalServer;
let apiKey: string;

function startRelay(port: number): Promise<RelayProcess> {
  return relays.start(database.url, port);
}

/** Sends an event to an endpoint's ingest URL on `relay`. */
async function ingest(relay: RelayProcess, endpointUrl: string, suffix: string, body: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${relay.baseUrl}${new URL(endpointUrl).pathname}${suffix}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

const rowsWith = (rows: ScreenRow[], text: string): ScreenRow[] => rows.filter((row) => row.text.includes(text));
const escapeCodes = /\x1b\[/;

/** Every row fits and none continues the one above (`only`: of the rows it accepts). */
function expectNothingWrapped(terminal: TerminalRun, only: (row: string) => boolean = () => true): void {
  const rows = terminal.rows();
  const checked = rows.flatMap((row, index) => (only(row.text) ? [index] : []));
  expect(checked.filter((index) => rows[index + 1]?.wrapped), terminal.text()).toEqual([]);
  for (const index of checked) expect([...rows[index]!.text].length, rows[index]!.text).toBeLessThanOrEqual(terminal.columns);
}

/** Listen's rows that this part of hook draws: connection lines and delivery lines (its hints may wrap). */
const listenStreamRow = (row: string): boolean => /evt_|^Connected|^Reconnected|^Connection lost/.test(row);

beforeAll(async () => {
  database = await freshDatabase();
  portA = await freePort();
  [relayA, relayB] = await Promise.all([startRelay(portA), startRelay(await freePort())]);
  apiKey = (await user.json(['signup', '--api-url', relayA.baseUrl])).api_key;
  await user.json(['account', 'plan', 'pro']);
  local = await startLocalServer();
});

afterEach(async () => {
  await stopAllTerminalRuns();
  await stopAllHookProcesses();
});

afterAll(async () => {
  await relays.stopAll();
  await local?.close();
  await database?.drop().catch(() => undefined);
  user.remove();
});

describe('hook events tail on a terminal', () => {
  it.each([80, 120])('at %i columns: the Connected line stays at the top, each event fits its row, names not ids, coloured statuses', async (columns) => {
    const name = `payments-provider-production-webhooks-${columns}`;
    const endpoint = await user.json(['endpoints', 'create', name, '--destination', `http://127.0.0.1:${local.port}/fails`]);
    local.status = 500;
    onTestFinished(() => {
      local.status = 200;
    });
    const tail = runOnTerminal(user, ['events', 'tail'], { columns });
    await tail.waitFor('Connected line', (rows) => rowsWith(rows, 'Connected. Watching every endpoint').length === 1);

    const id = await ingest(relayA, endpoint.url, `/webhooks/provider/callback?delivery=${'x'.repeat(40)}`, { type: 'invoice.payment_succeeded.with_a_long_type' });
    const rows = await tail.waitFor('received and attempt lines', (now) => now.some((row) => row.text.includes(`received   ${id}`)) && now.some((row) => row.text.includes(`retrying   ${id}`)));

    // No stray line above it, and nothing drawn later erased it.
    expect(rows[0]!.text, tail.text()).toMatch(/^Connected\. Watching every endpoint; Ctrl-C to stop\.$/);
    expect(rowsWith(rows, 'Connecting to')).toEqual([]);
    expectNothingWrapped(tail);
    const received = rowsWith(rows, `received   ${id}`)[0]!.text;
    expect(received).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  received   ${id}  payments-provider`));
    expect(received.endsWith('…'), received).toBe(true);
    expect([...received].length).toBeGreaterThan(columns - 3); // cut at the width (less a space before the …)
    const attempt = rowsWith(rows, `retrying   ${id}`)[0]!.text;
    expect(attempt).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  retrying   ${id}  500  \\d+ ms  payments-`));
    expect(rows.some((row) => row.text.includes(endpoint.id)), 'the endpoint shown by its id').toBe(false);
    // Colours: the status word by what it means (xterm palette: 1 red, 2 green, 3 yellow).
    expect(tail.colourAt(`retrying   ${id}`, 'retrying')).toBe(3);
    expect(tail.colourAt(`retrying   ${id}`, '500')).toBe(1);
    expect(tail.colourAt(`received   ${id}`, 'received')).toBe('default');

    tail.type('\x03');
    expect(await tail.exited).toBe(0);
    expect(rowsWith(tail.rows(), 'Connected. Watching').length).toBe(1);
    expect(tail.rows().at(-1)!.text).toMatch(/^(\^C)?Stopped\.$/); // the terminal echoes Ctrl-C
  });
});

describe('a relay that goes away and comes back', () => {
  it('a terminal (tail at 80 columns, listen at 120) shows one status line, rewritten in place, then one line with the time down and the events missed; a pipe gets a line at the drop and one on return', async () => {
    const endpoint = await user.json(['endpoints', 'create', 'outage']);
    const tail = runOnTerminal(user, ['events', 'tail', '--endpoint', 'outage'], { columns: 80 });
    const listen = runOnTerminal(user, ['listen', String(local.port), '--endpoint', 'outage'], { columns: 120 });
    const pipedTail = startHook(user, ['events', 'tail', '--endpoint', 'outage']);
    const pipedListen = startHook(user, ['listen', String(local.port), '--endpoint', 'outage']);
    await Promise.all([
      tail.waitFor('Connected line', (rows) => rowsWith(rows, 'Connected.').length === 1),
      listen.waitFor('Connected line', (rows) => rowsWith(rows, 'Connected.').length === 1),
      pipedTail.waitForStderr((line) => line.startsWith('Connected.')),
      pipedListen.waitForStderr((line) => line.startsWith('Connected.')),
    ]);
    const before = await ingest(relayA, endpoint.url, '/before', { type: 'before' });
    await eventually(async () => local.requests.map((request) => request.headers['webhook-id']), (ids) => ids.includes(before), 15_000, 'the first event at the local server');
    await tail.waitFor('the event before', (rows) => rowsWith(rows, before).length > 0);
    // Its result recorded too: one still in flight when the relay stops is delivered again
    // after the outage (at least once) and counted among the events that arrived meanwhile.
    await eventually(async () => (await (await fetch(`${relayB.baseUrl}/v1/events/${before}`, { headers: { authorization: `Bearer ${apiKey}` } })).json() as { status: string }).status,
      (status) => status === 'delivered', 15_000, 'the first event recorded as delivered');

    await stopRelayProcesses([relayA.child]);
    const stoppedAt = Date.now();
    for (const terminal of [tail, listen]) {
      // One status line, counting the seconds in place: never a second row.
      const first = await terminal.waitFor('status line', (rows) => rowsWith(rows, 'Connection lost').length === 1);
      const row = first.findIndex((candidate) => candidate.text.includes('Connection lost'));
      expect(first[row]!.text).toMatch(/^Connection lost \d+ s ago; reconnecting \(try \d+\)…/);
      const later = await terminal.waitFor('the status line counting on', (rows) => rows[row]?.text !== first[row]!.text && /Connection lost [1-9]\d* s ago/.test(rows[row]!.text));
      expect(rowsWith(later, 'Connection lost')).toHaveLength(1);
      expect(later.length).toBe(first.length);
    }
    const missed = [await ingest(relayB, endpoint.url, '/missed', { type: 'missed.one' }), await ingest(relayB, endpoint.url, '/missed', { type: 'missed.two' })];
    // Down until each terminal has tried to reconnect five times (the old CLI printed a line per try).
    for (const terminal of [tail, listen]) {
      await terminal.waitFor('the fifth try', (rows) => rows.some((row) => /reconnecting \(try ([5-9]|\d{2,})\)/.test(row.text)), 30_000);
    }
    const outageMs = Date.now() - stoppedAt;
    relayA = await startRelay(portA);

    const tailRows = await tail.waitFor('the line saying it is back', (rows) => rows.some((row) => row.text.startsWith('Reconnected after')) && missed.every((id) => rowsWith(rows, id).length > 0), 30_000);
    const back = tailRows.findIndex((row) => row.text.startsWith('Reconnected after'));
    expect(tailRows[back]!.text).toMatch(/^Reconnected after \d+ s down; 2 events arrived meanwhile:$/);
    expect(Number(/after (\d+) s/.exec(tailRows[back]!.text)![1])).toBeGreaterThanOrEqual(Math.floor(outageMs / 1000));
    expect(tailRows[back + 1]!.text).toContain(missed[0]);
    expect(tailRows[back + 2]!.text).toContain(missed[1]);
    // Shown with the status each has now.
    expect(tailRows[back + 1]!.text).toMatch(/^\d\d:\d\d:\d\d  [a-z]+ +evt_\w+  outage  missed\.one  POST \//);
    expect(rowsWith(tailRows, 'Connection lost')).toEqual([]);
    expect(rowsWith(tailRows, 'Connected.')).toHaveLength(1);
    expectNothingWrapped(tail);

    // (While it counts, the status line says so: "Reconnected after 14 s down; counting the events missed meanwhile…".)
    const listenRows = await listen.waitFor('the line saying it is back', (rows) => rows.some((row) => /^Reconnected after .*(follows?|:|were missed)$/.test(row.text)), 30_000);
    expect(rowsWith(listenRows, 'Reconnected after')[0]!.text).toMatch(/^Reconnected after \d+ s down; 2 events arrived meanwhile and follow$/);
    expect(rowsWith(listenRows, 'Connection lost')).toEqual([]);
    const arrived = (): unknown[] => local.requests.map((request) => request.headers['webhook-id']);
    await eventually(async () => arrived(), (ids) => missed.every((id) => ids.includes(id)), 15_000, 'the missed events at the local server');
    expectNothingWrapped(listen, listenStreamRow);

    // In a pipe: plain lines, one when it dropped and one when it came back.
    for (const piped of [pipedTail, pipedListen]) {
      await piped.waitForStderr((line) => line.startsWith('Reconnected after'), 30_000);
      const outage = piped.stderrLines.slice(piped.stderrLines.findIndex((line) => line.startsWith('Connected.')) + 1);
      expect(outage[0], piped.transcript()).toMatch(/^Connection lost \(the relay is shutting down\); reconnecting…$/);
      expect(outage.filter((line) => /reconnect|Disconnected|Connection lost/i.test(line)), piped.transcript()).toHaveLength(2);
      expect(outage.at(-1)).toMatch(/^Reconnected after \d+ s down; 2 events arrived meanwhile/);
      expect([...piped.stdoutLines, ...piped.stderrLines].filter((line) => escapeCodes.test(line))).toEqual([]);
    }
    await pipedTail.waitForStdout((line) => line.includes(missed[1]!));
    expect(escapeCodes.test(tail.raw())).toBe(true);

    for (const terminal of [tail, listen]) terminal.type('\x03');
    expect(await tail.exited).toBe(0);
    expect(await listen.exited).toBe(0);
  }, 90_000);
});

describe('a session that cannot recover', () => {
  it('exits 1 with the reason when its endpoint is deleted: tail and listen', async () => {
    await user.json(['endpoints', 'create', 'doomed-tail']);
    await user.json(['endpoints', 'create', 'doomed-listen']);
    const tail = runOnTerminal(user, ['events', 'tail', '--endpoint', 'doomed-tail'], { columns: 80 });
    const listen = runOnTerminal(user, ['listen', String(local.port), '--endpoint', 'doomed-listen'], { columns: 80 });
    await tail.waitFor('Connected line', (rows) => rowsWith(rows, 'Connected.').length === 1);
    await listen.waitFor('Connected line', (rows) => rowsWith(rows, 'Connected.').length === 1);
    expect((await user.run(['endpoints', 'delete', 'doomed-tail'])).code).toBe(0);
    expect((await user.run(['endpoints', 'delete', 'doomed-listen'])).code).toBe(0);

    expect(await tail.exited).toBe(1);
    const tailText = tail.lines().join('\n');
    expect(tailText).toContain("Error: The endpoint 'doomed-tail' was deleted while hook events tail watched it");
    expect(tailText).toMatch(/Fix: .*`hook endpoints list`/);
    expect(await listen.exited).toBe(1);
    const listenText = listen.lines().join('\n');
    expect(listenText).toMatch(/Error: Endpoint 'ep_\w+' was deleted or disabled while listening \(endpoint_gone\)/);
    expect(listenText).toMatch(/Fix: .*hook /);
  });

  it('exits 1 with the reason when its key is revoked while it is connected: tail and listen, --json', async () => {
    await user.json(['endpoints', 'create', 'revoked-live']);
    const created = await fetch(`${relayA.baseUrl}/v1/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'revoked-live' }) });
    const key = (await created.json()) as { id: string; api_key: string };
    const tail = startHook(user, ['events', 'tail', '--json'], { HOOK_API_KEY: key.api_key });
    const listen = startHook(user, ['listen', String(local.port), '--endpoint', 'revoked-live', '--json'], { HOOK_API_KEY: key.api_key });
    await tail.waitForStderr((line) => line.includes('"state":"open"'));
    await listen.waitForStderr((line) => line.includes('"state":"open"'));
    expect((await fetch(`${relayA.baseUrl}/v1/api-keys/${key.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(204);

    // The relay looks the key up every heartbeat and closes the stream for good.
    for (const hook of [tail, listen]) {
      expect((await hook.exited).code, hook.transcript()).toBe(1);
      const last = hook.stderrLines.slice(-2).map((line) => JSON.parse(line));
      expect(last[0]).toMatchObject({ type: 'connection', state: 'closed', code: 'invalid_api_key' });
      expect(last[1]).toMatchObject({ status: 401, code: 'invalid_api_key', fix: expect.stringContaining('hook ') });
      expect(hook.stderrLines.some((line) => line.includes('"state":"reconnecting"')), hook.transcript()).toBe(false);
    }
  }, 60_000);

  it('exits 1 with the reason when its key was revoked while the relay was away (401 on reconnect): tail and listen, --json', async () => {
    await user.json(['endpoints', 'create', 'revoked']);
    const created = await fetch(`${relayA.baseUrl}/v1/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'short-lived' }) });
    const key = (await created.json()) as { id: string; api_key: string };
    const tail = startHook(user, ['events', 'tail', '--json'], { HOOK_API_KEY: key.api_key });
    const listen = startHook(user, ['listen', String(local.port), '--endpoint', 'revoked', '--json'], { HOOK_API_KEY: key.api_key });
    await tail.waitForStderr((line) => line.includes('"state":"open"'));
    await listen.waitForStderr((line) => line.includes('"state":"open"'));
    expect((await fetch(`${relayA.baseUrl}/v1/api-keys/${key.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(204);
    await stopRelayProcesses([relayA.child]);
    relayA = await startRelay(portA);

    for (const hook of [tail, listen]) {
      expect((await hook.exited).code, hook.transcript()).toBe(1);
      const last = hook.stderrLines.slice(-2).map((line) => JSON.parse(line));
      expect(last[0]).toMatchObject({ type: 'connection', state: 'closed', code: 'invalid_api_key', reason: expect.any(String) });
      expect(last[1]).toMatchObject({ status: 401, code: 'invalid_api_key', fix: expect.stringContaining('hook ') });
    }
  }, 60_000);
});
