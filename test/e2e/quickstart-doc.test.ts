/**
 * docs/quickstart.md's "With the CLI" section runs as written: its `sh` blocks, verbatim,
 * with bash, as a newcomer in a fresh home directory whose `npx hook` talks to a real
 * relay (HOOK_API_URL, the one thing put in place of `npm start`), while a real HTTP
 * server listens on the port the page names. The event `hook send` stored before anyone
 * listened must reach that server through `hook listen`, and the replay the page shows
 * must bring it there again. (The sections before it use curl with a key pasted from an
 * answer, which a script cannot do as written; the CLI section is the one to run.)
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
const SUPPORT_BIN = resolve(import.meta.dirname, '..', 'support', 'bin');
const PAGE = readFileSync(join(REPO_ROOT, 'docs', 'quickstart.md'), 'utf8');
const CLI_SECTION = PAGE.slice(PAGE.indexOf('\n## With the CLI\n'), PAGE.indexOf('\n## ', PAGE.indexOf('\n## With the CLI\n') + 1));
const BLOCKS = [...CLI_SECTION.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
/** The port the page tells you to run your handler on. */
const PORT = Number(/npx hook listen (\d+)/.exec(CLI_SECTION)?.[1]);

let relay: TestRelay;
let home: string;
let server: Server;
const received: { eventId: string; body: string }[] = [];
let listener: ChildProcess | undefined;
let listenOutput = '';

function environment(): NodeJS.ProcessEnv {
  return { PATH: `${SUPPORT_BIN}:${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH}`, HOME: home, HOOK_API_URL: relay.baseUrl };
}

function runBlock(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = execFile('bash', ['-euo', 'pipefail', '-c', script], { cwd: REPO_ROOT, env: environment(), timeout: 60_000 }, (error, stdout, stderr) =>
      resolvePromise({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }));
    child.stdin?.end();
  });
}

/** Waits until the local server has had `count` requests; a failure shows what hook listen printed. */
async function untilReceived(count: number, timeout: number): Promise<void> {
  await expect.poll(() => received.length, { timeout }).toBe(count).catch((error: Error) => {
    throw new Error(`${error.message}\nhook listen printed:\n${listenOutput}`);
  });
}

beforeAll(async () => {
  relay = await startTestRelay({}, { workerPollMs: 50 });
  home = mkdtempSync(join(tmpdir(), 'hook-quickstart-'));
  // The newcomer's handler: answers every POST with 200.
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ eventId: String(request.headers['webhook-id']), body: Buffer.concat(chunks).toString() });
      response.end('handled');
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', (error) => reject(new Error(`the quickstart's port ${PORT} is taken on this machine (${error.message}); free it to run this test`)));
    server.listen(PORT, '127.0.0.1', resolveListen);
  });
});

afterAll(async () => {
  if (listener?.pid !== undefined && listener.exitCode === null && listener.signalCode === null) process.kill(-listener.pid, 'SIGKILL');
  await new Promise((resolveClose) => server?.close(resolveClose));
  await relay?.close();
  rmSync(home, { recursive: true, force: true });
});

describe('docs/quickstart.md, with the CLI', () => {
  it('has the three steps: set up and send, listen, replay', () => {
    expect(BLOCKS).toHaveLength(3);
    expect(BLOCKS[0]).toContain('npx hook endpoints create stripe-dev');
    expect(BLOCKS[0]).toContain('npx hook send stripe-dev');
    expect(BLOCKS[1]!.trim()).toBe(`npx hook listen ${PORT}`);
    expect(BLOCKS[2]).toContain('npx hook events replay');
  });

  it('delivers the event sent before anyone listened to the local server, then again after the replay', async () => {
    const setup = await runBlock(BLOCKS[0]!);
    expect(setup.code, setup.stderr).toBe(0);
    expect(setup.stdout).toContain('invoice.paid'); // hook events list shows the event

    // Its own process group, so the stop reaches hook under npx.
    listener = spawn('bash', ['-c', BLOCKS[1]!], { cwd: REPO_ROOT, env: environment(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    listener.stdout!.on('data', (chunk: Buffer) => (listenOutput += chunk.toString()));
    listener.stderr!.on('data', (chunk: Buffer) => (listenOutput += chunk.toString()));
    await untilReceived(1, 30_000);
    expect(received[0]!.body).toBe('{"type":"invoice.paid","amount":100}');
    const eventId = received[0]!.eventId;
    expect(listenOutput).toContain("Endpoint:    stripe-dev (ep_");
    await expect.poll(() => listenOutput, { timeout: 10_000 }).toMatch(new RegExp(`  200  POST /  \\d+ ms  ${eventId}  invoice\\.paid\\n`));

    const replay = await runBlock(BLOCKS[2]!);
    expect(replay.code, replay.stderr).toBe(0);
    await untilReceived(2, 15_000);
    expect(received[1]!.eventId).toBe(eventId);
    await expect.poll(() => listenOutput, { timeout: 10_000 }).toContain(`${eventId}  invoice.paid  (replay; attempt 2)`);

    // Ctrl-C, as a terminal sends it: to the whole process group (npx re-raises it on itself once hook has stopped).
    const exited = new Promise<void>((resolveExit) => listener!.once('exit', () => resolveExit()));
    process.kill(-listener.pid!, 'SIGINT');
    await exited;
    expect(listenOutput).toMatch(/\nStopped\.\n$/);
  }, 120_000);
});
