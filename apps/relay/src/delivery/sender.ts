import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { DELIVERY_TIMEOUT_MARKER, isPrivateAddress, isPrivateHostname, parseRetryAfter } from '@hook/core';

/** Bytes of a receiver's answer kept with the attempt. */
export const RESPONSE_BODY_MAX_BYTES = 4096;
/** Idle keep-alive connections to a destination are closed after this long. */
const KEEP_ALIVE_TIMEOUT_MS = 30_000;
/** Most connections to one destination origin. */
const CONNECTIONS_PER_ORIGIN = 64;

export interface SendResult {
  /** The HTTP status, or null when none came (network error, timeout, refused destination, a broker's answer). */
  status: number | null;
  /** Whether the attempt succeeded, when the status does not say: a broker's acknowledgement (queue destinations). Absent: a 2xx status. */
  ok?: boolean;
  /** The first RESPONSE_BODY_MAX_BYTES of the answer, as text. */
  body: string | null;
  error: string | null;
  retryAfterMs: number | null;
  durationMs: number;
}

/** A destination that resolves to an address deliveries may not reach. */
export class PrivateDestinationError extends Error {
  constructor(host: string, address: string) {
    super(`destination ${host} resolves to ${address}, a private, loopback or link-local address; the relay operator can allow these with HOOK_ALLOW_PRIVATE_DESTINATIONS=true`);
    this.name = 'PrivateDestinationError';
  }
}

/**
 * A DNS lookup that refuses private addresses, on top of `resolve` (the system's
 * dns.lookup unless a caller gives another). Used as the socket's lookup, so the check
 * applies to the very address connected to: a name that resolves differently later (DNS
 * rebinding) cannot slip past a check made earlier.
 */
function publicOnlyLookup(resolve: typeof dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.find((address) => isPrivateAddress(address.address));
      if (refused) return callback(new PrivateDestinationError(hostname, refused.address), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

function describeError(error: unknown, timeoutMs: number): string {
  const err = error as NodeJS.ErrnoException & { cause?: unknown };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return `no answer within ${timeoutMs} ms ${DELIVERY_TIMEOUT_MARKER}`;
  if (err.cause instanceof PrivateDestinationError) return err.cause.message;
  if (err instanceof PrivateDestinationError) return err.message;
  const cause = err.cause as NodeJS.ErrnoException | undefined;
  const code = err.code ?? cause?.code;
  const message = cause?.message ?? err.message;
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

/** Sends deliveries over pooled keep-alive connections, with a hard time limit per attempt. */
export class DeliverySender {
  readonly #agent: Agent;
  readonly #timeoutMs: number;
  readonly #allowPrivate: boolean;

  /**
   * `resolve` replaces the system resolver (dns.lookup) for destination names: for tests
   * that play DNS answers, such as a name rebinding to a private address.
   */
  constructor(options: { timeoutMs: number; allowPrivateDestinations: boolean; resolve?: typeof dnsLookup }) {
    this.#timeoutMs = options.timeoutMs;
    this.#allowPrivate = options.allowPrivateDestinations;
    const resolve = options.resolve ?? dnsLookup;
    this.#agent = new Agent({
      connections: CONNECTIONS_PER_ORIGIN,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      // No redirects: undici's request never follows them, so a 3xx is the attempt's answer.
      connect: {
        timeout: options.timeoutMs,
        ...(options.allowPrivateDestinations ? (options.resolve ? { lookup: options.resolve as unknown as LookupFunction } : {}) : { lookup: publicOnlyLookup(resolve) }),
      },
    });
  }

  async send(url: string, headers: Record<string, string>, body: Buffer): Promise<SendResult> {
    const started = performance.now();
    const elapsed = (): number => performance.now() - started;
    // A URL stored before the relay checked that it parses fails its attempts, not the worker.
    const hostname = URL.parse(url)?.hostname;
    if (hostname === undefined) return { status: null, body: null, error: `the destination URL ${JSON.stringify(url)} cannot be parsed; change it`, retryAfterMs: null, durationMs: elapsed() };
    if (!this.#allowPrivate && isPrivateHostname(hostname)) {
      return { status: null, body: null, error: new PrivateDestinationError(hostname, hostname).message, retryAfterMs: null, durationMs: elapsed() };
    }
    const signal = AbortSignal.timeout(this.#timeoutMs);
    try {
      const response = await request(url, { method: 'POST', headers, body, dispatcher: this.#agent, signal });
      const kept: Buffer[] = [];
      let keptBytes = 0;
      for await (const chunk of response.body) {
        if (keptBytes < RESPONSE_BODY_MAX_BYTES) {
          kept.push(chunk as Buffer);
          keptBytes += (chunk as Buffer).length;
        }
      }
      const retryAfter = response.headers['retry-after'];
      return {
        status: response.statusCode,
        // NUL cannot be stored in PostgreSQL text; a receiver may send anything.
        body: Buffer.concat(kept).subarray(0, RESPONSE_BODY_MAX_BYTES).toString('utf8').replaceAll('\u0000', '\uFFFD'),
        error: null,
        retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()),
        durationMs: elapsed(),
      };
    } catch (error) {
      return { status: null, body: null, error: describeError(error, this.#timeoutMs).replaceAll('\u0000', ''), retryAfterMs: null, durationMs: elapsed() };
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
