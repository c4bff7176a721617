/**
 * Sends one delivery to the local server the way the relay sends to a URL destination
 * (docs/delivery.md): a POST with the exact body bytes (decoded from base64, never
 * re-serialised, so signatures verify), the delivery's headers (the original ones that
 * may travel plus webhook-id/-timestamp/-signature and x-hook-*) minus hop-by-hop
 * ones, and a content-length of its own. One keep-alive pool per `hook listen`.
 *
 * Requests go through undici's `dispatch` with a handler of our own rather than
 * `request()`: the target is one origin known at start, so no URL is parsed per request,
 * and the answer's first bytes are kept as they arrive, with no readable stream or abort
 * signal made for each of a thousand requests a second.
 */
import { Pool, type Dispatcher } from 'undici';
import { ATTEMPT_BODY_MAX_BYTES, keptResponseBody, withoutHopByHop, type DeliveryMessage } from '@hook/core';
import { forwardPath, type ForwardTarget } from './target.ts';

/** How long the local server has to answer one delivery. */
export const FORWARD_TIMEOUT_MS = 30_000;
/** Idle connections to the local server are closed after this long. */
const KEEP_ALIVE_TIMEOUT_MS = 30_000;

export interface ForwardOutcome {
  /** The full URL the delivery went to. */
  url: string;
  /** The local server's HTTP status, or null when it did not answer. */
  status: number | null;
  durationMs: number;
  /** Why there was no answer: "connection refused: nothing listens on 127.0.0.1:3000". */
  error: string | null;
  /** What an attempt keeps of the answer (core's keptResponseBody); null without an answer. */
  responseBody: string | null;
}

/** The headers to send: the delivery's, minus hop-by-hop ones and any the Connection header names (core's rule, as the relay's), with a content-length of its own. */
export function headersToForward(headers: Record<string, string>, bodyLength: number): Record<string, string> {
  const out = withoutHopByHop(headers);
  out['content-length'] = String(bodyLength);
  return out;
}

function describeFailure(error: unknown, url: string, timeoutMs: number): string {
  const err = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  const code = err.code ?? err.cause?.code;
  const where = new URL(url).host;
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused: nothing listens on ${where}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${new URL(url).hostname} does not resolve`;
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return `${where} closed the connection without answering`;
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return `no answer within ${timeoutMs / 1000} s`;
    default: {
      const message = err.cause?.message ?? err.message;
      return code && !message.includes(code) ? `${code}: ${message}` : message;
    }
  }
}

/**
 * One delivery on its way to the local server: undici's dispatch calls it back as the
 * answer comes, and `outcome` resolves (never rejects) once it is in or has failed.
 */
export class Forwarding implements Dispatcher.DispatchHandlers {
  readonly outcome: Promise<ForwardOutcome>;
  /** Whether `abort()` was called: hook listen stopped before the answer. */
  aborted = false;
  readonly #url: string;
  readonly #timeoutMs: number;
  readonly #started = performance.now();
  #resolve!: (outcome: ForwardOutcome) => void;
  #abortRequest: ((error?: Error) => void) | undefined;
  #status: number | null = null;
  readonly #kept: Buffer[] = [];
  #keptBytes = 0;

  constructor(url: string, timeoutMs: number) {
    this.#url = url;
    this.#timeoutMs = timeoutMs;
    this.outcome = new Promise((resolve) => (this.#resolve = resolve));
  }

  /** Gives up on the request; the outcome says so, unless the answer came first. */
  abort(): void {
    this.aborted = true;
    this.#abortRequest?.();
  }

  onConnect(abort: (error?: Error) => void): void {
    this.#abortRequest = abort;
    if (this.aborted) abort();
  }

  onHeaders(statusCode: number): boolean {
    // 1xx answers (100 Continue, 103 Early Hints) come before the real one.
    if (statusCode >= 200) this.#status = statusCode;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#keptBytes < ATTEMPT_BODY_MAX_BYTES) {
      this.#kept.push(chunk);
      this.#keptBytes += chunk.length;
    }
    return true;
  }

  onComplete(): void {
    const kept = this.#kept.length === 1 ? this.#kept[0]! : Buffer.concat(this.#kept);
    this.#resolve({ url: this.#url, status: this.#status, durationMs: this.#elapsed(), error: null, responseBody: keptResponseBody(kept) });
  }

  onError(error: Error): void {
    const why = this.aborted ? 'hook listen stopped before the answer' : describeFailure(error, this.#url, this.#timeoutMs);
    this.#resolve({ url: this.#url, status: null, durationMs: this.#elapsed(), error: why, responseBody: null });
  }

  #elapsed(): number {
    return Math.round((performance.now() - this.#started) * 100) / 100;
  }
}

/** Forwards deliveries to one target over a keep-alive pool. */
export class LocalForwarder {
  readonly target: ForwardTarget;
  readonly #pool: Pool;
  readonly #timeoutMs: number;

  constructor(target: ForwardTarget, options: { timeoutMs?: number; connections?: number } = {}) {
    this.target = target;
    this.#timeoutMs = options.timeoutMs ?? FORWARD_TIMEOUT_MS;
    this.#pool = new Pool(target.origin, {
      connections: options.connections ?? 64,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      connect: { timeout: this.#timeoutMs },
      // These bound the wait for each request (an AbortSignal.timeout per request would keep
      // a signal and a timer alive for the whole timeout, tens of thousands at once).
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
    });
  }

  /** Sends one delivery. */
  forward(delivery: DeliveryMessage): Forwarding {
    const path = forwardPath(this.target, delivery.event.path, delivery.event.query);
    const forwarding = new Forwarding(`${this.target.origin}${path}`, this.#timeoutMs);
    const body = Buffer.from(delivery.body_base64, 'base64');
    try {
      this.#pool.dispatch({ path, method: 'POST', headers: headersToForward(delivery.headers, body.length), body }, forwarding);
    } catch (error) {
      // A request undici refuses outright (a header value it cannot send, say).
      forwarding.onError(error as Error);
    }
    return forwarding;
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }
}
