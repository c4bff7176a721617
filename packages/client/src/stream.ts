/**
 * A client for the relay's live stream (`GET /v1/stream`, a WebSocket; the protocol is
 * typed in @hook/core's stream-protocol.ts). It keeps one connection alive for as long
 * as it is wanted:
 *
 * - Heartbeats: a ping every `heartbeatIntervalMs`; anything heard from the relay (a
 *   pong, a ping, a message) counts as an answer, and after two heartbeats without one
 *   the socket is terminated and a new one opened. A half-open TCP connection (a laptop
 *   that slept, a NAT that forgot the flow) is noticed within three heartbeats.
 * - Reconnects: with exponential backoff and jitter (250 ms doubling to 10 s by
 *   default); a connection that stayed open for `stableConnectionMs` resets the delay.
 *   The relay being down, restarting or answering 5xx is waited out, never fatal.
 * - Fatal errors: what reconnecting cannot fix ends the stream with a `HookApiError`
 *   carrying the relay's problem document: a 4xx answer to the upgrade (bad key 401/403,
 *   unknown endpoint 404, bad query 400; not 408/429), an `error` message from the
 *   relay, close code 4004 (endpoint deleted or disabled), 4001 (the key revoked while streaming), or a protocol version this
 *   client does not speak.
 *
 * Listen mode: `skipMissed` is asked for on the first connection only. Reconnects take
 * the events that arrived while the client was away, which is the point of
 * reconnecting. A result for a delivery of an earlier connection (its answer came after
 * that connection was lost, as when the process was stopped while the relay sent it) is
 * a late result: sent on the next connection, naming the event and attempt, so the relay
 * records it as an attempt (docs/listen.md#a-stalled-listener).
 *
 * Batches: the client asks for them (query `batch=true`) and unpacks the relay's `batch`
 * messages into their messages, in order. To a relay whose hello said `batch`, the first
 * result of a turn of the event loop goes at once and those answered after it in the
 * same turn go together at its end, one frame; to an older relay one frame each.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import {
  allErrors,
  STREAM_CLOSE_CODES,
  STREAM_HEARTBEAT_INTERVAL_MS,
  STREAM_PROTOCOL_VERSION,
  type DeliveryMessage,
  type EventStatus,
  type HelloMessage,
  type ResultMessage,
  type ServerMessage,
  type SingleServerMessage,
  type StreamMode,
} from '@hook/core';
import { HookApiError, networkFailureOf } from './api-errors.ts';
import { backoffDelayMs, RECONNECT_BACKOFF } from './backoff.ts';
import type { Problem } from './api-types.ts';

/** First reconnect delay; each failed try doubles it, up to STREAM_RECONNECT_MAX_DELAY_MS (backoff.ts). */
export const STREAM_RECONNECT_INITIAL_DELAY_MS = RECONNECT_BACKOFF.initialDelayMs;
export const STREAM_RECONNECT_MAX_DELAY_MS = RECONNECT_BACKOFF.maxDelayMs;
/** A connection that stayed open this long was healthy: the next reconnect starts again at the initial delay. */
export const STREAM_STABLE_CONNECTION_MS = 10_000;
/** How long the WebSocket upgrade may take before the try counts as failed. */
export const STREAM_HANDSHAKE_TIMEOUT_MS = 10_000;
/** Heartbeats in a row without hearing from the relay after which the connection is taken for dead. */
export const STREAM_MAX_MISSED_HEARTBEATS = 2;
/** How long `close()` waits for the relay to acknowledge a close before cutting the connection. */
const CLOSE_TIMEOUT_MS = 2000;
/** Bytes of a refused upgrade's body read for its problem document. */
const REFUSAL_BODY_MAX_BYTES = 64 * 1024;

