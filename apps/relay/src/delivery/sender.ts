import { createHash, X509Certificate } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { createSecureContext } from 'node:tls';
import { Agent, buildConnector, request } from 'undici';
import {
  answerKind, ATTEMPT_BODY_MAX_BYTES, DELIVERY_TIMEOUT_MARKER, isPrivateAddress, isPrivateHostname, keptResponseBody, parseRetryAfter, transportFailureKind,
  type AttemptKind, type DestinationAuth, type DestinationTls,
} from '@hook/core';
import { bearerAuthorization, destinationAuthHeaders, redactedHeaders, withDestinationHeaders } from './http-auth.ts';
import { OAuth2Tokens } from './oauth2.ts';

/** Idle keep-alive connections to a destination are closed after this long. */
const KEEP_ALIVE_TIMEOUT_MS = 30_000;
/**
 * Bytes of an answer's headers read. Node's default (16 KiB) would fail a delivery the
 * receiver accepted because it answered with long cookies or a large policy header, and
 * the event would be sent again; what is kept of them is bounded apart (core's boundHeaders).
 */
const RESPONSE_HEADERS_READ_MAX_BYTES = 256 * 1024;
/** Most connections to one destination origin. */
const CONNECTIONS_PER_ORIGIN = 64;
/** Bytes of a token endpoint's answer read (a JWT access token can be several KB). */
const TOKEN_RESPONSE_MAX_BYTES = 65_536;
/** Most agents for destinations with their own TLS settings; beyond, the least recently used is closed. */
const TLS_AGENTS_MAX = 1_000;

export interface SendResult {
  /** The HTTP status, or null when none came (network error, timeout, refused destination, a broker's answer). */
  status: number | null;
  /**
   * What the attempt came to, decided here, where it happened (core's AttemptKind): `ok` (a
   * 2xx, a broker's acknowledgement), the answer's class, or why none came. It is recorded
   * with the attempt and read by metrics and traces; the error text is for people.
   */
  kind: AttemptKind;
  /** What is kept of the answer (core's keptResponseBody: its first ATTEMPT_BODY_MAX_BYTES, as text). */
  body: string | null;
  error: string | null;
  retryAfterMs: number | null;
  durationMs: number;
  /**
   * The headers sent, credentials redacted (redactedHeaders); null: nothing was sent (the
   * attempt failed before its request). Absent: the transport sends the outgoing delivery's
   * headers as they are (a broker's message, a listener's request).
   */
  requestHeaders?: Record<string, string> | null;
  /** The answer's headers as received (bounded when recorded: boundHeaders); absent or null when none came. */
  responseHeaders?: Record<string, string | string[] | undefined> | null;
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

/** OpenSSL's reason in its error text ("…:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:…"). */
function tlsReason(message: string): string {
  return /SSL routines:[^:]*:([^:]+):/.exec(message)?.[1] ?? message.trim();
}

/** Node's codes for a server certificate that no trusted CA signed. */
const UNTRUSTED_SERVER_CERTIFICATE_CODES = new Set(['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY']);

function describeError(error: unknown, timeoutMs: number, destinationId: string | null): string {
  const err = error as NodeJS.ErrnoException & { cause?: unknown };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return `no answer within ${timeoutMs} ms ${DELIVERY_TIMEOUT_MARKER}`;
  if (err.cause instanceof PrivateDestinationError) return err.cause.message;
  if (err instanceof PrivateDestinationError) return err.message;
  const cause = err.cause as NodeJS.ErrnoException | undefined;
  const code = err.code ?? cause?.code;
  const message = cause?.message ?? err.message;
  if (code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED') {
    return `${code}: the destination asks for a client certificate (mTLS) and none was presented; set one with hook destinations update ${destinationId ?? '<id>'} --client-cert <file> --client-key <file>`;
  }
  if (code !== undefined && UNTRUSTED_SERVER_CERTIFICATE_CODES.has(code)) {
    return `${code}: ${message}; the destination's server certificate is not trusted: if a private CA signed it, set that CA with hook destinations update ${destinationId ?? '<id>'} --ca <file>`;
  }
  if (code?.startsWith('ERR_SSL_')) return `${code}: TLS with the destination failed: ${tlsReason(message)}`;
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

/**
 * undici's connector, changed in one way: a TLS alert that arrives after the handshake
 * (TLS 1.3 servers refuse a missing client certificate there) ends the socket with that
 * error at once. Otherwise undici handles the close that follows first and reports only
 * "other side closed", and the reason is lost.
 */
function connectorKeepingTlsAlerts(options: buildConnector.BuildOptions): buildConnector.connector {
  const connect = buildConnector(options);
  return (target, callback) =>
    connect(target, (...args) => {
      const socket = args[1];
      socket?.once('error', (error: NodeJS.ErrnoException) => {
        if (error.code?.startsWith('ERR_SSL_')) socket.destroy(error);
      });
      callback(...args);
    });
}

/**
 * Why a destination's TLS settings cannot make a connection (bad PEM, a key that is not the
 * certificate's), found before any connection is tried; null when they can.
 */
function unusableTlsSettings(settings: { cert?: string; key?: string; ca?: string }, destinationId: string): string | null {
  try {
    if (settings.ca !== undefined) {
      // createSecureContext takes text without a certificate in it as no CA at all.
      const certificates = settings.ca.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);
      if (certificates === null) throw new Error('no PEM certificate (-----BEGIN CERTIFICATE-----) in it');
      for (const certificate of certificates) new X509Certificate(certificate);
      createSecureContext({ ca: settings.ca });
    }
  } catch (error) {
    return `the destination's CA certificate could not be used: ${(error as Error).message}; set it again with hook destinations update ${destinationId} --ca <file>`;
  }
  if (settings.cert === undefined && settings.key === undefined) return null;
  try {
    if (settings.cert === undefined || settings.key === undefined) throw new Error(settings.cert === undefined ? 'a client key without its certificate' : 'a client certificate without its key');
    createSecureContext({ cert: settings.cert, key: settings.key });
    return null;
  } catch (error) {
    return `the destination's client certificate or key could not be used: ${(error as Error).message}; set it again with hook destinations update ${destinationId} --client-cert <file> --client-key <file>`;
  }
}

/** What a URL destination adds to its POST: how it signs in, and its TLS settings. */
export interface DestinationSendOptions {
  /** The destination's id: its OAuth2 token is kept under it, and errors name it in their fix. */
  destinationId: string;
  auth: DestinationAuth | null;
  tls: DestinationTls | null;
}

/** How one POST goes: through which connections, by when, and how much of the answer is kept. */
interface PostPlan {
  /** Named in an error's fix; null for a token request. */
  destinationId: string | null;
  dispatcher: Agent;
  deadline: AbortSignal;
  startedMs: number;
  keepBytes: number;
}

/** Sends deliveries over pooled keep-alive connections, with a hard time limit per attempt. */
export class DeliverySender {
  readonly #agent: Agent;
  readonly #timeoutMs: number;
  readonly #allowPrivate: boolean;
  readonly #connect: { timeout: number; lookup?: LookupFunction };
  /** Agents of destinations with their own TLS settings, by a hash of those; least recently used first. */
  readonly #tlsAgents = new Map<string, Agent>();
  readonly #tokens: OAuth2Tokens;

