/**
 * The baselines for bench:ingest, each answering what the relay's ingest answers but
 * storing nothing. Run as its own process so it never shares an event loop with autocannon.
 *
 * - `fastify` (default): a Fastify server that parses the JSON body as Fastify normally
 *   does. The gap between it and the relay is the cost of durability (the lookup, the
 *   INSERT, the commit) and of what the relay does per request beyond a bare route.
 * - `http` (NOOP_KIND=http): node:http alone, reading the body and answering. The floor
 *   of any Node.js HTTP server on this machine.
 *
 * Prints `http://127.0.0.1:<port>` as its first stdout line once listening; stops on
 * SIGTERM or SIGINT.
 */
import { createServer } from 'node:http';
import Fastify from 'fastify';

/** Same as the relay's default HOOK_MAX_PAYLOAD, so both refuse the same bodies. */
const BODY_LIMIT_BYTES = 10 * 1024 * 1024;
const ANSWER = JSON.stringify({ id: 'x', status: 'pending' });

let close: () => Promise<void>;
let port: number;
if (process.env.NOOP_KIND === 'http') {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      Buffer.concat(chunks);
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(ANSWER) });
      response.end(ANSWER);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  close = () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
} else {
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT_BYTES });
  app.post('/ingest', async () => ({ id: 'x', status: 'pending' }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
  close = () => app.close();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

process.stdout.write(`http://127.0.0.1:${port}\n`);
