/**
 * The baseline for bench:ingest: a Fastify server that parses the JSON body as Fastify
 * normally does and answers what the relay's ingest answers, but stores nothing. The
 * gap between it and the relay is the cost of durability (the lookup, the INSERT, the
 * commit). Run as its own process so it never shares an event loop with autocannon.
 *
 * Prints `http://127.0.0.1:<port>` as its first stdout line once listening; stops on
 * SIGTERM or SIGINT.
 */
import Fastify from 'fastify';

/** Same as the relay's default HOOK_MAX_PAYLOAD, so both refuse the same bodies. */
const BODY_LIMIT_BYTES = 10 * 1024 * 1024;

const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT_BYTES });

app.post('/ingest', async () => ({ id: 'x', status: 'pending' }));

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
process.stdout.write(`http://127.0.0.1:${port}\n`);