export interface HookStreamOptions {
  /** The relay's base URL, `http(s)://…`; the stream connects to `ws(s)://…/v1/stream`. */
  apiUrl: string;
  apiKey: string;
  /** Default `tail`. */
  mode?: StreamMode;
  /** Required for `listen`; a filter for `tail`. */
  endpointId?: string;
  /** Tail mode: only events whose resulting status is this. */
  status?: EventStatus;
  /** Listen mode: leave out the events that arrived before the first connection. */
  skipMissed?: boolean;
  /** Listen mode: unanswered deliveries at once, 1–256 (the relay's default when unset). */
  maxInFlight?: number;
  /** Listen mode: only events of these types (query `types`); the others wait on the relay for a listener that takes them. */
  eventTypes?: readonly string[];
  /** Milliseconds between pings; default STREAM_HEARTBEAT_INTERVAL_MS. */
  heartbeatIntervalMs?: number;
  reconnectInitialDelayMs?: number;
  reconnectMaxDelayMs?: number;
  stableConnectionMs?: number;
  handshakeTimeoutMs?: number;
  /** Sent as User-Agent; default `hook-client`. */
  userAgent?: string;
  /** A number in [0, 1) for the jitter, like Math.random (for tests). */
  random?: () => number;
}

/** Where the stream is. `attempt` counts tries since the last healthy connection (1 for the first). */
export type StreamState =
  | { state: 'connecting'; attempt: number }
  | { state: 'open'; hello: HelloMessage; reconnected: boolean }
  | { state: 'reconnecting'; reason: string; delayMs: number; attempt: number }
  | { state: 'closed'; fatal: HookApiError | null };

export interface HookStreamEvents {
  state: [StreamState];
  /** Every message from the relay, `hello` included, in order (a batch's one by one). */
  message: [SingleServerMessage];
}

/** The answer to one delivery, without the envelope fields. */
export type StreamResult = Omit<ResultMessage, 'type' | 'version' | 'late'>;
type LateResult = NonNullable<ResultMessage['late']>;
/** A delivery of the current connection waiting for its answer: what a late result would name, and when it came. */
interface Unanswered { delivery: DeliveryMessage; receivedAtMs: number }

/** Late results (and deliveries of lost connections that may still get one) kept at the most; more are dropped, and the relay offers those deliveries again. */
const LATE_RESULTS_MAX = 4096;

/** The stream URL for a relay base URL: `http://h/x` → `ws://h/x/v1/stream?…`. */
export function streamUrl(options: Pick<HookStreamOptions, 'apiUrl' | 'mode' | 'endpointId' | 'status' | 'maxInFlight' | 'eventTypes'> & { skipMissed?: boolean }): string {
  const base = new URL(options.apiUrl.replace(/\/+$/, ''));
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new TypeError(`apiUrl must be an http:// or https:// URL, got ${JSON.stringify(options.apiUrl)}`);
  const url = new URL(`${base.protocol === 'https:' ? 'wss:' : 'ws:'}//${base.host}${base.pathname.replace(/\/+$/, '')}/v1/stream`);
  url.searchParams.set('mode', options.mode ?? 'tail');
  if (options.endpointId !== undefined) url.searchParams.set('endpoint_id', options.endpointId);
  if (options.status !== undefined) url.searchParams.set('status', options.status);
  if (options.skipMissed) url.searchParams.set('skip_missed', 'true');
  if (options.maxInFlight !== undefined) url.searchParams.set('max_in_flight', String(options.maxInFlight));
  if (options.eventTypes !== undefined) url.searchParams.set('types', options.eventTypes.join(','));
  url.searchParams.set('batch', 'true');
  return url.toString();
}

const MESSAGE_TYPES = new Set<string>(['hello', 'event.received', 'attempt.finished', 'delivery', 'recorded', 'error']);

function knownMessage(value: unknown): value is SingleServerMessage {
  if (typeof value !== 'object' || value === null) return false;
  const type = (value as { type?: unknown }).type;
  return typeof type === 'string' && MESSAGE_TYPES.has(type);
}

/** A server message, or undefined for text that is not one (a newer relay's message type is skipped, not fatal). */
export function parseServerMessage(text: string): ServerMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (knownMessage(value)) return value;
  const { type, messages } = value as { type?: unknown; messages?: unknown };
  if (type === 'batch' && Array.isArray(messages)) return { type: 'batch', version: (value as { version: number }).version, messages: messages.filter(knownMessage) };
  return undefined;
}

