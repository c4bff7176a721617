/**
 * What bench:listen (listen.ts) and bench:listen-prototype (listen-prototype.ts) share: the
 * local server that hook listen (or another client) forwards to, the wait for arrivals, the
 * sampling of a client's memory, the non-canonical JSON bodies of the paced phase and how
 * hook.js launches its long-running commands. A module of its own, as listen.ts runs its
 * bench when it is imported.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { isInterrupted, listenOnLoopback, log, REPO_ROOT } from './support.ts';

/** The CLI's launcher (the build's entry): `hook listen` as users run it. */
export const HOOK_ENTRY = join(REPO_ROOT, 'apps/cli/bin/hook.js');
const RSS_SAMPLE_EVERY_MS = 200;
const PROGRESS_EVERY_MS = 5000;

// ---------------------------------------------------------------------------------
// Local server: where hook listen forwards

export interface LocalServer {
  port: number;
  /** webhook-id → performance.now() of its first arrival. */
  arrivals: Map<string, number>;
  requests: number;
  badBodies: number;
  lastArrivalMs: number;
}

export async function startLocalServer(bodyIsExpected: (body: Buffer) => boolean, label = 'local server'): Promise<LocalServer> {
  const local: LocalServer = { port: 0, arrivals: new Map(), requests: 0, badBodies: 0, lastArrivalMs: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const atMs = performance.now();
      local.requests++;
      const id = req.headers['webhook-id'];
      if (!bodyIsExpected(Buffer.concat(chunks))) local.badBodies++;
      if (typeof id === 'string' && !local.arrivals.has(id)) {
        local.arrivals.set(id, atMs);
        local.lastArrivalMs = atMs;
      }
      res.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  server.keepAliveTimeout = 65_000;
  local.port = await listenOnLoopback(label, server);
  return local;
}

/** Waits until every id has arrived or the timeout passes; returns the ids still missing. */
export async function waitForArrivals(label: string, local: LocalServer, ids: Iterable<string>, timeoutMs: number): Promise<string[]> {
  const pending = new Set([...ids].filter((id) => !local.arrivals.has(id)));
  const total = pending.size;
  const startedMs = performance.now();
  let lastProgressMs = startedMs;
  while (pending.size > 0 && performance.now() - startedMs < timeoutMs && !isInterrupted()) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const id of pending) if (local.arrivals.has(id)) pending.delete(id);
    if (performance.now() - lastProgressMs >= PROGRESS_EVERY_MS) {
      lastProgressMs = performance.now();
      log(`${label}: ${total - pending.size} of ${total} outstanding events forwarded after ${((lastProgressMs - startedMs) / 1000).toFixed(0)} s`);
    }
  }
  return [...pending];
}

// ---------------------------------------------------------------------------------
// A client process's memory and launch

export function procStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** A process's memory as sampled: the highest VmRSS seen and the highest VmHWM (kB). */
export interface MemorySampler {
  sample(): void;
  stop(): void;
  memory(): { peakRssKb: number; hwmKb: number };
  /** Its peak RSS: the higher of the two (kB). */
  peakKb(): number;
}

/** Samples a process's VmRSS and VmHWM every RSS_SAMPLE_EVERY_MS until stopped. */
export function sampleMemory(pid: number): MemorySampler {
  let peakRssKb = 0;
  let hwmKb = 0;
  const sample = (): void => {
    peakRssKb = Math.max(peakRssKb, procStatusKb(pid, 'VmRSS'));
    hwmKb = Math.max(hwmKb, procStatusKb(pid, 'VmHWM'));
  };
  const sampler = setInterval(sample, RSS_SAMPLE_EVERY_MS);
  return { sample, stop: () => clearInterval(sampler), memory: () => ({ peakRssKb, hwmKb }), peakKb: () => Math.max(peakRssKb, hwmKb) };
}

/**
 * How hook.js runs the long-running commands: its V8 flags (LONG_RUNNING_FLAGS) and malloc
 * settings, read from it so that the CLI run from its sources (profiled) runs as it would.
 */
export function longRunningLaunch(hookEntry = HOOK_ENTRY): { flags: string[]; env: Record<string, string> } {
  const launcher = readFileSync(hookEntry, 'utf8');
  const flags = /const LONG_RUNNING_FLAGS = \[([^\]]*)\]/.exec(launcher)?.[1]?.match(/'[^']*'/g)?.map((flag) => flag.slice(1, -1));
  const env = /\{ (MALLOC_[^}]*), \.\.\.process\.env \}/.exec(launcher)?.[1];
  if (!flags || !env) throw new Error(`cannot read LONG_RUNNING_FLAGS and the malloc settings from ${hookEntry}: update test/bench/listen-receiver.ts`);
  return { flags, env: Object.fromEntries([...env.matchAll(/(\w+): '([^']*)'/g)].map(([, name, value]) => [name!, value!])) };
}

// ---------------------------------------------------------------------------------
// Bodies

/**
 * A JSON body as senders write it, not as JSON.stringify would (a space after the first
 * brace): a relay that re-serialises changes its bytes, and with them the sender's signature.
 */
export function nonCanonical(body: Buffer): Buffer {
  return Buffer.from(`{ ${body.toString('utf8').slice(1)}`);
}
