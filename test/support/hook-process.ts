/**
 * A long-running `hook` child process (`hook listen`, `hook events tail`) whose output
 * is read line by line while it runs, and local HTTP servers it forwards to. Every
 * process started here is killed by `stopAllHookProcesses()` (call it in afterEach or
 * afterAll), so a failed test leaves nothing running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { vi } from 'vitest';
import { HOOK_BIN, repoRoot, type HookUser } from './cli.ts';

export interface HookProcess {
  child: ChildProcess;
  stdoutLines: string[];
  stderrLines: string[];
  /** Resolves with the first stdout line (seen so far or to come) that `match` accepts. */
  waitForStdout(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  waitForStderr(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Stdout lines parsed as JSON (for --json runs); throws on a line that is not JSON. */
  jsonLines(): any[];
  /** Resolves with the first JSON stdout line that `match` accepts. */
  waitForJson(match: (value: any) => boolean, timeoutMs?: number): Promise<any>;
  /** Resolves once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` and waits for the exit (SIGKILL after `timeoutMs`). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it wrote, for failure messages. */
  transcript(): string;
}

const running = new Set<ChildProcess>();

export function startHook(user: HookUser, args: readonly string[], env: Record<string, string> = {}): HookProcess {
  const child = spawn(HOOK_BIN, [...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: user.home, XDG_CONFIG_HOME: user.configHome, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const stdoutLines: string[] = [];
  const stderrLines: string[] = [];
  const waiters: { lines: string[]; match: (line: string) => boolean; done: (line: string) => void }[] = [];
  const listen = (stream: NodeJS.ReadableStream, lines: string[]): void => {
    createInterface({ input: stream }).on('line', (line) => {
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.lines === lines && waiter.match(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.done(line);
        }
      }
    });
  };
  listen(child.stdout!, stdoutLines);
  listen(child.stderr!, stderrLines);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      // Let the last lines arrive before anyone reads them.
      setTimeout(() => resolve({ code, signal }), 50);
    }),
  );
  const transcript = (): string => `stdout:\n${stdoutLines.join('\n')}\nstderr:\n${stderrLines.join('\n')}`;
  const waitFor = (lines: string[], which: string, match: (line: string) => boolean, timeoutMs = 15_000): Promise<string> => {
    const seen = lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = {
        lines,
        match,
        done: (line: string) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error(`hook ${args.join(' ')}: no matching ${which} line within ${timeoutMs} ms\n${transcript()}`));
      }, timeoutMs);
      waiters.push(waiter);
    });
  };
  const parse = (line: string): any => {
    try {
      return JSON.parse(line);
    } catch {
      throw new Error(`not a JSON line: ${JSON.stringify(line)}\n${transcript()}`);
    }
  };
  return {
    child,
    stdoutLines,
    stderrLines,
    waitForStdout: (match, timeoutMs) => waitFor(stdoutLines, 'stdout', match, timeoutMs),
    waitForStderr: (match, timeoutMs) => waitFor(stderrLines, 'stderr', match, timeoutMs),
    jsonLines: () => stdoutLines.map(parse),
    waitForJson: async (match, timeoutMs) => parse(await waitFor(stdoutLines, 'JSON stdout', (line) => match(parse(line)), timeoutMs)),
    exited,
    async stop(signal = 'SIGINT', timeoutMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
    transcript,
  };
}

/** Kills every `hook` process still running (test clean-up). */
export async function stopAllHookProcesses(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

export interface LocalRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A local server `hook listen` forwards to, on a port of its own choosing or a given one (to come back on the same port). */
export interface LocalServer {
  port: number;
  requests: LocalRequest[];
  /** The status to answer with; change it any time. */
  status: number;
  waitFor(count: number, timeoutMs?: number): Promise<LocalRequest[]>;
  close(): Promise<void>;
}

export async function startLocalServer(port = 0, status = 200): Promise<LocalServer> {
  const requests: LocalRequest[] = [];
  const waiters: { count: number; done: () => void }[] = [];
  const local: LocalServer = {
    port: 0,
    requests,
    status,
    waitFor(count, timeoutMs = 15_000) {
      if (requests.length >= count) return Promise.resolve(requests);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`local server got ${requests.length} of ${count} requests within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ count, done: () => (clearTimeout(timer), resolve(requests)) });
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) });
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.done();
      }
      response.writeHead(local.status, { 'content-type': 'text/plain' });
      response.end(`local answer ${local.status}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  local.port = (server.address() as AddressInfo).port;
  return local;
}

/** A TCP port nothing listens on right now (taken by the system, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls `read` until `accept` holds for its value (vi.waitFor, every 50 ms); returns that value. */
export function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  return vi.waitFor(async () => {
    const value = await read();
    if (!accept(value)) throw new Error(`${what} not reached within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    return value;
  }, { timeout: timeoutMs, interval: 50 });
}
