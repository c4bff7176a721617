/**
 * Telling deliveries apart (issue 28, items 7 and 20), with the real `hook` binary
 * against a relay process and real receivers: on an endpoint that fans out to one
 * destination answering 200 and one answering 500, `hook events tail` names each
 * attempt's destination with that delivery's own status (a person's terminal and
 * --json), and `hook events list` shows each event's last answer (500, 200, a network
 * error, or none yet) in a column and in --json as last_attempt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { HookUser } from '../support/cli.ts';
import { freshDatabase } from '../support/database.ts';
import { eventually, freePort, startHook, stopAllHookProcesses } from '../support/hook-process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startRelayProcess, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';
import { runOnTerminal, stopAllTerminalRuns } from '../support/terminal.ts';

let database: TestDatabase;
let relay: RelayProcess;
let ok: Receiver;
let failing: Receiver;
const user = new HookUser();
let failingDestinationId: string;
let okDestinationId: string;
const hostOf = (url: string): string => new URL(url).host;

beforeAll(async () => {
  database = await freshDatabase();
  // One retry an hour: the 500 leaves its delivery retrying for the whole file.
  relay = await startRelayProcess(database.url, { HOOK_RETRY_SCHEDULE: '1h,1h' });
  ok = await startReceiver(() => ({ status: 200 }));
  failing = await startReceiver(() => ({ status: 500 }));
  await user.json(['signup', '--api-url', relay.baseUrl]);
  await user.json(['account', 'plan', 'pro']); // the file makes more endpoints and destinations than free allows
  await user.json(['endpoints', 'create', 'fanout', '--destination', ok.url]);
  okDestinationId = (await user.json(['destinations', 'list', 'fanout'])).data[0].id;
  failingDestinationId = (await user.json(['destinations', 'add', 'fanout', '--url', failing.url])).id;
}, 60_000);

afterAll(async () => {
  await stopAllHookProcesses();
  await stopAllTerminalRuns();
  await ok?.close();
  await failing?.close();
  if (relay) await stopRelayProcesses([relay.child]);
  await database?.drop();
  user.remove();
});

describe('hook events tail on an endpoint with two destinations', () => {
  it('names each attempt\'s destination with its own delivery status, on a terminal and in --json', async () => {
    const json = startHook(user, ['events', 'tail', '--json']);
    await json.waitForStderr((line) => line.includes('"state":"open"'));
    const screen = runOnTerminal(user, ['events', 'tail'], { columns: 220 });
    await screen.waitFor('connected', (rows) => rows.some((row) => row.text.includes('Connected.')));

    const { id } = await user.json(['send', 'fanout', '--data', '{"type":"order.created"}']);
    const attempts = await eventually(
      async () => json.jsonLines().filter((line) => line.type === 'attempt.finished' && line.event_id === id),
      (lines) => lines.length === 2, 15_000, 'two attempt.finished lines',
    );
    const to = (url: string) => attempts.find((line) => line.destination?.url === url);
    expect(to(ok.url)).toMatchObject({ status: 'delivered', destination: { id: okDestinationId, type: 'url', url: ok.url }, attempt: { n: 1, response_status: 200 } });
    expect(to(failing.url)).toMatchObject({ status: 'retrying', event_status: 'retrying', destination: { id: failingDestinationId, type: 'url', url: failing.url }, attempt: { n: 1, response_status: 500 } });
    // The 200 may come before or after the 500: the event is pending or retrying then, never delivered.
    expect(['pending', 'retrying']).toContain(to(ok.url).event_status);

    const attemptLines = (rows: { text: string }[]) => rows.map((row) => row.text.trim()).filter((text) => text.includes(id) && text.includes('attempt 1'));
    await screen.waitFor('both attempt lines', (rows) => attemptLines(rows).length === 2);
    const lines = attemptLines(screen.rows());
    const okLine = lines.find((line) => line.includes(hostOf(ok.url)));
    const failingLine = lines.find((line) => line.includes(hostOf(failing.url)));
    expect(okLine, screen.text()).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  delivered  ${id}  200  \\d+ ms  fanout → ${hostOf(ok.url)}  attempt 1 \\(auto\\)  event (pending|retrying)$`));
    expect(failingLine, screen.text()).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  retrying   ${id}  500  \\d+ ms  fanout → ${hostOf(failing.url)}  attempt 1 \\(auto\\)$`));
    screen.type('\x03');
    expect(await screen.exited).toBe(0);
  });
});

describe('hook events list', () => {
  it('shows each event\'s last answer: the failing one on a fan-out event that is retrying, 200, a network error, or none yet', async () => {
    const { id: fannedOut } = await user.json(['send', 'fanout', '--data', '{"n":1}']);
    await eventually(async () => (await user.json(['events', 'get', fannedOut])).attempts.length, (count) => count === 2, 15_000, 'both attempts');
    // A newer 200 to the other destination does not hide why the event fails.
    await user.json(['events', 'replay', fannedOut, '--destination', okDestinationId]);

    await user.json(['endpoints', 'create', 'fine', '--destination', ok.url]);
    const { id: delivered } = await user.json(['send', 'fine', '--data', '{"n":2}']);
    await user.json(['endpoints', 'create', 'unreachable', '--destination', `http://127.0.0.1:${await freePort()}/`]);
    const { id: unreachable } = await user.json(['send', 'unreachable', '--data', '{"n":3}']);
    await user.json(['endpoints', 'create', 'held']);
    const { id: held } = await user.json(['send', 'held', '--data', '{"n":4}']);

    const page = await eventually(
      async () => (await user.json(['events', 'list', '--limit', '4'])).data as any[],
      (events) => events.length === 4 && events.every((event) => event.status !== 'pending' || event.id === held) && events[3].attempt_count === 3,
      15_000, 'the four events attempted',
    );
    const byId = new Map(page.map((event) => [event.id, event]));
    expect(byId.get(fannedOut)).toMatchObject({ status: 'retrying', last_attempt: { destination_id: failingDestinationId, response_status: 500, error_class: null } });
    expect(byId.get(delivered)).toMatchObject({ status: 'delivered', last_attempt: { response_status: 200, error_class: null } });
    expect(byId.get(unreachable)).toMatchObject({ status: 'retrying', last_attempt: { response_status: null, error_class: 'network_error' } });
    expect(byId.get(held)).toMatchObject({ status: 'pending', last_attempt: null });
    expect(Date.parse(byId.get(fannedOut).last_attempt.started_at)).toBeGreaterThan(0);

    const text = (await user.run(['events', 'list', '--limit', '4'])).stdout.split('\n');
    expect(text[0]).toMatch(/^ID +RECEIVED +TYPE +STATUS +ATTEMPTS +LAST +SIZE +ENDPOINT$/);
    const row = (id: string) => text.find((line) => line.startsWith(id));
    expect(row(fannedOut)).toMatch(/ retrying +3 +500 +\d+ B +fanout$/);
    expect(row(delivered)).toMatch(/ delivered +1 +200 +\d+ B +fine$/);
    expect(row(unreachable)).toMatch(/ retrying +1 +network_error +\d+ B +unreachable$/);
    expect(row(held)).toMatch(/ pending +0 +- +\d+ B +held$/);
  });
});
