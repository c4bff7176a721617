/**
 * The bench's smee.io: a server shaped as probot/smee.io's (whose package is not on npm):
 * Fastify with its request logger on, `POST /:channel` validating a JSON object body and
 * broadcasting `{...headers, body, query, timestamp}` as one Server-Sent Event (with an
 * `id:` line) to every `GET /:channel` subscriber (`Accept: text/event-stream`), answering
 * 200; nothing is stored, so an event sent while no client is connected is gone. The log
 * lines are built as smee.io builds them and dropped rather than written. Two additions
 * for measuring, as Hook's ingest has them: each event gets a `webhook-id` header (the
 * bench matches arrivals by it) and the answer is `{"id": …}`.
 *
 * Run by bench:listen as a child process: `node test/bench/smee-server.ts`; its first
 * stdout line is "smee listening on http://127.0.0.1:<port>".
 */
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import Fastify from 'fastify';

const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
const app = Fastify({ logger: { level: 'info', stream: discard } });
const bus = new EventEmitter();
bus.setMaxListeners(0);
let sequence = 0;

const channelParams = {
  type: 'object',
  properties: { channel: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[a-zA-Z0-9-_]+$' } },
} as const;

app.get<{ Params: { channel: string } }>('/:channel', { schema: { params: channelParams } }, (request, reply) => {
  if (request.headers.accept !== 'text/event-stream') return reply.code(404).send();
  const { channel } = request.params;
  let messageId = 0;
  const send = (payload: unknown): void => {
    reply.raw.write(`id: ${messageId++}\ndata: ${JSON.stringify(payload)}\n\n`);
  };
  reply.raw.socket?.setTimeout(0);
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  bus.on(channel, send);
  reply.raw.on('close', () => bus.off(channel, send));
  reply.raw.write(`id: ${messageId++}\nevent: ready\ndata: {}\n\n`);
  request.log.info({ channel, listeners: bus.listenerCount(channel) }, 'client connected to sse');
  return reply.hijack();
});

app.post<{ Params: { channel: string } }>('/:channel', { schema: { params: channelParams, body: { type: 'object' } } }, async (request, reply) => {
  const id = `smee_${++sequence}`;
  bus.emit(request.params.channel, { ...request.headers, 'webhook-id': id, body: request.body, query: request.query, timestamp: Date.now() });
  return reply.code(200).send({ id });
});

const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`smee listening on ${address}`);
process.on('SIGTERM', () => {
  bus.removeAllListeners();
  void app.close().then(() => process.exit(0));
});
