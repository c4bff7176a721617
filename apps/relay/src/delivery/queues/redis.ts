/**
 * Redis Streams destinations. A message is one stream entry:
 * `XADD <stream> [MAXLEN ~ <max_len>] * body <bytes> headers <JSON object of the headers>`.
 * - `body` is the event body, byte for byte (a binary-safe bulk string);
 * - `headers` is one JSON object of every event header (webhook-id, webhook-timestamp,
 *   webhook-signature, content-type, …). One field rather than a field per header: an entry
 *   always has the same two fields whatever headers an event carries, a header can never
 *   collide with `body`, and a consumer reads the headers with one JSON.parse.
 * - MAXLEN is approximate (`~`): Redis trims whole nodes, cheaply, so a stream may keep a
 *   little more than max_len entries.
 * Success is the entry ID Redis returns.
 *
 * ioredis rather than node-redis: it takes Buffers as command arguments as they are, its
 * TLS options go to tls.connect unchanged, and with `enableOfflineQueue: false` and no retry
 * strategy it fails a command on a dead connection at once instead of queueing it, which is
 * what a delivery attempt wants (the relay retries; this module does not).
 *
 * The limit is the server's proto-max-bulk-len (512 MB by default; read with CONFIG GET at
 * connect when the server allows it), which caps each field.
 */
import { Redis } from 'ioredis';
import type { QueueTarget } from '@hook/core';
import type { QueueMessage } from './types.ts';
import type { BrokerConnection, BrokerConnectOptions, QueueDriver } from './index.ts';

/** Redis's default proto-max-bulk-len: the largest string a command may carry. */
const REDIS_DEFAULT_PROTO_MAX_BULK_LEN_BYTES = 512 * 1024 * 1024;

export const redisDriver: QueueDriver = {
  broker: 'Redis server',
  schemes: { 'redis:': { secure: false, port: 6379 }, 'rediss:': { secure: true, port: 6379 } },
  connect: connectRedis,
};

async function connectRedis(options: BrokerConnectOptions): Promise<BrokerConnection> {
  const { url, auth, tls } = options;
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0;
  if (!Number.isSafeInteger(db) || db < 0) throw new Error(`the database in the Redis URL (${JSON.stringify(url.pathname.slice(1))}) must be a number`);
  let lastError: Error | null = null;
  const client = new Redis({
    host: options.address,
    port: options.port,
    db,
    // AUTH password alone for the default user: what servers before Redis 6 (no ACL users) accept.
    ...(auth ? (auth.username === '' || auth.username === 'default' ? { password: auth.password } : { username: auth.username, password: auth.password }) : {}),
    ...(options.secure
      ? {
          tls: {
            ...(options.servername ? { servername: options.servername } : {}),
            ...(tls?.ca ? { ca: tls.ca } : {}),
            ...(tls?.client_certificate ? { cert: tls.client_certificate } : {}),
            ...(tls?.client_key ? { key: tls.client_key } : {}),
          },
        }
      : {}),
    lazyConnect: true,
    connectTimeout: options.timeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    reconnectOnError: () => false,
  });
  client.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    // The cause keeps the socket's code (ECONNREFUSED, ERR_TLS_…): the attempt's kind (transportFailureKind).
    throw new Error(describeRedisError(lastError ?? error, auth?.username), { cause: lastError ?? error });
  }
  let maxBulkBytes = REDIS_DEFAULT_PROTO_MAX_BULK_LEN_BYTES;
  try {
    const [, value] = (await client.config('GET', 'proto-max-bulk-len')) as string[];
    if (value && Number(value) > 0) maxBulkBytes = Number(value);
  } catch {
    // CONFIG is often denied (ACL, managed Redis): the default stands.
  }
  return new RedisStreamConnection(client, maxBulkBytes, () => lastError);
}

class RedisStreamConnection implements BrokerConnection {
  readonly limit;
  readonly dropped: Promise<string>;
  readonly #client: Redis;

  constructor(client: Redis, maxBulkBytes: number, lastError: () => Error | null) {
    this.#client = client;
    this.limit = {
      bytes: maxBulkBytes,
      holder: 'this Redis server',
      setting: 'proto-max-bulk-len',
      fix: 'raise proto-max-bulk-len in the server configuration',
    };
    this.dropped = new Promise((resolve) => client.once('end', () => resolve(lastError() ? describeRedisError(lastError()) : 'the connection closed')));
  }

  /** Each field is one bulk string: the larger of the body and the headers' JSON is what meets the limit. */
  messageBytes(_target: QueueTarget, message: QueueMessage): number {
    return Math.max(message.body.length, Buffer.byteLength(JSON.stringify(message.headers)));
  }

  async publish(target: QueueTarget, message: QueueMessage): Promise<string> {
    if (target.type !== 'redis') throw new Error(`an ${target.type} target on a Redis connection`);
    const cap = target.max_len === null ? [] : ['MAXLEN', '~', String(target.max_len)];
    try {
      const id = await this.#client.xadd(target.stream, ...cap, '*', 'body', message.body, 'headers', JSON.stringify(message.headers));
      return `Redis stored it: stream ${target.stream}, entry ${id}`;
    } catch (error) {
      throw new Error(`Redis refused the message for stream ${target.stream}: ${describeRedisError(error)}`);
    }
  }

  async close(): Promise<void> {
    await this.#client.quit().catch(() => this.#client.disconnect());
  }
}

function describeRedisError(error: unknown, username?: string): string {
  const message = (error as Error)?.message ?? String(error);
  if (/^WRONGPASS|invalid password|invalid username-password/i.test(message)) {
    return `the Redis server refused the sign-in${username ? ` of user ${JSON.stringify(username)}` : ''} (${message}): check the destination's username and password`;
  }
  if (/without any password configured/i.test(message)) return `the Redis server has no password set but the destination signs in with one (${message}): remove the destination's auth or set a password on the server`;
  if (/^NOAUTH/.test(message)) return `the Redis server needs a sign-in (${message}): set the destination's username and password`;
  if (/^WRONGTYPE/.test(message)) return `the key holds another type, not a stream (${message}): change the destination's stream`;
  if (/^NOPERM/.test(message)) return `the user may not run XADD on this key (${message}): grant it in the server's ACL or change the destination's user`;
  return message;
}