/** A problem document for an error code the relay named, with the registry's status and title when it is known. */
function problemForCode(code: string, detail: string, fix: string | undefined, fallbackStatus: number): Problem {
  const known = allErrors().find((definition) => definition.code === code);
  return {
    type: `urn:hook:error:${code}`,
    title: known?.title ?? code,
    status: known?.status ?? fallbackStatus,
    detail,
    code,
    fix: fix ?? known?.fix ?? '',
    request_id: '',
  };
}

/** The problem document in a refused upgrade's body, or one that describes the answer. */
function problemFromRefusal(status: number, contentType: string, body: string, requestId: string, url: string): Problem {
  if (/^application\/(?:[\w.+-]+\+)?json/i.test(contentType)) {
    try {
      const parsed = JSON.parse(body) as Partial<Problem>;
      if (parsed && typeof parsed.code === 'string') {
        return {
          ...parsed,
          type: parsed.type ?? `urn:hook:error:${parsed.code}`,
          title: parsed.title ?? parsed.code,
          status: typeof parsed.status === 'number' ? parsed.status : status,
          detail: parsed.detail ?? parsed.title ?? parsed.code,
          code: parsed.code,
          fix: parsed.fix ?? '',
          request_id: parsed.request_id ?? requestId,
        };
      }
    } catch {
      // Described below.
    }
  }
  const excerpt = body.trim().replace(/\s+/g, ' ').slice(0, 200);
  return {
    type: 'urn:hook:error:unexpected_response',
    title: 'Unexpected response',
    status,
    detail: `GET ${url} answered ${status} instead of upgrading to a WebSocket${excerpt ? `: ${excerpt}` : ''}`,
    code: 'unexpected_response',
    fix: 'Check that the URL points at a Hook relay (not a proxy or another service) and that it is healthy (GET /healthz).',
    request_id: requestId,
  };
}

/** Whether reconnecting can fix a refused upgrade: server errors, timeouts and rate limits pass; other 4xx do not. */
function refusalIsFatal(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** Why the relay closed the stream, in words. The protocol's own codes say it all; the relay's reason text would only repeat them. */
function describeClose(code: number, reason: string): string {
  const said = reason ? `: ${reason}` : '';
  if (code === STREAM_CLOSE_CODES.goingAway) return 'the relay is shutting down';
  if (code === STREAM_CLOSE_CODES.heartbeatTimeout) return 'the relay heard no pong from us';
  if (code === STREAM_CLOSE_CODES.tooSlow) return 'the relay dropped this stream for falling behind';
  if (code === 1006) return 'the connection was lost';
  return `the relay closed the connection (code ${code}${said})`;
}

function describeSocketError(error: Error): string {
  const failure = networkFailureOf(error);
  if (failure) return failure[1];
  return error.message;
}

function header(value: string | string[] | undefined): string {
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

async function readLimited(response: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response) {
      if (size < maxBytes) chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= maxBytes) break;
    }
  } catch {
    // A body cut short is described with what arrived.
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
}

/**
 * One live stream: `start()` connects and keeps connecting until `close()` or a fatal
 * error; `state` events say where it is, `message` events carry what the relay sends.
 * `done` resolves when it has stopped: with null after `close()`, or the fatal error.
 */
export class HookStream extends EventEmitter<HookStreamEvents> {
  readonly url: string;
  readonly done: Promise<HookApiError | null>;
  readonly #options: HookStreamOptions;
  readonly #heartbeatMs: number;
  readonly #random: () => number;
  #socket: WebSocket | undefined;
  #state: StreamState = { state: 'connecting', attempt: 1 };
  /** Tries since the last healthy connection. */
  #failures = 0;
  #everOpened = false;
  #openedAtMs = 0;
  #missedHeartbeats = 0;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #closing = false;
  #fatal: HookApiError | undefined;
  /** Why the current socket is going away, when we know better than its close code. */
  #dropReason: string | undefined;
  /** Deliveries received on the current socket and not answered yet (null: a mirror copy, whose answer is never recorded). */
  #unanswered = new Map<string, Unanswered | null>();
  /** Whether the current connection's relay takes batches (its hello's `batch`). */
  #relayBatches = false;
  /** Results answered this turn after its first, sent together at its end (#flushResults), with the delivery each answers (for a late result). */
  #outgoing: Array<{ message: ResultMessage; unanswered: Unanswered | null }> = [];
  /** Whether a result went out this turn: the next ones wait for its end. */
  #sentThisTurn = false;
  /** Deliveries of earlier connections not answered yet: their answers become late results. */
  readonly #earlier = new Map<string, LateResult>();
  /** Late results waiting for a connection. */
  #late: ResultMessage[] = [];
  #finish!: (fatal: HookApiError | null) => void;

