/**
 * Sends one delivery to the local server the way the relay sends to a URL destination
 * (docs/delivery.md): a POST with the exact body bytes (decoded from base64, never
 * re-serialised, so signatures verify), the delivery's headers (the original ones that
 * may travel plus webhook-id/-timestamp/-signature and x-hook-*) minus hop-by-hop
 * ones, and a content-length of its own. One keep-alive pool per `hook listen`.
 */
import { Agent, request } from 'undici';
import type { DeliveryMessage } from '@hook/core';
import { forwardUrl, type ForwardTarget } from './target.ts';

/** How long the local server has to answer one delivery. */
export const FORWARD_TIMEOUT_MS = 30_000;
/** Bytes of the local server's answer kept for the attempt record (the relay keeps as many). */
export const RESPONSE_BODY_MAX_BYTES = 4096;
/** Idle connections to the local server are closed after this long. */
const KEEP_ALIVE_TIMEOUT_MS = 30_000;

/** Headers about one connection, or that the HTTP client sets itself: never copied. */
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'host', 'content-length', 'expect', 'http2-settings',
]);

export interface ForwardOutcome {
  /** The full URL the delivery went to. */
  url: string;
  /** The local server's HTTP status, or null when it did not answer. */
  status: number | null;
  durationMs: number;
  /** Why there was no answer: "connection refused: nothing listens on 127.0.0.1:3000". */
  error: string | null;
  /** The first RESPONSE_BODY_MAX_BYTES of the answer as text; null without an answer. */
  responseBody: string | null;
}

/** The headers to send: the delivery's, minus hop-by-hop ones and any the Connection header names. */
export function headersToForward(headers: Record<string, string>, bodyLength: number): Record<string, string> {
  const named = new Set((headers.connection ?? '').split(',').map((name) => name.trim().toLowerCase()).filter(Boolean));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    out[lower] = value;
  }
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

/** Forwards deliveries to one target over a keep-alive pool. */
export class LocalForwarder {
  readonly target: ForwardTarget;
  readonly #agent: Agent;
  readonly #timeoutMs: number;

  constructor(target: ForwardTarget, options: { timeoutMs?: number; connections?: number } = {}) {
    this.target = target;
    this.#timeoutMs = options.timeoutMs ?? FORWARD_TIMEOUT_MS;
    this.#agent = new Agent({
      connections: options.connections ?? 64,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      connect: { timeout: this.#timeoutMs },
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
    });
  }

  /** Sends one delivery; never throws (a failure is an outcome with status null). */
  async forward(delivery: DeliveryMessage, signal?: AbortSignal): Promise<ForwardOutcome> {
    const url = forwardUrl(this.target, delivery.event.path, delivery.event.query);
    const body = Buffer.from(delivery.body_base64, 'base64');
    const started = performance.now();
    const elapsed = (): number => Math.round((performance.now() - started) * 100) / 100;
    try {
      const response = await request(url, {
        method: 'POST',
        headers: headersToForward(delivery.headers, body.length),
        body,
        dispatcher: this.#agent,
        // The agent's connect, headers and body timeouts bound the wait. (An AbortSignal.timeout
        // per request keeps each request's signal and timer alive for the whole timeout: at
        // a thousand events a second, tens of thousands of them, some 60 MB of hook listen's memory.)
        signal,
      });
      const kept: Buffer[] = [];
      let keptBytes = 0;
      for await (const chunk of response.body) {
        if (keptBytes < RESPONSE_BODY_MAX_BYTES) {
          kept.push(chunk as Buffer);
          keptBytes += (chunk as Buffer).length;
        }
      }
      return {
        url,
        status: response.statusCode,
        durationMs: elapsed(),
        error: null,
        // NUL cannot be stored in PostgreSQL text, and a local server may send anything.
        responseBody: Buffer.concat(kept).subarray(0, RESPONSE_BODY_MAX_BYTES).toString('utf8').replaceAll('\u0000', '\uFFFD'),
      };
    } catch (error) {
      const cancelled = signal?.aborted === true;
      return { url, status: null, durationMs: elapsed(), error: cancelled ? 'hook listen stopped before the answer' : describeFailure(error, url, this.#timeoutMs), responseBody: null };
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
