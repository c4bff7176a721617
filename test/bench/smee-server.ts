/**
 * The bench's smee.io: what probot/smee.io's server does, in node:http (its own package is
 * not on npm). `POST /<channel>` with a JSON body broadcasts `{...headers, body, query,
 * timestamp}` as one Server-Sent Event to every `GET /<channel>` subscriber (EventSource)
 * and answers 200; nothing is stored, so an event sent while no client is connected is
 * gone. Two additions for measuring, as Hook's ingest has them: each event gets a
 * `webhook-id` header (the bench matches arrivals by it) and the answer is `{"id": …}`.
 *
 * Run by bench:listen as a child process: `node test/bench/smee-server.ts`, printing its
 * URL as the first stdout line (HOOK-style: "smee listening on http://127.0.0.1:<port>").
 */
import { createServer, type ServerResponse } from 'node:http';

const channels = new Map<string, Set<ServerResponse>>();
let sequence = 0;

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const channel = url.pathname;
  if (req.method === 'GET' && req.headers.accept?.includes('text/event-stream')) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.write('event: ready\ndata: {}\n\n');
    let subscribers = channels.get(channel);
    if (!subscribers) channels.set(channel, (subscribers = new Set()));
    subscribers.add(res);
    req.on('close', () => subscribers.delete(res));
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    const id = `smee_${++sequence}`;
    const payload = JSON.stringify({ ...req.headers, 'webhook-id': id, body, query: Object.fromEntries(url.searchParams), timestamp: Date.now() });
    for (const subscriber of channels.get(channel) ?? []) subscriber.write(`data: ${payload}\n\n`);
    const answer = JSON.stringify({ id });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') console.log(`smee listening on http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => {
  for (const subscribers of channels.values()) for (const subscriber of subscribers) subscriber.end();
  server.close(() => process.exit(0));
});