  constructor(options: HookStreamOptions) {
    super();
    if (options.mode === 'listen' && !options.endpointId) throw new TypeError('listen mode needs endpointId');
    this.#options = options;
    this.#heartbeatMs = options.heartbeatIntervalMs ?? STREAM_HEARTBEAT_INTERVAL_MS;
    this.#random = options.random ?? Math.random;
    this.url = streamUrl(options);
    this.done = new Promise((resolve) => (this.#finish = resolve));
  }

  get state(): StreamState {
    return this.#state;
  }

  /** Opens the first connection, on the next tick: listeners attached right after `start()` see every state. */
  start(): this {
    process.nextTick(() => {
      if (!this.#closing) this.#connect();
    });
    return this;
  }

  /**
   * Answers a delivery: `sent` on the connection it came on (at the end of this turn of
   * the event loop, with the other answers of the turn), or, for a delivery of a
   * connection lost since, as a late result on the current one (`late`) or the next one
   * (`queued`). False, sending nothing, for a delivery this stream does not know (or
   * answered already).
   */
  sendResult(result: StreamResult): 'sent' | 'late' | 'queued' | false {
    const socket = this.#socket;
    const open = socket !== undefined && socket.readyState === WebSocket.OPEN && this.#state.state === 'open';
    const message: ResultMessage = { type: 'result', version: STREAM_PROTOCOL_VERSION, ...result };
    const current = this.#unanswered.get(result.delivery_id);
    if (current !== undefined && open) {
      this.#unanswered.delete(result.delivery_id);
      this.#sendOrQueue(socket, message, current);
      return 'sent';
    }
    if (current === null) return false; // a mirror copy of a connection going away: nobody waits for its answer
    const late = current ? lateResultOf(current) : this.#earlier.get(result.delivery_id);
    if (!late) return false;
    this.#unanswered.delete(result.delivery_id);
    this.#earlier.delete(result.delivery_id);
    const lateMessage: ResultMessage = { ...message, late };
    if (open && !current) {
      this.#sendOrQueue(socket, lateMessage, null);
      return 'late';
    }
    if (this.#late.length >= LATE_RESULTS_MAX) return false;
    this.#late.push(lateMessage);
    return 'queued';
  }

  #sendOrQueue(socket: WebSocket, message: ResultMessage, unanswered: Unanswered | null): void {
    if (!this.#relayBatches) {
      socket.send(JSON.stringify(message));
    } else if (this.#sentThisTurn) {
      this.#outgoing.push({ message, unanswered });
    } else {
      this.#sentThisTurn = true;
      setImmediate(() => this.#flushResults());
      socket.send(JSON.stringify(message));
    }
  }

  /**
   * Sends the results queued this turn, as one `batch` frame. Results whose connection
   * closed before they went out become late results for the next one.
   */
  #flushResults(): void {
    this.#sentThisTurn = false;
    const socket = this.#socket;
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) {
      this.#outgoingToLate();
      return;
    }
    const outgoing = this.#outgoing;
    if (outgoing.length === 0) return;
    this.#outgoing = [];
    socket.send(JSON.stringify(outgoing.length === 1 ? outgoing[0]!.message : { type: 'batch', version: STREAM_PROTOCOL_VERSION, messages: outgoing.map(({ message }) => message) }));
  }

  /** Results that did not go out before their connection closed: late results on the next one. */
  #outgoingToLate(): void {
    for (const { message, unanswered } of this.#outgoing.splice(0)) {
      if (this.#late.length >= LATE_RESULTS_MAX) break;
      if (message.late) this.#late.push(message);
      else if (unanswered) this.#late.push({ ...message, late: lateResultOf(unanswered) });
    }
  }

  /** Deliveries of the current connection still waiting for a result. */
  get unansweredCount(): number {
    return this.#unanswered.size;
  }

  /** Stops reconnecting and closes the connection (normal closure); resolves once it is closed. */
  async close(): Promise<void> {
    if (!this.#closing && !this.#fatal) {
      this.#flushResults();
      this.#closing = true;
      clearTimeout(this.#reconnectTimer);
      const socket = this.#socket;
      if (!socket || socket.readyState === WebSocket.CLOSED) {
        this.#end(null);
      } else if (socket.readyState === WebSocket.CONNECTING) {
        socket.terminate();
      } else {
        socket.close(1000, 'client closing');
        const cut = setTimeout(() => socket.terminate(), CLOSE_TIMEOUT_MS);
        socket.once('close', () => clearTimeout(cut));
      }
    }
    await this.done;
  }

  #setState(state: StreamState): void {
    this.#state = state;
    this.emit('state', state);
  }

  #end(fatal: HookApiError | null): void {
    clearInterval(this.#heartbeatTimer);
    clearTimeout(this.#reconnectTimer);
    this.#socket = undefined;
    this.#setState({ state: 'closed', fatal });
    this.#finish(fatal);
  }

  #connect(): void {
    this.#failures++;
    this.#setState({ state: 'connecting', attempt: this.#failures });
    this.#dropReason = undefined;
    this.#unanswered = new Map();
    this.#relayBatches = false;
    const url = this.#everOpened ? streamUrl({ ...this.#options, skipMissed: false }) : this.url;
    const socket = new WebSocket(url, {
      headers: { authorization: `Bearer ${this.#options.apiKey}`, 'user-agent': this.#options.userAgent ?? 'hook-client' },
      handshakeTimeout: this.#options.handshakeTimeoutMs ?? STREAM_HANDSHAKE_TIMEOUT_MS,
      perMessageDeflate: false,
      // JSON.parse reads what toString() decodes: invalid UTF-8 would only fail to parse.
      skipUTF8Validation: true,
    });
    this.#socket = socket;

    socket.on('unexpected-response', (_request, response) => {
      void (async () => {
        const body = await readLimited(response, REFUSAL_BODY_MAX_BYTES);
        const status = response.statusCode ?? 0;
        const problem = problemFromRefusal(status, header(response.headers['content-type']), body, header(response.headers['x-request-id']), url);
        if (refusalIsFatal(status)) this.#fatal ??= new HookApiError(problem);
        else this.#dropReason = `the relay answered ${status}: ${problem.detail}`;
        socket.terminate();
      })();
    });
    socket.on('open', () => {
      this.#openedAtMs = performance.now();
      this.#missedHeartbeats = 0;
      this.#heartbeatTimer = setInterval(() => this.#heartbeat(socket), this.#heartbeatMs);
    });
    socket.on('pong', () => (this.#missedHeartbeats = 0));
    socket.on('ping', () => (this.#missedHeartbeats = 0));
    socket.on('message', (data, isBinary) => {
      this.#missedHeartbeats = 0;
      if (isBinary) return;
      const message = parseServerMessage(data.toString());
      if (message?.type === 'batch') for (const one of message.messages) this.#receive(socket, one);
      else if (message) this.#receive(socket, message);
    });
    socket.on('error', (error) => {
      this.#dropReason ??= describeSocketError(error);
    });
    socket.on('close', (code, reason) => this.#closed(socket, code, reason.toString()));
  }

  #receive(socket: WebSocket, message: SingleServerMessage): void {
    if (socket !== this.#socket) return;
    if (message.type === 'hello') {
      if (message.version !== STREAM_PROTOCOL_VERSION) {
        this.#fatal ??= new HookApiError(
          problemForCode(
            'unexpected_response',
            `The relay speaks stream protocol version ${message.version}; this client speaks version ${STREAM_PROTOCOL_VERSION}`,
            'Use a hook CLI (or @hook/client) of the same release as the relay.',
            502,
          ),
        );
        socket.terminate();
        return;
      }
      const reconnected = this.#everOpened;
      this.#everOpened = true;
      this.#relayBatches = message.batch === true;
      this.#setState({ state: 'open', hello: message, reconnected });
      // Answers that came after their connection was lost, before anything of this one.
      for (const late of this.#late.splice(0)) socket.send(JSON.stringify(late));
    } else if (message.type === 'delivery') {
      this.#unanswered.set(message.delivery_id, message.mirror ? null : { delivery: message, receivedAtMs: Date.now() });
    } else if (message.type === 'error') {
      // The relay refuses something and closes; reconnecting would be refused the same way.
      this.#fatal ??= new HookApiError(problemForCode(message.code, message.detail, message.fix, 400));
    }
    this.emit('message', message);
  }

  #heartbeat(socket: WebSocket): void {
    if (socket.readyState !== WebSocket.OPEN) return;
    if (this.#missedHeartbeats >= STREAM_MAX_MISSED_HEARTBEATS) {
      this.#dropReason = `no answer to ${STREAM_MAX_MISSED_HEARTBEATS} heartbeats in ${((this.#missedHeartbeats * this.#heartbeatMs) / 1000).toFixed(0)} s`;
      socket.terminate();
      return;
    }
    this.#missedHeartbeats++;
    socket.ping();
  }

  #closed(socket: WebSocket, code: number, reason: string): void {
    if (socket !== this.#socket) return;
    clearInterval(this.#heartbeatTimer);
    // Their answers may still come (the relay sent them; this process may have been stopped): they go on the next connection.
    for (const [deliveryId, unanswered] of this.#unanswered) if (unanswered && this.#earlier.size < LATE_RESULTS_MAX) this.#earlier.set(deliveryId, lateResultOf(unanswered));
    this.#outgoingToLate();
    this.#unanswered.clear();
    if (code === STREAM_CLOSE_CODES.keyRevoked) {
      this.#fatal ??= new HookApiError(
        problemForCode('invalid_api_key', `The relay closed the stream: ${reason || 'the API key was revoked'}`, 'Use a key that is still valid (`hook login --api-key hk_…`).', 401),
      );
    }
    if (code === STREAM_CLOSE_CODES.endpointGone) {
      this.#fatal ??= new HookApiError(
        problemForCode('endpoint_not_found', `The relay closed the stream: ${reason || 'the endpoint was deleted or disabled'}`, 'Check the endpoint with `hook endpoints get <id>`.', 404),
      );
    }
    if (this.#fatal) return this.#end(this.#fatal);
    if (this.#closing) return this.#end(null);
    const wasOpen = this.#openedAtMs > 0;
    if (wasOpen && performance.now() - this.#openedAtMs >= (this.#options.stableConnectionMs ?? STREAM_STABLE_CONNECTION_MS)) this.#failures = 0;
    this.#openedAtMs = 0;
    const why = this.#dropReason ?? (wasOpen || code !== 1006 ? describeClose(code, reason) : 'could not connect');
    const delayMs = this.#reconnectDelayMs(this.#failures + 1);
    this.#setState({ state: 'reconnecting', reason: why, delayMs, attempt: this.#failures + 1 });
    this.#reconnectTimer = setTimeout(() => this.#connect(), delayMs);
  }

  /** The wait before try `attempt` (2 for the first retry), by the one backoff policy (backoff.ts). */
  #reconnectDelayMs(attempt: number): number {
    const initialDelayMs = this.#options.reconnectInitialDelayMs ?? STREAM_RECONNECT_INITIAL_DELAY_MS;
    const maxDelayMs = this.#options.reconnectMaxDelayMs ?? STREAM_RECONNECT_MAX_DELAY_MS;
    return backoffDelayMs(attempt - 1, { initialDelayMs, maxDelayMs }, this.#random);
  }
}

/** What a late result names: the event, the attempt, and when the delivery came. */
function lateResultOf({ delivery, receivedAtMs }: Unanswered): LateResult {
  return { event_id: delivery.event.id, attempt: delivery.attempt, forwarded_at: new Date(receivedAtMs).toISOString() };
}

/** Creates a stream and starts connecting. */
export function openStream(options: HookStreamOptions): HookStream {
  return new HookStream(options).start();
}
