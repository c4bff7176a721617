/**
 * NATS JetStream destinations against a real nats-server with JetStream: the payload byte for
 * byte, the headers as NATS headers (webhook-id also as Nats-Msg-Id, so the stream drops a
 * redelivery), success on the PubAck, and the refusals in words: no stream for the subject,
 * a wrong password (on a second server this test starts with sign-in required), and a
 * message over the server's max_payload.
 */
import type { ChildProcess } from 'node:child_process';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueueDestination } from '../../apps/relay/src/delivery/queues/types.ts';
import { BODY, HEADERS, broker, freePort, localPublisher, message, requireReachable, startServer, stopServer, uniqueSuffix } from './support.ts';

const NATS = broker(
  'NATS',
  'HOOK_TEST_NATS_URL',
  'nats://127.0.0.1:4222',
  'start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server',
);
const suffix = uniqueSuffix();
const STREAM = `HOOK_TEST_${suffix}`;
const SUBJECT = `hook.test.${suffix}.orders`;
const publisher = localPublisher();
let nc: NatsConnection;
let jsm: JetStreamManager;
let maxPayload: number;

function destination(subject = SUBJECT, rest: Partial<QueueDestination> = {}): QueueDestination {
  return { url: NATS.url, target: { type: 'nats', subject }, auth: null, tls: null, ...rest };
}

beforeAll(async () => {
  await requireReachable(NATS);
  const url = new URL(NATS.url);
  nc = await connect({ servers: url.host });
  maxPayload = nc.info!.max_payload;
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: STREAM, subjects: [`hook.test.${suffix}.>`], storage: StorageType.Memory });
});

afterAll(async () => {
  await publisher.close();
  await jsm?.streams.delete(STREAM).catch(() => {});
  await nc?.close();
});

describe('NATS JetStream queue destination', () => {
  it('publishes the payload byte for byte with the headers, and answers ok on the PubAck', async () => {
    const result = await publisher.publish(destination(), message());
    expect(result).toMatchObject({ status: null, kind: 'ok', body: `NATS JetStream stored it: stream ${STREAM}, sequence 1`, error: null, retryAfterMs: null });
    const stored = await jsm.streams.getMessage(STREAM, { seq: 1 });
    expect(stored!.subject).toBe(SUBJECT);
    expect(Buffer.compare(Buffer.from(stored!.data), BODY)).toBe(0);
    for (const [name, value] of Object.entries(HEADERS)) expect(stored!.header.get(name)).toBe(value);
    expect(stored!.header.get('Nats-Msg-Id')).toBe(HEADERS['webhook-id']);
  });

  it('answers ok on a redelivery of the same event, which the stream keeps once (Nats-Msg-Id)', async () => {
    const again = await publisher.publish(destination(), message());
    expect(again).toMatchObject({ kind: 'ok', body: `NATS JetStream: stream ${STREAM} already holds this message (duplicate webhook-id), sequence 1` });
    expect((await jsm.streams.info(STREAM)).state.messages).toBe(1);
  });

  it('fails a subject no stream takes', async () => {
    const subject = `hook.nostream.${suffix}`;
    const result = await publisher.publish(destination(subject), message());
    expect(result).toMatchObject({ kind: 'broker_error', body: null });
    expect(result.error).toBe(`no JetStream stream matches subject ${subject} (no responders): add the subject to a stream or change the destination's subject (or enable JetStream on the server)`);
  });

  it('fails a message over the server max_payload (counting the headers), and takes one just under it', async () => {
    const tooLarge = await publisher.publish(destination(), message({ body: Buffer.alloc(maxPayload), headers: { ...HEADERS, 'webhook-id': `msg_large_${suffix}` } }));
    expect(tooLarge).toMatchObject({ kind: 'broker_error', body: null });
    expect(tooLarge.error).toMatch(
      /^the event is [\d.]+ (MiB|KiB) \(\d+ bytes\); this NATS server takes at most [\d.]+ (MiB|KiB) \(\d+ bytes\) \(max_payload, counting the headers\); raise max_payload in the server configuration, or deliver to a URL destination$/,
    );
    expect(tooLarge.error).toContain(`(${maxPayload} bytes)`);
    const fits = await publisher.publish(destination(), message({ body: Buffer.alloc(maxPayload - 1024, 7), headers: { ...HEADERS, 'webhook-id': `msg_fits_${suffix}` } }));
    expect(fits).toMatchObject({ kind: 'ok' });
  });

  describe('on a server that requires a sign-in', () => {
    let server: ChildProcess | undefined;
    let url: string;

    beforeAll(async () => {
      const port = await freePort();
      url = `nats://127.0.0.1:${port}`;
      server = await startServer('nats-server', ['-a', '127.0.0.1', '-p', String(port), '--user', 'hook', '--pass', 'secret'], /Server is ready/);
    });

    afterAll(async () => {
      await stopServer(server);
    });

    it('fails with a clear error when the password is wrong', async () => {
      const result = await publisher.publish(destination(SUBJECT, { url, auth: { type: 'basic', username: 'hook', password: 'wrong' } }), message());
      expect(result).toMatchObject({ kind: 'broker_error', body: null });
      expect(result.error).toBe(`could not connect to NATS server at ${url.slice('nats://'.length)}: the NATS server refused the sign-in of user "hook": check the destination's username and password`);
    });

    it('signs in with the right password (JetStream is off there: no stream takes the subject)', async () => {
      const result = await publisher.publish(destination(SUBJECT, { url, auth: { type: 'basic', username: 'hook', password: 'secret' } }), message());
      expect(result.error).toMatch(/^no JetStream stream matches subject/);
    });
  });
});
