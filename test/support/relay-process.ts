/** The relay as a separate process (`node apps/relay/src/server.ts`) on a given database. */
import { spawn, type ChildProcess } from 'node:child_process';
import { TEST_SECRET_KEY } from './secret-key.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;

export interface RelayProcess {
  child: ChildProcess;
  baseUrl: string;
}

/**
 * Starts a relay process on `databaseUrl` (free port, warnings only, private
 * destinations allowed for local receivers) with `env` on top; resolves once it listens.
 */
export async function startRelayProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<RelayProcess> {
  const child = spawn(process.execPath, ['apps/relay/src/server.ts'], {
    cwd: repoRoot,
    env: { ...process.env, HOOK_DATABASE_URL: databaseUrl, HOOK_SECRET_KEY: TEST_SECRET_KEY, HOOK_PORT: '0', HOOK_LOG_LEVEL: 'warn', HOOK_ALLOW_PRIVATE_DESTINATIONS: 'true', HOOK_SIGNUP_RATE_LIMIT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /Hook relay listening on (\S+)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`relay exited (${code}) before listening: ${stderr}`)));
  });
  return { child, baseUrl };
}

/**
 * A metric a relay process serves at GET /metrics: the sum of its samples (every label
 * set), 0 when it has none. For instance `hook_stream_watches_elsewhere`, which says
 * a process has learned of another's live-stream session (wait on it with expect.poll).
 */
export async function relayMetric(baseUrl: string, name: string): Promise<number> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (!response.ok) throw new Error(`GET /metrics: ${response.status}`);
  const samples = (await response.text()).split('\n').filter((line) => line === name || line.startsWith(`${name} `) || line.startsWith(`${name}{`));
  return samples.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** Stops relay processes (SIGTERM) and waits for them to exit. */
export async function stopRelayProcesses(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(children.map(async (child) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }));
}

/** Relay processes started on one database and port by port, each forgotten when it exits: `stopAll` stops the ones still running. */
export class RelayProcesses {
  readonly #running = new Set<ChildProcess>();

  async start(databaseUrl: string, port: number): Promise<RelayProcess> {
    const relay = await startRelayProcess(databaseUrl, { HOOK_PORT: String(port) });
    this.#running.add(relay.child);
    relay.child.once('exit', () => this.#running.delete(relay.child));
    return relay;
  }

  stopAll(): Promise<void> {
    return stopRelayProcesses([...this.#running]);
  }
}

/**
 * One API request to a relay process with `key`: its JSON answer (null when empty);
 * throws, naming the route and the answer, unless it is 2xx.
 */
export async function callRelay(baseUrl: string, method: string, path: string, key: string, body?: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}
