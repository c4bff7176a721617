/**
 * Hostile frames on the relay's WebSockets (issue 8, item 2): /v1/stream in tail and listen
 * mode and /playground/stream get binary frames, invalid JSON, wrong types, unknown message
 * types, invalid UTF-8 text, messages over the 1 MiB max payload and floods. The relay must
 * close with a documented code (4002 stream_protocol_error after an `error` message; 1007
 * bad UTF-8; 1009 too big) or ignore what a mode does not read (tail and the playground
 * take no client messages), and keep serving everyone else: clients connected throughout
 * still get events, and a well-behaved listener still gets deliveries.
 */
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import fc from 'fast-check';
import WebSocket from 'ws';
import { api, createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 50);
const MAX_PAYLOAD_BYTES = 1024 * 1024;

let relay: TestRelay;
let key: string;
let cliEndpoint: { id: string; url: string };
let playgroundToken: string;
let playgroundIngestUrl: string;

type Frame =
  | { kind: 'text'; text: string }
  | { kind: 'binary'; bytes: Uint8Array }
  | { kind: 'bad-utf8' }
  | { kind: 'huge' }
  | { kind: 'flood'; count: number; text: string };

interface Outcome {
  closeCode: number | null;
  messages: any[];
  opened: boolean;
  unexpectedResponse?: number;
}

function wsUrl(path: string): string {
  return relay.baseUrl.replace(/^http/, 'ws') + path;
}

function ingestUrl(url: string): string {
  return url.replace(/^https?:\/\/[^/]+/, relay.baseUrl);
}

/** Opens a socket and waits for its hello (or its refusal). */
function connect(path: string, headers: Record<string, string> = {}): Promise<{ socket: WebSocket; messages: any[]; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(wsUrl(path), { headers });
    const messages: any[] = [];
    const closed = new Promise<number>((done) => socket.on('close', (code) => done(code)));
    socket.on('message', (data, isBinary) => {
      messages.push(isBinary ? { binary: true } : JSON.parse(data.toString()));
      if (messages.length === 1) resolve({ socket, messages, closed });
    });
    socket.on('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
    socket.on('error', reject);
  });
}

/** What `read` finds once it finds something (vi.waitFor, in beforeAll/afterAll too). */
function waitFor<T>(read: () => T | undefined, timeoutMs = 5000): Promise<T> {
  return vi.waitFor(() => {
    const value = read();
    if (value === undefined) throw new Error('not there yet');
    return value;
  }, { timeout: timeoutMs, interval: 20 });
}

const frameArbitrary: fc.Arbitrary<Frame> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 200 }).map((text): Frame => ({ kind: 'text', text })) },
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value): Frame => ({ kind: 'text', text: JSON.stringify(value) })) },
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.oneof(fc.constantFrom('result', 'hello', 'delivery', 'ping', 'RESULT', '', 'error', '__proto__'), fc.jsonValue({ maxDepth: 1 })),
      version: fc.oneof(fc.constant(1), fc.jsonValue({ maxDepth: 1 })),
      delivery_id: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('dlv_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'x'.repeat(10_000)), fc.jsonValue({ maxDepth: 1 })),
      status: fc.oneof(fc.constantFrom(200, 99, 600, -1, 2 ** 53, 200.5, null, '200', NaN), fc.integer()),
      duration_ms: fc.oneof(fc.constantFrom(0, -1, 1e308, '5', null), fc.double()),
      error: fc.oneof(fc.constant(null), fc.string({ maxLength: 20 }), fc.constant(42)),
      response_body: fc.oneof(fc.constant(null), fc.string({ unit: 'binary', maxLength: 50 }), fc.constant('\uD800'), fc.constant({})),
    }, { requiredKeys: [] }).map((message): Frame => ({ kind: 'text', text: JSON.stringify(message) })),
  },
  { weight: 2, arbitrary: fc.constantFrom('', 'null', '[]', '"result"', '{"type":"result"', '{"a":'.repeat(5000) + '1' + '}'.repeat(5000), '[' .repeat(10_000) + ']'.repeat(10_000), '\u0000', '\uD800\uDC00\uD800', '\u202E{"type":"result"}').map((text): Frame => ({ kind: 'text', text })) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes): Frame => ({ kind: 'binary', bytes })) },
  { weight: 1, arbitrary: fc.constant<Frame>({ kind: 'bad-utf8' }) },
  { weight: 1, arbitrary: fc.constant<Frame>({ kind: 'huge' }) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 50, max: 1500 }), fc.constantFrom('{}', 'x', '{"type":"ping","version":1}')).map(([count, text]): Frame => ({ kind: 'flood', count, text })) },
);

