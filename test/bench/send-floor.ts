/**
 * The floor under a delivery's send (issue 30's prototype of the alternative to undici):
 * what one signed POST of a 1 KiB body to a local server, and reading its answer, costs
 * the sending process's CPU, three ways in one run:
 *
 *   U. the relay's send path: deliveryHeaders (the signature) and DeliverySender (undici,
 *      pooled keep-alive connections, the answer's first 4 KiB read);
 *   R. the leanest sender that still speaks HTTP/1.1: the same headers, written with the
 *      body as one buffer on a keep-alive net.Socket per lane, the answer parsed by hand
 *      (status line, content-length, body) — no pool, no timers, no abort signals, no
 *      header objects; what a hand-written client could reach;
 *   S. signing alone (deliveryHeaders), no I/O.
 *
 * The receiver (noop-server.ts, node:http) runs in its own process, so its CPU is not
 * counted. U and R alternate in ABBA order (U R R U, twice) for BENCH_PHASE_S seconds each
 * (default 3) at BENCH_CONCURRENCY lanes (default the relay's default delivery
 * concurrency); the figure of each is the median of its runs. BENCH_JSON=1 adds a JSON line.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { generateSigningSecret, newId } from '@hook/core';
import { deliveryHeaders } from '../../apps/relay/src/delivery/attempt.ts';
import { DeliverySender } from '../../apps/relay/src/delivery/sender.ts';
import { DEFAULT_DELIVERY_CONCURRENCY } from '../../apps/relay/src/config.ts';
import { jsonBody, REPO_ROOT } from './support.ts';

const PHASE_S = Number(process.env.BENCH_PHASE_S ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? DEFAULT_DELIVERY_CONCURRENCY);
const body = jsonBody(1024);
const secrets = [generateSigningSecret()];
const signed = () => {
  const id = newId('event');
  return deliveryHeaders({ id, headers: { 'content-type': 'application/json' }, body, secrets, attemptCount: 0 }, Math.floor(Date.now() / 1000));
};

/**
 * One POST at a time on its own keep-alive socket, the answer parsed by hand. A socket
 * the receiver closed (its keep-alive timeout while this lane sat out a phase) is opened
 * again, and a request it closed under is written again on the new one.
 */
class RawLane {
  readonly #port: number;
  #socket: Socket;
  #buffered: Buffer = Buffer.alloc(0);
  #answered: ((status: number) => void) | null = null;
  #request: Buffer | null = null;
  #closing = false;

  constructor(port: number) {
    this.#port = port;
    this.#socket = this.#open();
  }

  #open(): Socket {
    const socket = connect(this.#port, '127.0.0.1');
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.#buffered = this.#buffered.length === 0 ? chunk : Buffer.concat([this.#buffered, chunk]);
      this.#parse();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.#closing || socket !== this.#socket) return;
      this.#buffered = Buffer.alloc(0);
      this.#socket = this.#open();
      if (this.#answered) this.#socket.write(this.#request!);
    });
    return socket;
  }

  #parse(): void {
    const end = this.#buffered.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.#buffered.toString('latin1', 0, end);
    const lengthAt = head.search(/\r\ncontent-length:/i);
    const length = lengthAt < 0 ? 0 : Number.parseInt(head.slice(lengthAt + 17), 10);
    if (this.#buffered.length < end + 4 + length) return;
    this.#buffered = this.#buffered.subarray(end + 4 + length);
    const answered = this.#answered!;
    this.#answered = null;
    answered(Number(head.slice(9, 12)));
  }

  send(headers: Record<string, string>): Promise<number> {
    let head = `POST /hook HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${body.length}\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    this.#request = Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), body]);
    return new Promise((resolve) => {
      this.#answered = resolve;
      this.#socket.write(this.#request!);
    });
  }

  close(): void {
    this.#closing = true;
    this.#socket.destroy();
  }
}

interface Phase {
  sends: number;
  perSecond: number;
  cpuMsPerSend: number;
}

async function runPhase(send: (lane: number) => Promise<boolean>): Promise<Phase> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const endAt = started + PHASE_S * 1000;
  let sends = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async (_, lane) => {
    while (performance.now() < endAt) {
      if (!(await send(lane))) throw new Error('a send was not answered 2xx');
      sends++;
    }
  }));
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - started) / 1000;
  return { sends, perSecond: sends / seconds, cpuMsPerSend: (used.user + used.system) / 1000 / sends };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;

async function main(): Promise<void> {
  const receiver = spawn(process.execPath, [join(REPO_ROOT, 'test/bench/noop-server.ts')], { env: { ...process.env, NOOP_KIND: 'http' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve) => createInterface({ input: receiver.stdout! }).once('line', resolve));
  const port = Number(new URL(url).port);
  const sender = new DeliverySender({ timeoutMs: 15_000, allowPrivateDestinations: true });
  const lanes = Array.from({ length: CONCURRENCY }, () => new RawLane(port));
  const viaUndici = async () => {
    const result = await sender.send(`${url}/hook`, signed(), body);
    return result.status === 200;
  };
  const viaRaw = async (lane: number) => (await lanes[lane]!.send(signed())) === 200;
  // Warm both paths (JIT, connections) before anything counts.
  await runPhase(viaUndici);
  await runPhase(viaRaw);
  const runs: { undici: Phase[]; raw: Phase[] } = { undici: [], raw: [] };
  for (const order of [['undici', 'raw', 'raw', 'undici'], ['undici', 'raw', 'raw', 'undici']] as const) {
    for (const kind of order) runs[kind].push(await runPhase(kind === 'undici' ? viaUndici : viaRaw));
  }
  const signStarted = process.cpuUsage();
  const SIGNS = 20_000;
  for (let i = 0; i < SIGNS; i++) signed();
  const signUsed = process.cpuUsage(signStarted);
  const signMs = (signUsed.user + signUsed.system) / 1000 / SIGNS;
  for (const lane of lanes) lane.close();
  await sender.close();
  receiver.kill('SIGTERM');

  const undici = median(runs.undici.map((run) => run.cpuMsPerSend));
  const raw = median(runs.raw.map((run) => run.cpuMsPerSend));
  console.log(`Send floor: ${CONCURRENCY} lanes, 1024-byte JSON bodies, ${PHASE_S} s phases in ABBA order (U R R U, twice), receiver in its own process`);
  console.log(`U. relay's send path (undici):  ${runs.undici.map((run) => run.cpuMsPerSend.toFixed(4)).join(' ')} ms of CPU a send (median ${undici.toFixed(4)}); ${runs.undici.map((run) => run.perSecond.toFixed(0)).join(' ')} sends/s`);
  console.log(`R. hand-written HTTP/1.1:       ${runs.raw.map((run) => run.cpuMsPerSend.toFixed(4)).join(' ')} ms of CPU a send (median ${raw.toFixed(4)}); ${runs.raw.map((run) => run.perSecond.toFixed(0)).join(' ')} sends/s`);
  console.log(`S. signing alone:               ${signMs.toFixed(4)} ms a delivery`);
  console.log(`R ÷ U (CPU a send): ${(raw / undici).toFixed(2)}`);
  if (process.env.BENCH_JSON === '1') console.log(JSON.stringify({ concurrency: CONCURRENCY, phase_s: PHASE_S, undici: runs.undici, raw: runs.raw, sign_ms: signMs, undici_median_ms: undici, raw_median_ms: raw }));
}

await main();