  /**
   * `resolve` replaces the system resolver (dns.lookup) for destination names: for tests
   * that play DNS answers, such as a name rebinding to a private address.
   */
  constructor(options: { timeoutMs: number; allowPrivateDestinations: boolean; resolve?: typeof dnsLookup }) {
    this.#timeoutMs = options.timeoutMs;
    this.#allowPrivate = options.allowPrivateDestinations;
    const resolve = options.resolve ?? dnsLookup;
    this.#connect = {
      timeout: options.timeoutMs,
      ...(options.allowPrivateDestinations ? (options.resolve ? { lookup: options.resolve as unknown as LookupFunction } : {}) : { lookup: publicOnlyLookup(resolve) }),
    };
    this.#agent = this.#newAgent({});
    // The token endpoint is reached as a destination is: the same private-address rule and time limit.
    this.#tokens = new OAuth2Tokens({
      timeoutMs: options.timeoutMs,
      post: (url, headers, body) =>
        this.#post(url, headers, body, { destinationId: null, dispatcher: this.#agent, deadline: AbortSignal.timeout(this.#timeoutMs), startedMs: performance.now(), keepBytes: TOKEN_RESPONSE_MAX_BYTES }),
    });
  }

  /**
   * POSTs a delivery. `options` (URL destinations that have them): its auth headers go on
   * top of `headers` (never over the signature headers), and its client certificate or CA
   * picks its connections. One time limit covers the whole attempt, token requests included,
   * so an attempt never outlasts its lease. With OAuth2, a 401 gets one new token and one
   * more try. Never throws: what went wrong is the result's error.
   */
  async send(url: string, headers: Record<string, string>, body: Buffer, options?: DestinationSendOptions): Promise<SendResult> {
    const startedMs = performance.now();
    const deadline = AbortSignal.timeout(this.#timeoutMs);
    const failed = (failure: { error: string; kind: AttemptKind }): SendResult => ({ status: null, kind: failure.kind, body: null, error: failure.error, retryAfterMs: null, durationMs: performance.now() - startedMs, requestHeaders: null });
    const dispatcher = this.#dispatcherFor(options);
    // Settings that cannot make a TLS connection fail it as the handshake would.
    if (typeof dispatcher === 'string') return failed({ error: dispatcher, kind: 'tls' });
    const plan: PostPlan = { destinationId: options?.destinationId ?? null, dispatcher, deadline, startedMs, keepBytes: ATTEMPT_BODY_MAX_BYTES };
    const auth = options?.auth ?? null;
    const post = async (sent: Record<string, string>): Promise<SendResult> => {
      const result = await this.#post(url, sent, body, plan);
      result.requestHeaders = redactedHeaders(sent, auth);
      return result;
    };
    if (auth === null) return post(headers);
    if (auth.type !== 'oauth2') return post(withDestinationHeaders(headers, destinationAuthHeaders(auth)));

    const destinationId = options!.destinationId;
    const first = await this.#tokens.token(destinationId, auth, deadline);
    if ('error' in first) return failed(first);
    const result = await post(withDestinationHeaders(headers, bearerAuthorization(first.token)));
    if (result.status !== 401) return result;
    const renewed = await this.#tokens.renew(destinationId, auth, first.token, deadline);
    if ('error' in renewed) return { ...result, error: `the receiver refused the token (401) and a new one could not be had: ${renewed.error}`, durationMs: performance.now() - startedMs };
    return post(withDestinationHeaders(headers, bearerAuthorization(renewed.token)));
  }

  async close(): Promise<void> {
    const agents = [this.#agent, ...this.#tlsAgents.values()];
    this.#tlsAgents.clear();
    await Promise.all(agents.map((agent) => agent.close()));
  }

  #newAgent(tls: { cert?: string; key?: string; ca?: string }): Agent {
    return new Agent({
      connections: CONNECTIONS_PER_ORIGIN,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      maxHeaderSize: RESPONSE_HEADERS_READ_MAX_BYTES,
      // No redirects: undici's request never follows them, so a 3xx is the attempt's answer.
      connect: connectorKeepingTlsAlerts({ ...this.#connect, ...tls }),
    });
  }

  /**
   * The connections a destination's POST goes over: the shared agent, or for a destination
   * with a client certificate or CA, an agent of its own (TLS settings are per connection),
   * shared by destinations with the same settings. A CA given replaces the system's trusted
   * CAs for that destination (Node's `ca`). A string: why its settings cannot be used.
   */
  #dispatcherFor(options: DestinationSendOptions | undefined): Agent | string {
    const tls = options?.tls;
    const settings = { cert: tls?.client_certificate ?? undefined, key: tls?.client_key ?? undefined, ca: tls?.ca ?? undefined };
    if (settings.cert === undefined && settings.key === undefined && settings.ca === undefined) return this.#agent;
    const hash = createHash('sha256').update(JSON.stringify([settings.cert ?? null, settings.key ?? null, settings.ca ?? null])).digest('base64url');
    const cached = this.#tlsAgents.get(hash);
    if (cached) {
      this.#tlsAgents.delete(hash);
      this.#tlsAgents.set(hash, cached);
      return cached;
    }
    const unusable = unusableTlsSettings(settings, options!.destinationId);
    if (unusable !== null) return unusable;
    const agent = this.#newAgent(settings);
    this.#tlsAgents.set(hash, agent);
    if (this.#tlsAgents.size > TLS_AGENTS_MAX) {
      const [leastRecent, evicted] = this.#tlsAgents.entries().next().value!;
      this.#tlsAgents.delete(leastRecent);
      // close() lets requests under way finish.
      void evicted.close();
    }
    return agent;
  }

  /** One POST: the answer's status, headers, first `keepBytes` and Retry-After, or what went wrong. Never throws. */
  async #post(url: string, headers: Record<string, string>, body: Buffer, plan: PostPlan): Promise<SendResult> {
    const elapsed = (): number => performance.now() - plan.startedMs;
    // A URL stored before the relay checked that it parses fails its attempts, not the worker.
    const hostname = URL.parse(url)?.hostname;
    if (hostname === undefined) return { status: null, kind: 'network_error', body: null, error: `the destination URL ${JSON.stringify(url)} cannot be parsed; change it`, retryAfterMs: null, durationMs: elapsed() };
    if (!this.#allowPrivate && isPrivateHostname(hostname)) {
      return { status: null, kind: 'network_error', body: null, error: new PrivateDestinationError(hostname, hostname).message, retryAfterMs: null, durationMs: elapsed() };
    }
    try {
      const response = await request(url, { method: 'POST', headers, body, dispatcher: plan.dispatcher, signal: plan.deadline });
      const kept: Buffer[] = [];
      let keptBytes = 0;
      for await (const chunk of response.body) {
        if (keptBytes < plan.keepBytes) {
          kept.push(chunk as Buffer);
          keptBytes += (chunk as Buffer).length;
        }
      }
      const retryAfter = response.headers['retry-after'];
      return {
        status: response.statusCode,
        kind: answerKind(response.statusCode),
        body: keptResponseBody(kept.length === 1 ? kept[0]! : Buffer.concat(kept), plan.keepBytes),
        error: null,
        retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()),
        durationMs: elapsed(),
        responseHeaders: response.headers,
      };
    } catch (error) {
      return {
        status: null,
        // The deadline (an AbortError) is a timeout; a private address refused by the lookup is a network error like any other refusal.
        kind: transportFailureKind(error),
        body: null,
        error: describeError(error, this.#timeoutMs, plan.destinationId).replaceAll('\u0000', ''),
        retryAfterMs: null,
        durationMs: elapsed(),
      };
    }
  }
}