function sendFrame(socket: WebSocket, frame: Frame): void {
  if (socket.readyState !== WebSocket.OPEN) return;
  const ignore = (): void => undefined;
  switch (frame.kind) {
    case 'text': socket.send(frame.text, ignore); break;
    case 'binary': socket.send(Buffer.from(frame.bytes), { binary: true }, ignore); break;
    // A text frame whose bytes are not UTF-8: ws sends a Buffer as is when told it is text.
    case 'bad-utf8': socket.send(Buffer.from([0x7b, 0xc3, 0x28, 0xff, 0x7d]), { binary: false }, ignore); break;
    case 'huge': socket.send('z'.repeat(MAX_PAYLOAD_BYTES + 10), ignore); break;
    case 'flood': for (let index = 0; index < frame.count; index++) socket.send(frame.text, ignore); break;
  }
}

/** Sends the frames on a fresh socket and watches what the relay does. */
async function fuzzSocket(path: string, headers: Record<string, string>, frames: Frame[]): Promise<Outcome> {
  const { socket, messages, closed } = await connect(path, headers);
  for (const frame of frames) sendFrame(socket, frame);
  // The relay reads a socket's frames in order and closes on a bad one before reading on
  // (the listen session's checks and ws's own are synchronous), and a closing socket answers
  // no ping: a pong to a ping sent after the frames means it read them all and kept the socket.
  const keptOpen = new Promise<null>((resolve) => socket.once('pong', () => resolve(null)));
  if (socket.readyState === WebSocket.OPEN) socket.ping();
  const closeCode = await Promise.race([closed, keptOpen]);
  if (closeCode === null) {
    socket.close(1000);
    await closed;
  }
  return { closeCode, messages, opened: true };
}

beforeAll(async () => {
  relay = await startTestRelay({}, { streamHeartbeatIntervalMs: 60_000 });
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
  cliEndpoint = await createEndpoint(relay.baseUrl, key, { name: 'listened', destination: { type: 'cli' } });
  const session = await api(relay.baseUrl, 'POST', '/playground/session');
  playgroundToken = session.body.token;
  playgroundIngestUrl = session.body.endpoint.url;
});

afterAll(async () => {
  await relay?.close();
});

/** What the documented protocol allows after `frames` in each mode. */
function checkOutcome(mode: 'tail' | 'listen' | 'playground', frames: Frame[], outcome: Outcome): string | undefined {
  const allowed = new Set<number | null>([1007, 1009]);
  if (mode === 'listen') allowed.add(4002);
  else allowed.add(null);
  // A listener that sent only well-formed results for unknown deliveries may stay open.
  if (mode === 'listen' && !frames.some((frame) => frame.kind !== 'text')) allowed.add(null);
  if (!allowed.has(outcome.closeCode)) return `closed with ${outcome.closeCode} (allowed: ${[...allowed].join(', ')})`;
  if (outcome.closeCode === 4002) {
    const error = outcome.messages.find((message) => message.type === 'error');
    if (error?.code !== 'stream_protocol_error' || typeof error.fix !== 'string' || typeof error.detail !== 'string') return `closed 4002 without a stream_protocol_error message: ${JSON.stringify(outcome.messages.at(-1))}`;
  }
  if (mode === 'listen' && outcome.closeCode === null && frames.some((frame) => frame.kind === 'binary')) return 'a binary frame in listen mode was not refused';
  return undefined;
}

