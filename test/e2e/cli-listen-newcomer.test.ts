/**
 * `hook listen` on a developer's first day (issue 17): which endpoint it forwards without
 * --endpoint (the profile's default, set by the first `hook endpoints create` and by
 * `hook endpoints use`; else the only one; else it asks, or creates one and says so), and
 * what it prints: a line per delivery with the event type, the status coloured on a
 * terminal, retries with when the next is due (the relay's `recorded` verdict), the local
 * answer under failures (--print-body), only some event types (--events), the secret
 * alone (--print-secret). The real `hook` binary, a real relay and real local servers.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HOOK_BIN, HookUser } from '../support/cli.ts';
import { startHook, stopAllHookProcesses, type HookProcess } from '../support/hook-process.ts';
import { api, createEndpoint, startTestRelay, type TestRelay } from '../support/relay.ts';

/** A time as a pipe shows it: UTC, to the second. */
const ISO_SECONDS = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z';

/** Two retries, two seconds apart: long enough to show "next retry in 2 s", short enough to see them run out. */
const RETRY_MS = 2000;

let relay: TestRelay;
const users: HookUser[] = [];
const servers: Server[] = [];

interface Received {
  url: string;
  eventId: string;
  body: string;
}

/** A local server: `/fail…` answers 500 with a body a developer would want to see, anything else 200 "ok". */
async function localServer(): Promise<{ port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ url: request.url ?? '', eventId: String(request.headers['webhook-id']), body: Buffer.concat(chunks).toString() });
      const failing = (request.url ?? '').startsWith('/fail');
      response.writeHead(failing ? 500 : 200, { 'content-type': 'text/plain' });
      response.end(failing ? 'TypeError: cannot read properties of undefined (reading \'amount\')\n    at handler (server.js:12:30)' : 'ok');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, received };
}

/** A new user with a new (free) account, logged in to the test relay. */
async function newUser(): Promise<{ user: HookUser; key: string }> {
  const user = new HookUser();
  users.push(user);
  const signup = await user.json(['signup', '--api-url', relay.baseUrl]);
  return { user, key: signup.api_key };
}

async function ingest(url: string, body: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

async function eventOf(key: string, id: string): Promise<any> {
  return (await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key })).body;
}

function profileOf(user: HookUser): any {
  return JSON.parse(readFileSync(user.configPath, 'utf8')).profiles.default;
}

async function listenJson(user: HookUser, args: string[]): Promise<{ hook: HookProcess; ready: any }> {
  const hook = startHook(user, ['listen', ...args, '--json']);
  const ready = await hook.waitForJson((line) => line.type === 'ready');
  return { hook, ready };
}

beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: [RETRY_MS, RETRY_MS] }, { workerPollMs: 50 });
});

afterEach(async () => {
  await stopAllHookProcesses();
});

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await relay?.close();
  for (const user of users) user.remove();
});

