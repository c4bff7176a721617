/**
 * Redis Streams destinations against a real Redis: one entry per event with `body` byte for
 * byte and `headers` as JSON, success on the entry ID, the MAXLEN cap, and the refusals in
 * words: a wrong password, a key that is not a stream, a message over proto-max-bulk-len.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueueDestination } from '../../apps/relay/src/delivery/queues/types.ts';
import { BODY, HEADERS, broker, localPublisher, message, requireReachable, uniqueSuffix } from './support.ts';

const REDIS = broker(
  'Redis',
  'HOOK_TEST_REDIS_URL',
  'redis://127.0.0.1:6379',
  'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis',
);
const suffix = uniqueSuffix();
const STREAM = `hook-test:${suffix}:orders`;
const CAPPED = `hook-test:${suffix}:capped`;
const NOT_A_STREAM = `hook-test:${suffix}:string`;
const publisher = localPublisher();
let redis: Redis;

function destination(stream = STREAM, maxLen: number | null = null, rest: Partial<QueueDestination> = {}): QueueDestination {
  return { url: REDIS.url, target: { type: 'redis', stream, max_len: maxLen }, auth: null, tls: null, ...rest };
}

beforeAll(async () => {
  await requireReachable(REDIS);
  redis = new Redis(REDIS.url, { lazyConnect: true });
  await redis.connect();
});

afterAll(async () => {
  await publisher.close();
  await redis?.del(STREAM, CAPPED, NOT_A_STREAM);
  redis?.disconnect();
});

describe('Redis Streams queue destination', () => {
  it('adds one entry with the body byte for byte and the headers as JSON, and answers ok with its ID', async () => {
    const result = await publisher.publish(destination(), message());
    expect(result).toMatchObject({ status: null, kind: 'ok', error: null, retryAfterMs: null });
    const entries = await redis.xrangeBuffer(STREAM, '-', '+');
    expect(entries).toHaveLength(1);
    const [id, fields] = entries[0]!;
    expect(result.body).toBe(`Redis stored it: stream ${STREAM}, entry ${id.toString()}`);
    expect(fields.map((f, i) => (i % 2 === 0 ? f.toString() : null)).filter((f) => f !== null)).toEqual(['body', 'headers']);
    expect(Buffer.compare(fields[1]!, BODY)).toBe(0);
    expect(JSON.parse(fields[3]!.toString())).toEqual(HEADERS);
  });

  it('caps the stream near max_len (MAXLEN ~: Redis trims whole nodes of at most stream-node-max-entries)', async () => {
    const [, nodeEntries] = (await redis.config('GET', 'stream-node-max-entries')) as string[];
    const perNode = Number(nodeEntries);
    const total = perNode * 2 + 50;
    for (let i = 0; i < total; i++) expect(await publisher.publish(destination(CAPPED, 10), message())).toMatchObject({ kind: 'ok' });
    const length = await redis.xlen(CAPPED);
    expect(length).toBeGreaterThanOrEqual(10);
    expect(length).toBeLessThanOrEqual(10 + perNode);
  });

  it('fails with a clear error when the password is wrong', async () => {
    const result = await publisher.publish(destination(STREAM, null, { auth: { type: 'basic', username: `hook-nobody-${suffix}`, password: 'wrong' } }), message());
    expect(result).toMatchObject({ kind: 'broker_error', body: null });
    expect(result.error).toBe(
      `could not connect to Redis server at ${new URL(REDIS.url).host}: the Redis server refused the sign-in of user "hook-nobody-${suffix}" (WRONGPASS invalid username-password pair or user is disabled.): check the destination's username and password`,
    );
  });

  it('fails a key that holds something other than a stream', async () => {
    await redis.set(NOT_A_STREAM, 'plain');
    const result = await publisher.publish(destination(NOT_A_STREAM), message());
    expect(result).toMatchObject({ kind: 'broker_error', body: null });
    expect(result.error).toBe(
      `Redis refused the message for stream ${NOT_A_STREAM}: the key holds another type, not a stream (WRONGTYPE Operation against a key holding the wrong kind of value): change the destination's stream`,
    );
  });

  it('fails a message over the server proto-max-bulk-len without sending it', async () => {
    const [, limitText] = (await redis.config('GET', 'proto-max-bulk-len')) as string[];
    const limit = Number(limitText);
    const result = await publisher.publish(destination(), message({ body: Buffer.alloc(limit + 1) }));
    expect(result).toMatchObject({ kind: 'broker_error', body: null });
    expect(result.error).toMatch(
      new RegExp(`^the event is [\\d.]+ MiB \\(${limit + 1} bytes\\); this Redis server takes at most [\\d.]+ MiB \\(${limit} bytes\\) \\(proto-max-bulk-len\\); raise proto-max-bulk-len in the server configuration, or deliver to a URL destination$`),
    );
    expect(await redis.xlen(STREAM)).toBe(1);
  });
});
