/**
 * QueuePublisher: delivers an event as a message to a broker (issue 31). One connection per
 * broker and sign-in, opened on the first message and reused for the next ones; a connection
 * that dropped is opened again by the next message, and a message in flight when it dropped
 * fails its attempt (the relay retries it). Every answer is a SendResult, never a throw: the
 * broker's acknowledgement is kind `ok`, anything else a clear `error` with its kind
 * (`timeout`, `connection_refused`, `dns`, `tls` as for a URL, else `broker_error`).
 *
 * What each broker carries and how it acknowledges is in its driver (amqp.ts, nats.ts,
 * redis.ts, mqtt.ts). This module owns what they share: the private-address rule, the time
 * limit, the size check against the broker's limit, and the words of an error.
 */
import { createHash } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { DELIVERY_TIMEOUT_MARKER, isPrivateAddress, isPrivateHostname, transportFailureKind, type AttemptKind, type DestinationAuth, type DestinationTls, type QueueDestinationType, type QueueTarget } from '@hook/core';
import { PrivateDestinationError, type SendResult } from '../sender.ts';
import type { QueueDestination, QueueMessage } from './types.ts';
import { amqpDriver } from './amqp.ts';
import { mqttDriver } from './mqtt.ts';
import { natsDriver } from './nats.ts';
import { redisDriver } from './redis.ts';

/** What a driver needs to open a connection: the address already checked, and the name it stands for (TLS server name). */
export interface BrokerConnectOptions {
  url: URL;
  /** Whether the URL's scheme asks for TLS (amqps, tls, rediss, mqtts). */
  secure: boolean;
  /** The IP address to connect to: resolved and checked by the publisher, so the driver connects to exactly what was checked. */
  address: string;
  port: number;
  /** The host name for TLS (SNI and the certificate check); null when the URL names an IP address. */
  servername: string | null;
  auth: Extract<DestinationAuth, { type: 'basic' }> | null;
  tls: DestinationTls | null;
  /** How long the driver may take to open the connection and sign in. */
  timeoutMs: number;
}

/** The most a broker takes in one message, and what to say when an event is larger. */
export interface BrokerMessageLimit {
  bytes: number;
  /** Who sets it: "this NATS server". */
  holder: string;
  /** The setting's name: "max_payload". */
  setting: string;
  /** How to raise it: "raise max_payload in the server's configuration". */
  fix: string;
}

/** One open connection to a broker. */
export interface BrokerConnection {
  readonly limit: BrokerMessageLimit;
  /** Whether a message's headers travel with it; absent: they do (false: MQTT 3.1.1, whose payload goes alone). */
  readonly carriesHeaders?: boolean;
  /** The size of the message as the broker counts it against `limit` (body, and headers where the broker counts them). */
  messageBytes(target: QueueTarget, message: QueueMessage): number;
  /** Publishes and waits for the broker's acknowledgement; resolves with a short text of it, rejects with a clear error. */
  publish(target: QueueTarget, message: QueueMessage): Promise<string>;
  /** Settles with the reason once the connection dropped or closed: a message in flight then fails, and the next one opens a new connection. */
  readonly dropped: Promise<string>;
  close(): Promise<void>;
}

/** One broker type: its name in errors, its URL schemes and default ports, and how to connect. */
export interface QueueDriver {
  /** "RabbitMQ", "NATS", "Redis", "MQTT broker". */
  broker: string;
  /** URL scheme (with its colon) to whether it means TLS and its default port. */
  schemes: Record<string, { secure: boolean; port: number }>;
  connect(options: BrokerConnectOptions): Promise<BrokerConnection>;
}

const DRIVERS: Record<QueueDestinationType, QueueDriver> = { amqp: amqpDriver, nats: natsDriver, redis: redisDriver, mqtt: mqttDriver };

/**
 * An error whose message is already the clear text a user reads on the attempt. Its kind
 * is `kind` when given, else that of its `cause` (transportFailureKind), else `broker_error`.
 */
class PublishError extends Error {
  readonly kind: AttemptKind | undefined;

  constructor(message: string, options: { cause?: unknown; kind?: AttemptKind } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = options.kind;
  }
}

/** The kind of a failed publish (PublishError). */
function failureKindOf(error: unknown): AttemptKind {
  return (error instanceof PublishError ? error.kind : undefined) ?? transportFailureKind(error, 'broker_error');
}