test('malformed, oversized and flooding frames get a documented close, and other clients are still served', { timeout: 300_000 }, async () => {
  // Clients that behave, connected throughout.
  const tail = await connect('/v1/stream', { authorization: `Bearer ${key}` });
  const playground = await connect(`/playground/stream?token=${playgroundToken}`);
  const surfaces = {
    tail: { path: '/v1/stream', headers: { authorization: `Bearer ${key}` } },
    listen: { path: `/v1/stream?mode=listen&endpoint_id=${cliEndpoint.id}&skip_missed=true`, headers: { authorization: `Bearer ${key}` } },
    playground: { path: `/playground/stream?token=${playgroundToken}`, headers: {} },
  } as const;
  const counts: Record<string, { runs: number; frames: number; closes: Record<string, number> }> = {};
  const failures: string[] = [];
  for (const mode of ['tail', 'listen', 'playground'] as const) {
    const tally: { runs: number; frames: number; closes: Record<string, number> } = (counts[mode] = { runs: 0, frames: 0, closes: {} });
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(frameArbitrary, { minLength: 1, maxLength: 4 }), async (frames) => {
          tally.runs += 1;
          tally.frames += frames.reduce((sum, frame) => sum + (frame.kind === 'flood' ? frame.count : 1), 0);
          const outcome = await fuzzSocket(surfaces[mode].path, surfaces[mode].headers, frames);
          tally.closes[String(outcome.closeCode ?? 'kept open')] = (tally.closes[String(outcome.closeCode ?? 'kept open')] ?? 0) + 1;
          const problem = checkOutcome(mode, frames, outcome);
          const frameSummary = JSON.stringify(frames.map((frame) => (frame.kind === 'text' ? frame.text.slice(0, 120) : frame.kind === 'flood' ? `flood ${frame.count}×${frame.text}` : frame.kind)));
          if (problem) throw new Error(`${mode} ${frameSummary}: ${problem}; messages ${JSON.stringify(outcome.messages).slice(0, 400)}`);
          const health = await fetch(`${relay.baseUrl}/healthz`, { signal: AbortSignal.timeout(5000) });
          if (health.status !== 200) throw new Error(`relay unhealthy after ${mode} ${frameSummary}: ${health.status}`);
        }),
        { numRuns: FUZZ_RUNS, endOnFailure: true },
      );
    } catch (error) {
      failures.push((error as Error).message.slice(0, 2500));
    }
  }

  // Everyone else is still served: the tail and the playground page see new events, a new listener gets its delivery.
  const listener = await connect(`/v1/stream?mode=listen&endpoint_id=${cliEndpoint.id}&skip_missed=true`, { authorization: `Bearer ${key}` });
  const eventId = await sendEvent(ingestUrl(cliEndpoint.url), '{"type":"after.fuzz"}');
  await waitFor(() => tail.messages.find((message) => message.type === 'event.received' && message.event.id === eventId));
  const delivery = await waitFor(() => listener.messages.find((message) => message.type === 'delivery' && message.event.id === eventId));
  listener.socket.send(JSON.stringify({ type: 'result', version: 1, delivery_id: delivery.delivery_id, status: 200, duration_ms: 1, error: null }));
  await waitFor(() => tail.messages.find((message) => message.type === 'attempt.finished' && message.event_id === eventId));
  const playgroundEventId = await sendEvent(ingestUrl(playgroundIngestUrl), '{"type":"after.fuzz"}');
  await waitFor(() => playground.messages.find((message) => message.type === 'event.received' && message.event.id === playgroundEventId));
  expect((await api(relay.baseUrl, 'GET', `/v1/events/${eventId}`, { key })).body.status).toBe('delivered');

  for (const client of [tail, playground, listener]) {
    client.socket.close(1000);
    await client.closed;
  }
  const total = Object.values(counts).reduce((sum, tally) => sum + tally.frames, 0);
  console.log(`fuzz-stream: ${Object.values(counts).reduce((sum, tally) => sum + tally.runs, 0)} connections, ${total} frames (FUZZ_RUNS=${FUZZ_RUNS})`);
  for (const [mode, tally] of Object.entries(counts)) console.log(`  ${mode.padEnd(10)} ${tally.runs} connections, ${tally.frames} frames, closes ${JSON.stringify(tally.closes)}`);
  expect(failures, failures.join('\n\n')).toEqual([]);
});

test('upgrades with bad keys, queries or tokens are refused as problem documents before the upgrade', async () => {
  const refusals: Array<[string, Record<string, string>, number]> = [
    ['/v1/stream', {}, 401],
    ['/v1/stream', { authorization: 'Bearer hk_nope' }, 401],
    ['/v1/stream?mode=listen', { authorization: `Bearer ${key}` }, 400],
    ['/v1/stream?mode=sideways', { authorization: `Bearer ${key}` }, 400],
    ['/v1/stream?mode=listen&endpoint_id=ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', { authorization: `Bearer ${key}` }, 404],
    ['/v1/stream?mode=listen&endpoint_id=%00%C3%28', { authorization: `Bearer ${key}` }, 400],
    [`/v1/stream?mode=listen&endpoint_id=${cliEndpoint.id}&max_in_flight=100000`, { authorization: `Bearer ${key}` }, 400],
    [`/v1/stream?status=${'x'.repeat(5000)}`, { authorization: `Bearer ${key}` }, 400],
    ['/playground/stream', {}, 401],
    ['/playground/stream?token=pgt_nope', {}, 401],
  ];
  for (const [path, headers, status] of refusals) {
    const refused = await new Promise<{ status: number; contentType: string; body: string }>((resolve, reject) => {
      const socket = new WebSocket(wsUrl(path), { headers });
      socket.on('unexpected-response', (_request, response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, contentType: String(response.headers['content-type']), body: Buffer.concat(chunks).toString() }));
      });
      socket.on('open', () => reject(new Error(`${path} was upgraded`)));
      socket.on('error', () => undefined);
    });
    expect(refused.status, `${path}: ${refused.body}`).toBe(status);
    expect(refused.contentType).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(refused.body)).toMatchObject({ status, code: expect.any(String), fix: expect.any(String), request_id: expect.any(String) });
  }
});
