/**
 * bench:listen-prototype's client: a lean stand-in for `hook listen` in the prototype
 * design (listen-prototype-server.ts says the frames). It takes binary frames of events
 * over one WebSocket, POSTs each to the local server through an undici Pool (dispatch with
 * a handler of its own, as the real CLI does), prints one line per result (as `hook listen
 * --json` does, a turn's lines in one write) and acks a turn's results in one binary frame.
 * Not product code: no reconnect, no resume, no timeouts beyond undici's, no options.
 *
 * Environment: PROTO_SESSION_URL (ws://…/session), PROTO_TARGET (http://127.0.0.1:<port>),
 * PROTO_CONNECTIONS (default 32). Prints "ready" once connected.
 */
import { Pool, type Dispatcher } from 'undici';
import WebSocket from 'ws';

const SESSION_URL = process.env.PROTO_SESSION_URL!;
const TARGET = process.env.PROTO_TARGET!;
const CONNECTIONS = Number(process.env.PROTO_CONNECTIONS ?? 32);

const pool = new Pool(TARGET, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000 });
const socket = new WebSocket(SESSION_URL, { perMessageDeflate: false });

interface Result { id: string; status: number; startedMs: number; durationMs: number }
let results: Result[] = [];
let ackScheduled = false;

function done(result: Result): void {
  results.push(result);
  if (!ackScheduled) {
    ackScheduled = true;
    setImmediate(flushAcks);
  }
}

function flushAcks(): void {
  ackScheduled = false;
  const batch = results;
  results = [];
  let size = 0;
  for (const result of batch) size += 1 + result.id.length + 14;
  const frame = Buffer.allocUnsafe(size);
  let at = 0;
  let lines = '';
  for (const result of batch) {
    frame[at++] = result.id.length;
    at += frame.write(result.id, at, 'latin1');
    at = frame.writeUInt16BE(result.status, at);
    at = frame.writeDoubleBE(result.startedMs, at);
    at = frame.writeFloatBE(result.durationMs, at);
    lines += `${result.status} ${result.id} ${result.durationMs.toFixed(1)} ms\n`;
  }
  socket.send(frame, { binary: true });
  process.stdout.write(lines);
}

/** One POST to the local server; undici calls it back. */
class Forwarding implements Dispatcher.DispatchHandlers {
  readonly id: string;
  readonly startedMs = Date.now();
  readonly started = performance.now();
  status = 0;

  constructor(id: string) {
    this.id = id;
  }

  onConnect(): void {}

  onHeaders(statusCode: number): boolean {
    if (statusCode >= 200) this.status = statusCode;
    return true;
  }

  onData(): boolean {
    return true;
  }

  onComplete(): void {
    done({ id: this.id, status: this.status, startedMs: this.startedMs, durationMs: performance.now() - this.started });
  }

  onError(): void {
    done({ id: this.id, status: 0, startedMs: this.startedMs, durationMs: performance.now() - this.started });
  }
}

function onEvents(frame: Buffer): void {
  let at = 0;
  while (at < frame.length) {
    const idLength = frame[at++]!;
    const id = frame.toString('latin1', at, at + idLength);
    at += idLength;
    const timestamp = frame.readUInt32BE(at);
    at += 4;
    const signatureLength = frame[at++]!;
    const signature = frame.toString('latin1', at, at + signatureLength);
    at += signatureLength;
    const bodyLength = frame.readUInt32BE(at);
    at += 4;
    const body = frame.subarray(at, at + bodyLength);
    at += bodyLength;
    const headers = ['content-type', 'application/json', 'webhook-id', id, 'webhook-timestamp', String(timestamp), 'webhook-signature', `v1,${signature}`];
    const forwarding = new Forwarding(id);
    try {
      pool.dispatch({ path: '/', method: 'POST', headers, body }, forwarding);
    } catch {
      forwarding.onError();
    }
  }
}

socket.on('open', () => process.stdout.write('ready\n'));
socket.on('message', (data, isBinary) => {
  if (isBinary) onEvents(data as Buffer);
});
socket.on('close', () => {
  void pool.close().finally(() => process.exit(0));
});
socket.on('error', (error) => {
  process.stderr.write(`session: ${error.message}\n`);
  process.exit(1);
});
process.on('SIGTERM', () => socket.close());
process.on('SIGINT', () => socket.close());
