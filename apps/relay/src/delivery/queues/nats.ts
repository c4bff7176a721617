/**
 * NATS JetStream destinations, over @nats-io/transport-node and @nats-io/jetstream. A message
 * is a JetStream publish on the destination's subject:
 * - the body is the NATS payload, byte for byte;
 * - every event header is a NATS message header (names as the relay writes them, lowercase),
 *   and webhook-id is also `Nats-Msg-Id`, so a stream's duplicate window drops a redelivery.
 * Success is the stream's PubAck (stored, with its sequence). No stream capturing the
 * subject (no responders), a stream refusing the message, or wrong credentials fail the
 * attempt with the server's reason.
 *
 * The limit is the server's max_payload (from its INFO; 1 MiB unless the operator changed
 * it), counted over the payload and the headers as the server counts it.
 *
 * The client connects to the one address the publisher checked, never reconnects by itself
 * and ignores the cluster's gossiped addresses: the next message opens a new connection
 * through the same check, so no unchecked (private) address is ever dialled.
 */
import { connect, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { QueueTarget } from '@hook/core';
import type { QueueMessage } from './types.ts';
import type { BrokerConnection, BrokerConnectOptions, QueueDriver } from './index.ts';

/** The server's default max_payload, for a server whose INFO did not say. */
const NATS_DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

export const natsDriver: QueueDriver = {
  broker: 'NATS server',
  schemes: { 'nats:': { secure: false, port: 4222 }, 'tls:': { secure: true, port: 4222 } },
  connect: connectNats,
};

async function connectNats(options: BrokerConnectOptions): Promise<BrokerConnection> {
  const { auth, tls } = options;
  const host = options.address.includes(':') ? `[${options.address}]` : options.address;
  // servername is not in the client's TlsOptions type, but the client passes every option on to tls.connect.
  const tlsOptions: Record<string, string> = {};
  if (options.servername) tlsOptions.servername = options.servername;
  if (tls?.ca) tlsOptions.ca = tls.ca;
  if (tls?.client_certificate) tlsOptions.cert = tls.client_certificate;
  if (tls?.client_key) tlsOptions.key = tls.client_key;
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: `${host}:${options.port}`,
      name: 'hook relay',
      timeout: options.timeoutMs,
      reconnect: false,
      ignoreClusterUpdates: true,
      resolve: false,
      ...(auth ? { user: auth.username, pass: auth.password } : {}),
      ...(options.secure || tls ? { tls: tlsOptions } : {}),
    });
  } catch (error) {
    // The cause keeps the socket's code (ECONNREFUSED, ERR_TLS_…): the attempt's kind (transportFailureKind).
    throw new Error(describeNatsError(error, auth?.username), { cause: error });
  }
  return new NatsJetStreamConnection(nc, options.timeoutMs);
}

class NatsJetStreamConnection implements BrokerConnection {
  readonly limit;
  readonly dropped: Promise<string>;
  readonly #nc: NatsConnection;
  readonly #js: JetStreamClient;
  readonly #timeoutMs: number;

  constructor(nc: NatsConnection, timeoutMs: number) {
    this.#nc = nc;
    this.#js = jetstream(nc);
    this.#timeoutMs = timeoutMs;
    this.limit = {
      bytes: nc.info?.max_payload ?? NATS_DEFAULT_MAX_PAYLOAD_BYTES,
      holder: 'this NATS server',
      setting: 'max_payload, counting the headers',
      fix: 'raise max_payload in the server configuration',
    };
    this.dropped = nc.closed().then((error) => (error ? describeNatsError(error) : 'the connection closed'));
  }

  /** As the server counts a message against max_payload: the payload and the encoded header block ("NATS/1.0\r\n", "name: value\r\n" each, "\r\n"). */
  messageBytes(_target: QueueTarget, message: QueueMessage): number {
    let headerBytes = 'NATS/1.0\r\n\r\n'.length;
    const all = { ...message.headers, ...(message.headers['webhook-id'] ? { 'Nats-Msg-Id': message.headers['webhook-id'] } : {}) };
    for (const [name, value] of Object.entries(all)) headerBytes += Buffer.byteLength(`${name}: ${value}\r\n`);
    return message.body.length + headerBytes;
  }

  async publish(target: QueueTarget, message: QueueMessage): Promise<string> {
    if (target.type !== 'nats') throw new Error(`an ${target.type} target on a NATS connection`);
    const h = natsHeaders();
    for (const [name, value] of Object.entries(message.headers)) h.set(name, value);
    const msgID = message.headers['webhook-id'];
    try {
      const ack = await this.#js.publish(target.subject, message.body, { headers: h, timeout: this.#timeoutMs, ...(msgID ? { msgID } : {}) });
      return ack.duplicate
        ? `NATS JetStream: stream ${ack.stream} already holds this message (duplicate webhook-id), sequence ${ack.seq}`
        : `NATS JetStream stored it: stream ${ack.stream}, sequence ${ack.seq}`;
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'JetStreamNotEnabled' || name === 'NoRespondersError') {
        throw new Error(`no JetStream stream matches subject ${target.subject} (no responders): add the subject to a stream or change the destination's subject (or enable JetStream on the server)`);
      }
      throw new Error(`NATS JetStream refused the message on subject ${target.subject}: ${describeNatsError(error)}`);
    }
  }

  async close(): Promise<void> {
    await this.#nc.close().catch(() => {});
  }
}

function describeNatsError(error: unknown, username?: string): string {
  const err = error as Error & { cause?: Error & { code?: string } };
  if (err?.name === 'AuthorizationError' || /authorization violation|authentication/i.test(err?.message ?? '')) {
    return `the NATS server refused the sign-in${username === undefined ? ' (the destination has no credentials)' : ` of user ${JSON.stringify(username)}`}: check the destination's username and password`;
  }
  const code = err?.cause?.code;
  const message = err?.message ?? String(error);
  return code && !message.includes(code) ? `${message} (${code}${code === 'ECONNREFUSED' ? ': is the server running and listening on that port?' : ''})` : message;
}
