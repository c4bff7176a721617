/**
 * What the real-broker tests (npm run test:brokers) share: each broker's URL (from its
 * HOOK_TEST_*_URL, else the machine's own service), the check that it is up (a test file
 * against a broker that is down fails with how to start it; it never skips), and names no
 * other run uses.
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { QueuePublisher } from '../../apps/relay/src/delivery/queues/index.ts';
import type { QueueMessage } from '../../apps/relay/src/delivery/queues/types.ts';

export interface Broker {
  name: string;
  url: string;
  /** The environment variable that overrides `url`. */
  env: string;
  /** How to start the machine's own service. */
  start: string;
}

export function broker(name: string, env: string, fallback: string, start: string): Broker {
  return { name, url: process.env[env] || fallback, env, start };
}

/** Throws one line naming the broker and how to start it when nothing answers at its address. */
export async function requireReachable(b: Broker): Promise<void> {
  const url = new URL(b.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port);
  const reached = await tcpReachable(host, port);
  if (!reached) throw new Error(`${b.name} is not reachable at ${url.host}: start it (${b.start}) or set ${b.env}`);
}

export function tcpReachable(host: string, port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A suffix for exchanges, queues, streams, subjects and topics that no other run uses. */
export function uniqueSuffix(): string {
  return `${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
}

/** JSON whitespace a re-serialisation would lose, and bytes that are not UTF-8: the body must arrive as is. */
export const BODY = Buffer.concat([Buffer.from('{ "type" : "order.paid",\n\t"amount": [ 1 , 2.50 ] }  \r\n'), Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3])]);

export const HEADERS = {
  'webhook-id': 'msg_2brokerTest',
  'webhook-timestamp': '1767225600',
  'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  'content-type': 'application/json',
};

export function message(overrides: Partial<QueueMessage> = {}): QueueMessage {
  return { body: BODY, headers: { ...HEADERS }, ...overrides };
}

/** A publisher that may reach the machine's own brokers (loopback). */
export function localPublisher(timeoutMs = 10_000): QueuePublisher {
  return new QueuePublisher({ timeoutMs, allowPrivateDestinations: true });
}

/** A free local port: listened on and let go. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** How long a broker this test starts has to log that it is ready. */
const STARTUP_TIMEOUT_MS = 10_000;

/**
 * Starts a broker binary of the machine's (a second server, with sign-in required) and waits
 * for the line it logs once it takes connections.
 */
export async function startServer(command: string, args: string[], ready: RegExp): Promise<ChildProcess> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const started = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (ready.test(output)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', (error) => reject(new Error(`${command} could not start (${error.message}); it comes with the machine's broker packages`)));
    child.once('exit', (code) => reject(new Error(`${command} exited with ${code} before it was ready: ${output.trim()}`)));
  });
  // Never left running when it did not come up (or came up wrong): the test's afterAll has no handle on it.
  const notReady = setTimeout(() => child.kill('SIGTERM'), STARTUP_TIMEOUT_MS);
  try {
    await started;
  } catch (error) {
    child.kill('SIGTERM');
    throw error;
  } finally {
    clearTimeout(notReady);
  }
  return child;
}

export async function stopServer(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
