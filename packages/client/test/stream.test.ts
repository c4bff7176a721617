/**
 * The stream client against a scripted WebSocket server (ws): the handshake it sends,
 * heartbeats, reconnects with backoff, and which refusals end it. Against the real
 * relay it is covered by the `hook listen` / `hook events tail` tests in test/e2e.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { STREAM_PROTOCOL_VERSION, type ServerMessage } from '@hook/core';
import { HookApiError, openStream, streamUrl, type HookStream, type HookStreamOptions, type StreamState } from '../src/index.ts';

interface ScriptedRelay {
  url: string;
  port: number;
  upgrades: IncomingMessage[];
  sockets: WebSocket[];
  /** Received client messages, parsed. */
  received: unknown[];
  close(): Promise<void>;
}

interface ScriptOptions {
  /** Answer the upgrade with this instead of accepting it. */
  refuse?: (request: IncomingMessage, attempt: number) => { status: number; type?: string; body?: string } | undefined;
  /** What to do with an accepted socket; default: send hello. */
  onConnection?: (socket: WebSocket, request: IncomingMessage, index: number) => void;
  autoPong?: boolean;
  port?: number;
}

const opened: { close(): Promise<void> }[] = [];
const streams: HookStream[] = [];

function hello(mode: 'tail' | 'listen' = 'tail', version = STREAM_PROTOCOL_VERSION): ServerMessage {
  return { type: 'hello', version, mode, account_id: 'acct_1', session_id: 'sess_1', heartbeat_interval_ms: 5000 };
}