describe('which endpoint hook listen forwards', () => {
  it('forwards the endpoint the first hook endpoints create made the default; a second create leaves it; endpoints list marks it', async () => {
    const { user, key } = await newUser();
    const first = await user.json(['endpoints', 'create', 'stripe-dev']);
    expect(first).toMatchObject({ name: 'stripe-dev', destination: { type: 'cli' }, default: true });
    expect(profileOf(user).default_endpoint).toEqual({ id: first.id, name: 'stripe-dev' });
    const second = await user.json(['endpoints', 'create', 'github-dev']);
    expect(second.default).toBe(false);
    expect(profileOf(user).default_endpoint.id).toBe(first.id);

    const listed = await user.json(['endpoints', 'list']);
    expect(listed.data.map((endpoint: any) => [endpoint.name, endpoint.default])).toEqual([['github-dev', false], ['stripe-dev', true]]);
    const table = await user.run(['endpoints', 'list']);
    expect(table.stdout).toMatch(/ stripe-dev \(default\) /);
    expect(table.stdout).not.toMatch(/github-dev \(default\)/);

    // The event waits on the relay until hook listen forwards it.
    const sent = await user.json(['send', 'stripe-dev', '--data', '{"type":"invoice.paid","amount":100}']);
    const local = await localServer();
    const hook = startHook(user, ['listen', String(local.port)]);
    const line = await hook.waitForStdout((text) => text.includes(sent.id));
    expect(line).toMatch(new RegExp(`^${ISO_SECONDS}  200  POST /  \\d+ ms  ${sent.id}  invoice\\.paid$`));
    expect(hook.stderrLines).toContain(`Endpoint:    stripe-dev (${first.id}), the default endpoint`);
    expect(local.received.map((request) => request.eventId)).toEqual([sent.id]);
    expect((await eventOf(key, sent.id)).status).toBe('delivered');
    expect((await user.json(['endpoints', 'list'])).data).toHaveLength(2); // nothing created
    expect((await hook.stop()).code).toBe(0);
  });

  it('forwards the endpoint chosen with hook endpoints use; with several and none chosen it fails saying how to choose', async () => {
    const { user } = await newUser();
    await user.json(['endpoints', 'create', 'orders']);
    const payments = await user.json(['endpoints', 'create', 'payments']);
    const used = await user.json(['endpoints', 'use', 'payments']);
    expect(used).toMatchObject({ profile: 'default', default_endpoint: { id: payments.id, name: 'payments' } });
    const local = await localServer();
    const { hook, ready } = await listenJson(user, [String(local.port)]);
    expect(ready).toMatchObject({ choice: 'default', created: false, endpoint: { id: payments.id } });
    await hook.stop();

    expect((await user.json(['endpoints', 'use', '--clear'])).default_endpoint).toBeNull();
    const refused = await user.run(['listen', '3000']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('No default endpoint, and this account has 2: payments, orders');
    expect(refused.stderr).toContain('`hook listen 3000 --endpoint payments`');
    expect(refused.stderr).toContain('`hook endpoints use payments`');
    const refusedJson = await user.run(['listen', '3000', '--json']);
    expect(JSON.parse(refusedJson.stderr.trim().split('\n').at(-1)!)).toMatchObject({ code: 'endpoint_not_chosen' });
    expect((await user.json(['endpoints', 'list'])).data).toHaveLength(2);
  });

  it('forwards the account\'s only endpoint; with none it creates one and says it counts against the plan', async () => {
    const { user: one, key } = await newUser();
    const only = await createEndpoint(relay.baseUrl, key, { name: 'made-by-the-api' });
    const local = await localServer();
    const listening = await listenJson(one, [String(local.port)]);
    expect(listening.ready).toMatchObject({ choice: 'only', created: false, endpoint: { id: only.id } });
    await listening.hook.stop();

    const { user: none } = await newUser();
    const human = startHook(none, ['listen', String(local.port)]);
    await human.waitForStderr((line) => line.startsWith('Connected.'));
    const created = human.stderrLines.find((line) => line.startsWith('This account had no endpoint'));
    expect(created).toMatch(/^This account had no endpoint: created cli-\S+ \(ep_\w+\) for `hook listen`\. It counts against your plan's endpoints: 1 of 3 on the free plan\.$/);
    expect(human.stderrLines.find((line) => line.startsWith('Endpoint:'))).toMatch(/, created now$/);
    await human.stop();
    const endpoints = (await none.json(['endpoints', 'list'])).data;
    expect(endpoints).toHaveLength(1);
    expect(profileOf(none).default_endpoint).toEqual({ id: endpoints[0].id, name: endpoints[0].name });

    // The next run forwards it: nothing more is created.
    const again = await listenJson(none, [String(local.port)]);
    expect(again.ready).toMatchObject({ choice: 'default', created: false, endpoint: { id: endpoints[0].id } });
    await again.hook.stop();
    expect((await none.json(['endpoints', 'list'])).data).toHaveLength(1);
  });

  it('says so when the default endpoint was deleted, and falls back', async () => {
    const { user, key } = await newUser();
    const gone = await user.json(['endpoints', 'create', 'gone-soon']);
    const staying = await user.json(['endpoints', 'create', 'staying']);
    // Deleted elsewhere (the dashboard, another machine): the profile still names it.
    expect((await api(relay.baseUrl, 'DELETE', `/v1/endpoints/${gone.id}`, { key })).status).toBe(204);
    const local = await localServer();
    const { hook, ready } = await listenJson(user, [String(local.port)]);
    expect(ready).toMatchObject({ choice: 'only', endpoint: { id: staying.id } });
    const notice = JSON.parse(hook.stderrLines.find((line) => line.includes('"notice"'))!);
    expect(notice).toEqual({ type: 'notice', message: `The default endpoint gone-soon (${gone.id}) no longer exists in this account; removed it from profile 'default'.` });
    expect(profileOf(user).default_endpoint).toBeUndefined();
    await hook.stop();

    // Deleting the default with the CLI forgets it at once.
    await user.json(['endpoints', 'use', 'staying']);
    await user.json(['endpoints', 'delete', 'staying']);
    expect(profileOf(user).default_endpoint).toBeUndefined();
  });
});

describe('what hook listen prints', () => {
  it('on an 80-column terminal: the status coloured, each retry on a row of its own with when the next is due, nothing wrapped', async () => {
    const { user } = await newUser();
    const endpoint = await user.json(['endpoints', 'create', 'tty']);
    const local = await localServer();
    // `script` runs hook on a pseudo-terminal, as a person's shell would.
    const child = spawn('script', ['-qec', `stty cols 80 rows 40; exec ${HOOK_BIN} listen ${local.port}`, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: user.home, XDG_CONFIG_HOME: user.configHome, TERM: 'xterm-256color' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await expect.poll(() => screen, { timeout: 15_000 }).toContain('Connected.');
      const ok = await ingest(endpoint.url, '{"type":"invoice.paid"}');
      const failing = await ingest(`${endpoint.url}/fail`, '{"type":"charge.failed"}');
      await expect.poll(() => screen, { timeout: 20_000 }).toContain('retries exhausted: failed');
      const at = '\\d{2}:\\d{2}:\\d{2}';
      expect(screen).toMatch(new RegExp(`${at}\x1b\\[22m  \x1b\\[32m200\x1b\\[39m  POST /  \\d+ ms  ${ok}  invoice\\.paid\r\n`));
      expect(screen).toMatch(new RegExp(`${at}\x1b\\[22m  \x1b\\[31m500\x1b\\[39m  POST /fail  \\d+ ms  ${failing}  charge\\.failed\r\n`));
      for (const verdict of [`attempt 1; next retry in 2 s at ${at}`, `attempt 2; next retry in 2 s at ${at}`, 'attempt 3; retries exhausted: failed']) {
        expect(screen).toMatch(new RegExp(`\r\n\x1b\\[2m {10}${verdict}\x1b\\[22m\r\n`));
      }
      // Every delivery row fits the 80 columns.
      const rows = screen.replaceAll(/\x1b\[[0-9;?]*[A-Za-z]/g, '').split('\r\n').filter((row) => row.includes('evt_') || row.includes('attempt'));
      expect(rows.length).toBeGreaterThanOrEqual(7);
      for (const row of rows) expect([...row].length, row).toBeLessThanOrEqual(80);
      child.stdin.write('\x03'); // Ctrl-C
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('prints plain lines in a pipe, the local answer under failures with --print-body (under all with --print-body all), and the relay\'s verdict in --json', async () => {
    const { user, key } = await newUser();
    const endpoint = await user.json(['endpoints', 'create', 'bodies']);
    const local = await localServer();
    const hook = startHook(user, ['listen', String(local.port), '--print-body']);
    await hook.waitForStderr((line) => line.startsWith('Connected.'));
    const ok = await ingest(endpoint.url, '{"type":"invoice.paid"}');
    await hook.waitForStdout((line) => line.includes(ok));
    const failing = await ingest(`${endpoint.url}/fail`, '{"type":"charge.failed"}');
    const failedLine = await hook.waitForStdout((line) => line.includes(failing));
    expect(failedLine).toMatch(new RegExp(`^${ISO_SECONDS}  500  POST /fail  \\d+ ms  ${failing}  charge\\.failed  \\(attempt 1; next retry in 2 s at ${ISO_SECONDS}\\)$`));
    await hook.waitForStdout((line) => line.includes('at handler (server.js:12:30)'));
    const lines = hook.stdoutLines;
    const okIndex = lines.findIndex((line) => line.includes(ok));
    expect(lines[okIndex + 1]).not.toMatch(/^    /); // a 2xx answer is not shown
    const failedIndex = lines.indexOf(failedLine);
    expect(lines.slice(failedIndex + 1, failedIndex + 3)).toEqual([
      '    TypeError: cannot read properties of undefined (reading \'amount\')',
      '        at handler (server.js:12:30)',
    ]);
    expect(lines.join('\n')).not.toContain('\x1b['); // no colours off a terminal
    await hook.stop();

    const all = await listenJson(user, [String(local.port), '--print-body', 'all']);
    // The failing event's retry is due at once for a new listener; the relay's verdict says when the next one is.
    const retried = await all.hook.waitForJson((line) => line.type === 'delivery' && line.event_id === failing);
    expect(retried).toMatchObject({
      status: 500, attempt: 2, trigger: 'listen', recorded: true, delivery_status: 'retrying', event_status: 'retrying',
      next_attempt_at: expect.stringMatching(/Z$/), response_body: expect.stringContaining('TypeError'),
    });
    expect((await eventOf(key, failing)).deliveries[0]).toMatchObject({ status: 'retrying', next_attempt_at: retried.next_attempt_at });
    const next = await ingest(endpoint.url, '{"type":"invoice.paid"}');
    const delivered = await all.hook.waitForJson((line) => line.type === 'delivery' && line.event_id === next);
    expect(delivered).toMatchObject({
      status: 200, event_type: 'invoice.paid', response_body: 'ok', reported: true, recorded: true, mirror: false,
      trigger: 'listen', delivery_status: 'delivered', event_status: 'delivered', next_attempt_at: null,
    });
    await all.hook.stop();
  });

  it('marks a replay: hook events replay sends the event to the running listener again', async () => {
    const { user } = await newUser();
    const endpoint = await user.json(['endpoints', 'create', 'replays']);
    const local = await localServer();
    const hook = startHook(user, ['listen', String(local.port)]);
    await hook.waitForStderr((line) => line.startsWith('Connected.'));
    const id = await ingest(endpoint.url, '{"type":"customer.created"}');
    await hook.waitForStdout((line) => line.includes(id));
    const replay = await user.run(['events', 'replay', id]);
    expect(replay.code).toBe(0);
    const replayed = await hook.waitForStdout((line) => line.includes(id) && line.includes('replay'));
    expect(replayed).toMatch(new RegExp(`  200  POST /  \\d+ ms  ${id}  customer\\.created  \\(replay; attempt 2\\)$`));
    expect(local.received.map((request) => request.eventId)).toEqual([id, id]);
    await hook.stop();
  });

  it('--events forwards only the types given; the others wait on the relay for a listener without --events', async () => {
    const { user, key } = await newUser();
    const endpoint = await user.json(['endpoints', 'create', 'typed']);
    const local = await localServer();
    const { hook, ready } = await listenJson(user, [String(local.port), '--events', 'invoice.paid,invoice.voided', '--max-in-flight', '1']);
    expect(ready.event_types).toEqual(['invoice.paid', 'invoice.voided']);
    const skipped = await ingest(endpoint.url, '{"type":"charge.failed"}');
    const untyped = await ingest(endpoint.url, '{"no":"type"}');
    const taken = await ingest(endpoint.url, '{"type":"invoice.paid"}');
    // Oldest first, one at a time: had the others been taken, they would have come first.
    await hook.waitForJson((line) => line.type === 'delivery' && line.event_id === taken);
    expect(local.received.map((request) => request.eventId)).toEqual([taken]);
    for (const id of [skipped, untyped]) expect(await eventOf(key, id)).toMatchObject({ status: 'pending', attempt_count: 0 });
    await hook.stop();

    const human = startHook(user, ['listen', String(local.port), '--events', 'invoice.paid']);
    await human.waitForStderr((line) => line.startsWith('Connected.'));
    expect(human.stderrLines).toContain('Events:      only invoice.paid (others wait on the relay for a `hook listen` without --events)');
    await human.stop();

    const everything = startHook(user, ['listen', String(local.port)]);
    await everything.waitForStdout((line) => line.includes(untyped));
    await everything.waitForStdout((line) => line.includes(skipped));
    await everything.stop();
  });

  it('--print-secret prints the signing secret alone and exits', async () => {
    const { user, key } = await newUser();
    const endpoint = await user.json(['endpoints', 'create', 'secretive']);
    const secret = (await api(relay.baseUrl, 'GET', `/v1/destinations/${endpoint.destinations[0].id}/secret`, { key })).body.secret;
    const printed = await user.run(['listen', '--print-secret']);
    expect(printed).toMatchObject({ code: 0, stdout: `${secret}\n` });
    expect(await user.json(['listen', '--print-secret'])).toEqual({ endpoint_id: endpoint.id, endpoint_name: 'secretive', secret });
    expect((await user.run(['listen'])).code).toBe(2); // without it, the port is needed
  });
});
