/** A real HTTP receiver on a free local port that records every delivery it gets. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  receivedAtMs: number;
}

export type Responder = (request: ReceivedRequest, index: number) => { status: number; body?: string; headers?: Record<string, string>; delayMs?: number };

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** How the receiver answers; change it any time. Default 200. */
  respond: Responder;
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(respond: Responder = () => ({ status: 200 })): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: { count: number; done: () => void }[] = [];
  const pending = new Set<ServerResponse>();
  const receiver: Receiver = {
    url: '',
    requests,
    respond,
    waitFor(count, timeoutMs = 10_000) {
      if (requests.length >= count) return Promise.resolve(requests);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${requests.length} of ${count} requests within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ count, done: () => { clearTimeout(timer); resolve(requests); } });
      });
    },
    async close() {
      for (const response of pending) response.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks), receivedAtMs: Date.now() };
      const index = requests.push(received) - 1;
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.done();
      }
      const answer = receiver.respond(received, index);
      pending.add(response);
      setTimeout(() => {
        pending.delete(response);
        if (response.destroyed) return;
        response.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        response.end(answer.body ?? `answer ${answer.status}`);
      }, answer.delayMs ?? 0);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  receiver.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hooks`;
  return receiver;
}

/** A local port nothing listens on: bound a moment ago, then released (a connection to it is refused). */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