async function scriptedRelay(options: ScriptOptions = {}): Promise<ScriptedRelay> {
  const upgrades: IncomingMessage[] = [];
  const sockets: WebSocket[] = [];
  const received: unknown[] = [];
  const server: Server = createServer((_request, response) => response.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true, autoPong: options.autoPong ?? true });
  server.on('upgrade', (request, socket, head) => {
    upgrades.push(request);
    const refusal = options.refuse?.(request, upgrades.length);
    if (refusal) {
      const body = refusal.body ?? '';
      socket.end(`HTTP/1.1 ${refusal.status} Refused\r\ncontent-type: ${refusal.type ?? 'text/plain'}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: req_1\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      sockets.push(ws);
      ws.on('message', (data) => received.push(JSON.parse(data.toString())));
      if (options.onConnection) options.onConnection(ws, request, sockets.length - 1);
      else ws.send(JSON.stringify(hello()));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const relay: ScriptedRelay = {
    url: `http://127.0.0.1:${port}`,
    port,
    upgrades,
    sockets,
    received,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  opened.push(relay);
  return relay;
}

function stream(options: Partial<HookStreamOptions> & { apiUrl: string }): { stream: HookStream; states: StreamState[]; messages: ServerMessage[] } {
  const states: StreamState[] = [];
  const messages: ServerMessage[] = [];
  const made = openStream({ apiKey: 'hk_test', reconnectInitialDelayMs: 20, reconnectMaxDelayMs: 200, ...options });
  made.on('state', (state) => states.push(state));
  made.on('message', (message) => messages.push(message));
  streams.push(made);
  return { stream: made, states, messages };
}

function until(condition: () => boolean, timeout = 5000, what = 'condition'): Promise<void> {
  return vi.waitFor(() => expect(condition(), what).toBe(true), { timeout, interval: 10 });
}

afterEach(async () => {
  await Promise.all(streams.splice(0).map((s) => s.close()));
  await Promise.all(opened.splice(0).map((o) => o.close()));
});

describe('streamUrl', () => {
  it('maps http to ws and https to wss, keeps a path prefix and sets the query', () => {
    expect(streamUrl({ apiUrl: 'http://127.0.0.1:8080/' })).toBe('ws://127.0.0.1:8080/v1/stream?mode=tail&batch=true');
    expect(streamUrl({ apiUrl: 'https://relay.example/hook', mode: 'listen', endpointId: 'ep_1', skipMissed: true, maxInFlight: 8 })).toBe(
      'wss://relay.example/hook/v1/stream?mode=listen&endpoint_id=ep_1&skip_missed=true&max_in_flight=8&batch=true',
    );
    expect(() => streamUrl({ apiUrl: 'ftp://x' })).toThrow(TypeError);
  });
});

describe('HookStream', () => {
  it('sends the key, reports open on hello, passes messages on and answers deliveries of its connection', async () => {
    const delivery = { type: 'delivery', version: 1, delivery_id: 'dlv_1', attempt: 1, event: {}, headers: {}, body_base64: '' };
    const relay = await scriptedRelay({
      onConnection(ws) {
        ws.send(JSON.stringify(hello('listen')));
        ws.send('not json');
        ws.send(JSON.stringify({ type: 'from.the.future', version: 1 }));
        ws.send(JSON.stringify(delivery));
      },
    });
    const { stream: s, states, messages } = stream({ apiUrl: relay.url, mode: 'listen', endpointId: 'ep_1' });
    await until(() => messages.length === 2, 5000, 'two messages');
    expect(relay.upgrades[0]!.headers.authorization).toBe('Bearer hk_test');
    expect(relay.upgrades[0]!.url).toBe('/v1/stream?mode=listen&endpoint_id=ep_1&batch=true');
    expect(states.map((state) => state.state)).toEqual(['connecting', 'open']);
    expect(messages.map((message) => message.type)).toEqual(['hello', 'delivery']);
    expect(s.sendResult({ delivery_id: 'dlv_unknown', status: 200, duration_ms: 1 })).toBe(false);
    expect(s.sendResult({ delivery_id: 'dlv_1', status: 204, duration_ms: 3.5, response_body: '' })).toBe('sent');
    expect(s.sendResult({ delivery_id: 'dlv_1', status: 204, duration_ms: 3.5 })).toBe(false);
    await until(() => relay.received.length === 1, 5000, 'the result');
    expect(relay.received[0]).toEqual({ type: 'result', version: STREAM_PROTOCOL_VERSION, delivery_id: 'dlv_1', status: 204, duration_ms: 3.5, response_body: '' });
    await s.close();
    expect(await s.done).toBeNull();
    expect(states.at(-1)).toEqual({ state: 'closed', fatal: null });
  });

  it('unpacks a relay\'s batch into its messages, in order; to a relay whose hello said batch, sends a turn\'s first result at once and the rest of the turn in one batch', async () => {
    const delivery = (id: string) => ({ type: 'delivery', version: 1, delivery_id: id, attempt: 1, event: { id: `evt_${id}` }, headers: {}, body_base64: '' });
    const relay = await scriptedRelay({
      onConnection(ws) {
        ws.send(JSON.stringify({ ...hello('listen'), batch: true }));
        ws.send(JSON.stringify({ type: 'batch', version: 1, messages: [delivery('d1'), { type: 'from.the.future', version: 1 }, delivery('d2'), delivery('d3'), delivery('d4')] }));
      },
    });
    const { stream: s, messages } = stream({ apiUrl: relay.url, mode: 'listen', endpointId: 'ep_1' });
    await until(() => messages.length === 5, 5000, 'hello and four deliveries');
    expect(messages.map((message) => (message.type === 'delivery' ? message.delivery_id : message.type))).toEqual(['hello', 'd1', 'd2', 'd3', 'd4']);
    const result = (id: string, status: number) => ({ type: 'result', version: STREAM_PROTOCOL_VERSION, delivery_id: id, status, duration_ms: 1 });
    expect(s.sendResult({ delivery_id: 'd2', status: 200, duration_ms: 1 })).toBe('sent');
    expect(s.sendResult({ delivery_id: 'd1', status: 500, duration_ms: 1 })).toBe('sent');
    expect(s.sendResult({ delivery_id: 'd3', status: 200, duration_ms: 1 })).toBe('sent');
    await until(() => relay.received.length === 2, 5000, 'the first result and the batch');
    expect(relay.received).toEqual([result('d2', 200), { type: 'batch', version: STREAM_PROTOCOL_VERSION, messages: [result('d1', 500), result('d3', 200)] }]);
    // A result alone in its turn goes at once, as itself.
    await new Promise((resolve) => setImmediate(resolve));
    expect(s.sendResult({ delivery_id: 'd4', status: 200, duration_ms: 1 })).toBe('sent');
    await until(() => relay.received.length === 3, 5000, 'the lone result');
    expect(relay.received[2]).toEqual(result('d4', 200));
  });

  it('answers a relay whose hello does not say batch with one result per message', async () => {
    const delivery = (id: string) => ({ type: 'delivery', version: 1, delivery_id: id, attempt: 1, event: { id: `evt_${id}` }, headers: {}, body_base64: '' });
    const relay = await scriptedRelay({
      onConnection(ws) {
        ws.send(JSON.stringify(hello('listen')));
        for (const id of ['d1', 'd2']) ws.send(JSON.stringify(delivery(id)));
      },
    });
    const { stream: s, messages } = stream({ apiUrl: relay.url, mode: 'listen', endpointId: 'ep_1' });
    await until(() => messages.length === 3, 5000, 'hello and two deliveries');
    s.sendResult({ delivery_id: 'd1', status: 200, duration_ms: 1 });
    s.sendResult({ delivery_id: 'd2', status: 200, duration_ms: 1 });
    await until(() => relay.received.length === 2, 5000, 'two results');
    expect(relay.received.map((message) => (message as { type: string; delivery_id: string }))).toMatchObject([{ type: 'result', delivery_id: 'd1' }, { type: 'result', delivery_id: 'd2' }]);
  });

  it('ends with the relay\'s problem when the upgrade is refused with 401, without retrying', async () => {
    const problem = { type: 'urn:hook:error:invalid_api_key', title: 'Invalid API key', status: 401, detail: 'No such key', code: 'invalid_api_key', fix: 'Log in again', request_id: 'req_9' };
    const relay = await scriptedRelay({ refuse: () => ({ status: 401, type: 'application/problem+json', body: JSON.stringify(problem) }) });
    const { stream: s, states } = stream({ apiUrl: relay.url });
    const fatal = await s.done;
    expect(fatal).toBeInstanceOf(HookApiError);
    expect(fatal!.problem).toEqual(problem);
    expect(relay.upgrades).toHaveLength(1);
    expect(states.map((state) => state.state)).toEqual(['connecting', 'closed']);
  });

  it('retries a 503 answer to the upgrade and connects when the relay recovers', async () => {
    const relay = await scriptedRelay({ refuse: (_request, attempt) => (attempt <= 2 ? { status: 503, body: 'starting' } : undefined) });
    const { stream: s, states } = stream({ apiUrl: relay.url });
    await until(() => s.state.state === 'open', 5000, 'open');
    const reconnecting = states.filter((state) => state.state === 'reconnecting');
    expect(reconnecting).toHaveLength(2);
    expect(reconnecting[0]).toMatchObject({ reason: expect.stringContaining('503') });
  });

  it('keeps retrying with growing delays while nothing listens, then connects to a relay that starts later', async () => {
    const placeholder = await scriptedRelay();
    const port = placeholder.port;
    await placeholder.close();
    opened.pop();
    const { stream: s, states } = stream({ apiUrl: `http://127.0.0.1:${port}`, random: () => 1 });
    await until(() => states.filter((state) => state.state === 'reconnecting').length >= 4, 5000, 'four reconnects');
    const delays = states.flatMap((state) => (state.state === 'reconnecting' ? [state.delayMs] : []));
    expect(delays.slice(0, 4)).toEqual([20, 40, 80, 160]);
    expect(states.find((state) => state.state === 'reconnecting')).toMatchObject({ reason: expect.stringContaining('refused') });
    await scriptedRelay({ port });
    await until(() => s.state.state === 'open', 5000, 'open');
  });

  it('terminates a connection whose pings go unanswered and reconnects', async () => {
    const relay = await scriptedRelay({ autoPong: false });
    const { stream: s, states } = stream({ apiUrl: relay.url, heartbeatIntervalMs: 40 });
    await until(() => relay.upgrades.length >= 2, 5000, 'a second connection');
    const drop = states.find((state) => state.state === 'reconnecting');
    expect(drop).toMatchObject({ reason: expect.stringContaining('no answer to 2 heartbeats') });
    expect(s.state.state === 'open' || s.state.state === 'connecting' || s.state.state === 'reconnecting').toBe(true);
  });

  it('keeps a connection whose pings are answered', async () => {
    let pings = 0;
    const relay = await scriptedRelay({
      onConnection(ws) {
        ws.send(JSON.stringify(hello()));
        ws.on('ping', () => (pings += 1));
      },
    });
    const { states } = stream({ apiUrl: relay.url, heartbeatIntervalMs: 20 });
    // Many heartbeats, each answered (one with two unanswered is dropped, as above).
    await until(() => pings >= 10, 5000, 'ten heartbeats');
    expect(relay.upgrades).toHaveLength(1);
    expect(states.map((state) => state.state)).toEqual(['connecting', 'open']);
  });

  it('asks to skip missed events on the first connection only, and reconnects after the relay goes away', async () => {
    const relay = await scriptedRelay({
      onConnection(ws, _request, index) {
        ws.send(JSON.stringify(hello('listen')));
        if (index === 0) setTimeout(() => ws.close(1001, 'shutting down'), 20);
      },
    });
    const { states } = stream({ apiUrl: relay.url, mode: 'listen', endpointId: 'ep_1', skipMissed: true });
    await until(() => states.filter((state) => state.state === 'open').length === 2, 5000, 'a reconnect');
    expect(relay.upgrades.map((request) => new URL(request.url!, 'ws://x').searchParams.get('skip_missed'))).toEqual(['true', null]);
    expect(states.find((state) => state.state === 'reconnecting')).toMatchObject({ reason: 'the relay is shutting down' });
    expect(states.filter((state) => state.state === 'open').map((state) => (state as { reconnected: boolean }).reconnected)).toEqual([false, true]);
  });

  it('ends on an error message from the relay', async () => {
    const relay = await scriptedRelay({
      onConnection(ws) {
        ws.send(JSON.stringify({ type: 'error', version: 1, code: 'validation_failed', detail: 'max_in_flight must be 1–256', fix: 'Pass a smaller number' }));
        ws.close(1008, 'bad query');
      },
    });
    const { stream: s } = stream({ apiUrl: relay.url });
    const fatal = await s.done;
    expect(fatal?.code).toBe('validation_failed');
    expect(fatal?.detail).toBe('max_in_flight must be 1–256');
    expect(fatal?.fix).toBe('Pass a smaller number');
    expect(relay.upgrades).toHaveLength(1);
  });

  it('ends when the relay says the endpoint is gone (close code 4004)', async () => {
    const relay = await scriptedRelay({
      onConnection(ws) {
        ws.send(JSON.stringify(hello('listen')));
        ws.close(4004, 'endpoint deleted');
      },
    });
    const { stream: s } = stream({ apiUrl: relay.url, mode: 'listen', endpointId: 'ep_1' });
    const fatal = await s.done;
    expect(fatal?.code).toBe('endpoint_not_found');
    expect(fatal?.detail).toContain('endpoint deleted');
  });

  it('refuses a relay that speaks another protocol version', async () => {
    const relay = await scriptedRelay({ onConnection: (ws) => ws.send(JSON.stringify(hello('tail', STREAM_PROTOCOL_VERSION + 1))) });
    const { stream: s } = stream({ apiUrl: relay.url });
    const fatal = await s.done;
    expect(fatal?.detail).toContain(`version ${STREAM_PROTOCOL_VERSION + 1}`);
  });
});
