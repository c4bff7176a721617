/**
 * `hook events tail` against a real relay: a line per received event and per finished
 * attempt, as they happen (JSON Lines with --json, plain lines when piped), filters,
 * and a bad key ending it with exit 1 before it streams anything.
 */
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HOOK_BIN, HookUser } from '../support/cli.ts';
import { startHook, stopAllHookProcesses } from '../support/hook-process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let receiver: Receiver;
const user = new HookUser();

async function ingest(url: string, body: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

beforeAll(async () => {
  relay = await startTestRelay({ allowPrivateDestinations: true }, { workerPollMs: 20 });
  receiver = await startReceiver();
  await user.json(['signup', '--api-url', relay.baseUrl]);
  await user.json(['account', 'plan', 'pro']); // the file makes more endpoints than free allows
});

afterEach(async () => {
  await stopAllHookProcesses();
});

afterAll(async () => {
  await receiver?.close();
  await relay?.close();
  user.remove();
});

describe('hook events tail', () => {
  it('--json prints each received event and finished attempt as one JSON object per line, while running', async () => {
    const endpoint = await user.json(['endpoints', 'create', 'tailed', '--destination', receiver.url]);
    const tail = startHook(user, ['events', 'tail', '--json']);
    await tail.waitForStderr((line) => line.includes('"state":"open"'));
    const id = await ingest(`${endpoint.url}/path?q=1`, '{"type":"order.created"}');
    const received = await tail.waitForJson((line) => line.type === 'event.received' && line.event.id === id);
    expect(received.event).toMatchObject({ endpoint_id: endpoint.id, type: 'order.created', method: 'POST', path: '/path', query: 'q=1', size: 24 });
    const attempt = await tail.waitForJson((line) => line.type === 'attempt.finished' && line.event_id === id);
    expect(attempt).toMatchObject({ endpoint_id: endpoint.id, event_status: 'delivered', attempt: { n: 1, trigger: 'auto', response_status: 200, error: null } });
    expect(tail.jsonLines().every((line) => typeof line.type === 'string' && typeof line.version === 'number')).toBe(true);
    expect((await tail.stop('SIGINT')).code).toBe(0);
  });

  it('prints plain lines as events happen when piped, and filters by endpoint name and status', async () => {
    const failing = await user.json(['endpoints', 'create', 'failing', '--destination', `${receiver.url}/fail`]);
    const other = await user.json(['endpoints', 'create', 'other', '--destination', receiver.url]);
    receiver.respond = (request) => ({ status: request.url.endsWith('/fail') ? 500 : 200 });
    const tail = startHook(user, ['events', 'tail', '--endpoint', 'failing']);
    await tail.waitForStderr((line) => line.startsWith('Connected.'));
    const otherId = await ingest(other.url, '{}');
    const id = await ingest(failing.url, '{"type":"x"}');
    const receivedLine = await tail.waitForStdout((line) => line.includes(id) && line.includes('received'));
    expect(receivedLine).toMatch(new RegExp(`^\\S+Z  received   ${id}  failing  x  POST /  12 B$`));
    const attemptLine = await tail.waitForStdout((line) => line.includes(id) && line.includes('attempt 1'));
    expect(attemptLine).toMatch(new RegExp(`^\\S+Z  retrying   ${id}  500  \\d+ ms  failing → ${new URL(receiver.url).host}  attempt 1 \\(auto\\)$`));
    // The tail is still running: the lines came as they happened, not at exit.
    expect(tail.child.exitCode).toBeNull();
    expect(tail.stdoutLines.some((line) => line.includes(otherId))).toBe(false);
    await tail.stop();

    const onlyFailed = startHook(user, ['events', 'tail', '--status', 'delivered', '--json']);
    await onlyFailed.waitForStderr((line) => line.includes('"state":"open"'));
    const retried = await ingest(failing.url, '{}');
    // Its failed attempt is recorded before the next event is even sent; the tail gets what happens in order,
    // so once the later event's attempt is on it, a line about the retried one would have come before.
    await expect.poll(async () => (await user.json(['events', 'get', retried])).status, { timeout: 15_000 }).toBe('retrying');
    const delivered = await ingest(other.url, '{}');
    await onlyFailed.waitForJson((line) => line.type === 'attempt.finished' && line.event_id === delivered);
    expect(onlyFailed.jsonLines().some((line) => JSON.stringify(line).includes(retried))).toBe(false);
    receiver.respond = () => ({ status: 200 });
  });

  it('writes coloured lines on a terminal and stops on Ctrl-C with exit 0', async () => {
    const endpoint = await user.json(['endpoints', 'create', 'on-a-tty', '--destination', `${receiver.url}/tty`]);
    receiver.respond = (request) => ({ status: request.url.endsWith('/tty') ? 503 : 200 });
    // `script` runs hook on a pseudo-terminal; what it types into stdin is what a person types.
    const child = spawn('script', ['-qec', `stty cols 200 rows 40; exec ${HOOK_BIN} events tail --endpoint on-a-tty`, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: user.home, XDG_CONFIG_HOME: user.configHome, TERM: 'xterm-256color' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      const until = (what: () => boolean, label: string): Promise<void> =>
        expect.poll(what, { timeout: 15_000, interval: 25, message: `no ${label} on the terminal within 15 s:\n${output}` }).toBe(true);
      await until(() => output.includes('Connected.'), 'connection');
      const id = await ingest(endpoint.url, '{}');
      await until(() => output.includes(`${id}  `) && output.includes('attempt 1'), 'attempt line');
      expect(output).toMatch(new RegExp(`\x1b\\[33mretrying \x1b\\[39m  ${id}  \x1b\\[31m503\x1b\\[39m`)); // yellow: retrying; red: the answer
      expect(output).toMatch(new RegExp(`received   ${id}  on-a-tty  -  POST /`));
      child.stdin.write('\x03'); // Ctrl-C
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      receiver.respond = () => ({ status: 200 });
    }
  });

  it('exits 1 with the relay\'s problem for a bad key (refused before the upgrade), 2 for a bad status', async () => {
    const tail = startHook(user, ['events', 'tail', '--api-key', 'hk_not_a_real_key', '--json']);
    const exit = await tail.exited;
    expect(exit.code).toBe(1);
    const problem = JSON.parse(tail.stderrLines.at(-1)!);
    expect(problem).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(tail.stdoutLines).toEqual([]);
    expect((await user.run(['events', 'tail', '--status', 'bogus'])).code).toBe(2);
  });
});
