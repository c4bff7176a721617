/**
 * The real `hook` binary (node_modules/.bin/hook) as a child process, with its own
 * config directory, so tests see exactly what a user's shell would: stdout, stderr,
 * exit code, files written.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startTestRelay, type TestRelay } from './relay.ts';

export const repoRoot = new URL('../../', import.meta.url).pathname;
export const HOOK_BIN = join(repoRoot, 'node_modules', '.bin', 'hook');

export interface HookRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stdoutBytes: Buffer;
  stderr: string;
}

export interface RunOptions {
  /** Variables on top of the isolated environment (PATH, HOME, XDG_CONFIG_HOME). */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed; stdin is closed at once without it. */
  input?: string | Buffer;
  /** Kill the run (and fail) after this long. */
  timeoutMs?: number;
}

/** A user with an empty home and config directory; `run` executes `hook` as them. */
export class HookUser {
  readonly home: string;
  readonly configHome: string;

  constructor() {
    this.home = mkdtempSync(join(tmpdir(), 'hook-cli-home-'));
    this.configHome = join(this.home, 'xdg-config');
  }

  /** Where the CLI keeps its config for this user. */
  get configPath(): string {
    return join(this.configHome, 'hook', 'config.json');
  }

  run(args: readonly string[], options: RunOptions = {}): Promise<HookRun> {
    return runHook(args, { ...options, env: { HOME: this.home, XDG_CONFIG_HOME: this.configHome, ...options.env } });
  }

  /** Runs with --json, expects exit 0, and returns stdout parsed (it must be one JSON document). */
  async json<T = any>(args: readonly string[], options: RunOptions = {}): Promise<T> {
    const result = await this.run([...args, '--json'], options);
    if (result.code !== 0) throw new Error(`hook ${args.join(' ')} --json exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
    return JSON.parse(result.stdout) as T;
  }

  remove(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}

/**
 * Runs the binary as a shell would (its `#!/usr/bin/env node` line picks the `node` on
 * PATH), in an environment with nothing of the test process's HOOK_* variables.
 */
export function runHook(args: readonly string[], options: RunOptions = {}): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(HOOK_BIN, [...args], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`hook ${args.join(' ')} did not finish within ${options.timeoutMs ?? 20_000} ms\nstderr: ${Buffer.concat(stderr).toString()}`));
    }, options.timeoutMs ?? 20_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(stdout);
      resolve({ code, signal, stdout: stdoutBytes.toString('utf8'), stdoutBytes, stderr: Buffer.concat(stderr).toString('utf8') });
    });
    child.stdin.end(options.input);
  });
}

/**
 * A test file's user, signed up on a test relay of the file's own: both made before the
 * tests, closed and removed after them. `relay` is set once the tests run.
 */
export function signedUpUser(): { user: HookUser; relay: TestRelay } {
  const setup = { user: new HookUser(), relay: undefined as unknown as TestRelay };
  beforeAll(async () => {
    setup.relay = await startTestRelay();
    await setup.user.json(['signup', '--api-url', setup.relay.baseUrl]);
  });
  afterAll(async () => {
    await setup.relay?.close();
    setup.user.remove();
  });
  return setup;
}