interface PooledConnection {
  connection: Promise<BrokerConnection>;
  /** Why the connection dropped; null while it is open (or opening). */
  droppedReason: string | null;
  /** The messages waiting for an acknowledgement on it: failed at once when it drops. */
  inFlight: Set<(reason: string) => void>;
}

export class QueuePublisher {
  readonly #timeoutMs: number;
  readonly #allowPrivate: boolean;
  readonly #resolve: typeof dnsLookup;
  /** Keyed by connectionKey: one connection per broker and sign-in. */
  readonly #connections = new Map<string, PooledConnection>();
  #closed = false;

  /** `resolve` replaces the system resolver (dns.lookup) for broker names: for tests that play DNS answers. */
  constructor(options: { timeoutMs: number; allowPrivateDestinations: boolean; resolve?: typeof dnsLookup }) {
    this.#timeoutMs = options.timeoutMs;
    this.#allowPrivate = options.allowPrivateDestinations;
    this.#resolve = options.resolve ?? dnsLookup;
  }

  /**
   * Publishes one message. The result's requestHeaders are the headers that went with it
   * (none over MQTT 3.1.1), or null when it never reached a connection to the broker.
   */
  async publish(destination: QueueDestination, message: QueueMessage): Promise<SendResult> {
    const started = performance.now();
    const sent: { headers: Record<string, string> | null } = { headers: null };
    const result = (kind: AttemptKind, text: string): SendResult => ({
      status: null,
      kind,
      // NUL cannot be stored in PostgreSQL text, and a broker's error may echo anything.
      body: kind === 'ok' ? text.replaceAll('\u0000', '') : null,
      error: kind === 'ok' ? null : text.replaceAll('\u0000', ''),
      retryAfterMs: null,
      durationMs: performance.now() - started,
      requestHeaders: sent.headers,
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PublishError(`no answer within ${this.#timeoutMs} ms ${DELIVERY_TIMEOUT_MARKER}`, { kind: 'timeout' })), this.#timeoutMs);
    });
    try {
      return result('ok', await Promise.race([this.#publish(destination, message, sent), timedOut]));
    } catch (error) {
      return result(failureKindOf(error), describeError(error));
    } finally {
      clearTimeout(timer);
    }
  }

  /** `sent.headers` is set once the message is handed to the broker's connection. */
  async #publish(destination: QueueDestination, message: QueueMessage, sent: { headers: Record<string, string> | null }): Promise<string> {
    if (this.#closed) throw new PublishError('the relay is shutting down; the message was not sent');
    const driver = DRIVERS[destination.target.type];
    const pooled = await this.#connection(driver, destination);
    const connection = await pooled.connection;
    const size = connection.messageBytes(destination.target, message);
    const limit = connection.limit;
    if (size > limit.bytes) {
      throw new PublishError(`the event is ${formatBytes(size)}; ${limit.holder} takes at most ${formatBytes(limit.bytes)} (${limit.setting}); ${limit.fix}, or deliver to a URL destination`);
    }
    let failInFlight!: (reason: string) => void;
    const dropped = new Promise<never>((_, reject) => {
      failInFlight = (reason) => reject(new PublishError(`the connection to the ${driver.broker} dropped before it acknowledged the message: ${reason}`));
    });
    if (pooled.droppedReason !== null) failInFlight(pooled.droppedReason);
    pooled.inFlight.add(failInFlight);
    sent.headers = connection.carriesHeaders === false ? {} : message.headers;
    try {
      return await Promise.race([connection.publish(destination.target, message), dropped]);
    } finally {
      pooled.inFlight.delete(failInFlight);
    }
  }

  /** The open connection for this destination's broker and sign-in, opening one when there is none or it dropped. */
  async #connection(driver: QueueDriver, destination: QueueDestination): Promise<PooledConnection> {
    const key = connectionKey(destination);
    const pooled = this.#connections.get(key);
    if (pooled) {
      await pooled.connection;
      return pooled;
    }
    const entry: PooledConnection = { connection: this.#open(driver, destination), droppedReason: null, inFlight: new Set() };
    this.#connections.set(key, entry);
    const forget = (): void => {
      if (this.#connections.get(key) === entry) this.#connections.delete(key);
    };
    let connection: BrokerConnection;
    try {
      connection = await entry.connection;
    } catch (error) {
      // A failed connection is not kept: the next message tries again.
      forget();
      throw error;
    }
    void connection.dropped.then((reason) => {
      forget();
      entry.droppedReason = reason;
      for (const fail of entry.inFlight) fail(reason);
    });
    if (this.#closed) {
      // close() ran while this connection was opening.
      forget();
      await connection.close();
      throw new PublishError('the relay is shutting down; the message was not sent');
    }
    return entry;
  }

  async #open(driver: QueueDriver, destination: QueueDestination): Promise<BrokerConnection> {
    const url = URL.parse(destination.url);
    if (!url) throw new PublishError(`the broker URL ${JSON.stringify(destination.url)} cannot be parsed; change it`);
    const scheme = driver.schemes[url.protocol];
    if (!scheme) {
      const schemes = Object.keys(driver.schemes).map((s) => `${s}//`).join(' or ');
      throw new PublishError(`the broker URL ${JSON.stringify(destination.url)} of a ${destination.target.type} destination must start with ${schemes}`);
    }
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    const port = url.port === '' ? scheme.port : Number(url.port);
    const address = await this.#address(hostname);
    const where = `${driver.broker} at ${url.host || hostname}${url.port === '' ? `:${port}` : ''}`;
    try {
      return await driver.connect({
        url,
        secure: scheme.secure,
        address,
        port,
        servername: isIP(hostname) ? null : hostname,
        auth: destination.auth,
        tls: destination.tls,
        timeoutMs: this.#timeoutMs,
      });
    } catch (error) {
      throw new PublishError(`could not connect to ${where}: ${describeError(error)}`, { cause: error });
    }
  }

  /**
   * The address to connect to, checked here and then connected to as is (never resolved a
   * second time), so a name that answers differently later (DNS rebinding) cannot slip past:
   * the same rule as the HTTP sender's socket lookup (sender.ts).
   */
  async #address(hostname: string): Promise<string> {
    if (!this.#allowPrivate && isPrivateHostname(hostname)) throw new PrivateDestinationError(hostname, hostname);
    if (isIP(hostname)) return hostname;
    const addresses = await new Promise<LookupAddress[]>((resolve, reject) => {
      this.#resolve(hostname, { all: true }, (error, found) => (error ? reject(new PublishError(`could not resolve the broker name ${hostname}: ${describeError(error)}`, { cause: error, kind: 'dns' })) : resolve(found)));
    });
    if (addresses.length === 0) throw new PublishError(`the broker name ${hostname} resolves to no address`, { kind: 'dns' });
    if (!this.#allowPrivate) {
      const refused = addresses.find((address) => isPrivateAddress(address.address));
      if (refused) throw new PrivateDestinationError(hostname, refused.address);
    }
    return addresses[0]!.address;
  }

  /** Closes every connection; a publish after this fails. */
  async close(): Promise<void> {
    this.#closed = true;
    const pooled = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(
      pooled.map(async (entry) => {
        const connection = await entry.connection.catch(() => null);
        await connection?.close().catch(() => {});
      }),
    );
  }
}

/**
 * The password is part of the key (hashed, so the map holds no secret): two destinations
 * naming the same broker and user with different passwords must not share a connection, or
 * one with a wrong password would publish through the other's sign-in.
 */
function connectionKey(destination: QueueDestination): string {
  const { url, auth, tls } = destination;
  return createHash('sha256')
    .update(JSON.stringify([destination.target.type, url, auth?.username ?? null, auth?.password ?? null, tls?.client_certificate ?? null, tls?.client_key ?? null, tls?.ca ?? null]))
    .digest('base64url');
}

/** The clear text of a failure: ours as written, a socket's with its code. */
function describeError(error: unknown): string {
  if (error instanceof PublishError || error instanceof PrivateDestinationError) return error.message;
  const err = error as NodeJS.ErrnoException & { cause?: unknown };
  if (err?.cause instanceof PrivateDestinationError) return err.cause.message;
  const cause = err?.cause as NodeJS.ErrnoException | undefined;
  const code = [err?.code, cause?.code].find((c) => typeof c === 'string');
  const message = String(err?.message || cause?.message || error);
  const hint = code === 'ECONNREFUSED' ? ' (is the broker running and listening on that port?)' : '';
  return (code && !message.includes(code) ? `${code}: ${message}` : message) + hint;
}

/** "2 MiB (2097152 bytes)": the unit a person reads, and the exact count beside it. */
export function formatBytes(bytes: number): string {
  const units: Array<[string, number]> = [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ];
  for (const [unit, size] of units) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(2))} ${unit} (${bytes} bytes)`;
  }
  return `${bytes} bytes`;
}
