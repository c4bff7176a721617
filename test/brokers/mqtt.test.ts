/**
 * MQTT destinations against a real Mosquitto (MQTT 5): the payload byte for byte, every
 * header as a user property and content-type as the Content Type property, QoS 1 and success
 * on the PUBACK. A second Mosquitto this test starts (sign-in required, max_packet_size set)
 * covers a wrong password and the broker's Maximum Packet Size, to the byte.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type IPublishPacket, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueueDestination } from '../../apps/relay/src/delivery/queues/types.ts';
import { BODY, HEADERS, broker, freePort, localPublisher, message, requireReachable, startServer, stopServer, uniqueSuffix } from './support.ts';

const MOSQUITTO = broker('Mosquitto', 'HOOK_TEST_MQTT_URL', 'mqtt://127.0.0.1:1883', 'mosquitto -d -c /etc/mosquitto/mosquitto.conf');
const suffix = uniqueSuffix();
const TOPIC = `hook-test/${suffix}/orders`;
const publisher = localPublisher();
let subscriber: MqttClient;
const received: IPublishPacket[] = [];

function destination(topic = TOPIC, rest: Partial<QueueDestination> = {}): QueueDestination {
  return { url: MOSQUITTO.url, target: { type: 'mqtt', topic }, auth: null, tls: null, ...rest };
}

async function receivedOn(topic: string): Promise<IPublishPacket> {
  await expect.poll(() => received.some((p) => p.topic === topic)).toBe(true);
  return received.find((p) => p.topic === topic)!;
}

beforeAll(async () => {
  await requireReachable(MOSQUITTO);
  subscriber = await connectAsync(MOSQUITTO.url, { protocolVersion: 5, clientId: `hook-test-subscriber-${suffix}`, reconnectPeriod: 0 });
  subscriber.on('message', (_topic, _payload, packet) => received.push(packet));
  await subscriber.subscribeAsync(`hook-test/${suffix}/#`, { qos: 1 });
});

afterAll(async () => {
  await publisher.close();
  await subscriber?.endAsync();
});

describe('MQTT queue destination (Mosquitto, MQTT 5)', () => {
  it('publishes the payload byte for byte with QoS 1, the headers as user properties, and answers ok on the PUBACK', async () => {
    const result = await publisher.publish(destination(), message());
    expect(result).toMatchObject({ status: null, kind: 'ok', body: `MQTT broker acknowledged (PUBACK): topic ${TOPIC}`, error: null, retryAfterMs: null });
    const packet = await receivedOn(TOPIC);
    expect(Buffer.compare(packet.payload as Buffer, BODY)).toBe(0);
    expect(packet.qos).toBe(1);
    expect(packet.retain).toBe(false);
    expect(packet.properties?.userProperties).toEqual(HEADERS);
    expect(packet.properties?.contentType).toBe('application/json');
  });

  it('answers ok when no one subscribes: the broker took the message', async () => {
    const result = await publisher.publish(destination(`hook-test-unheard/${suffix}`), message());
    expect(result).toMatchObject({ kind: 'ok' });
    expect(result.body).toMatch(new RegExp(`^MQTT broker acknowledged \\(PUBACK\\): topic hook-test-unheard/${suffix}( \\(no subscriber matched\\))?$`));
  });

  it('fails a message larger than the MQTT protocol allows when the broker sets no Maximum Packet Size', async () => {
    const result = await publisher.publish(destination(), message({ body: Buffer.alloc(256 * 1024 * 1024) }));
    expect(result).toMatchObject({ kind: 'broker_error', body: null });
    expect(result.error).toMatch(/^the event is 256 MiB \(\d+ bytes\); MQTT takes at most 256 MiB \(268435460 bytes\) \(the largest packet the protocol allows\); a message this large cannot go over MQTT, or deliver to a URL destination$/);
  });

  describe('on a broker that requires a sign-in and sets max_packet_size', () => {
    const MAX_PACKET_BYTES = 65_536;
    let server: ChildProcess | undefined;
    let directory: string;
    let url: string;
    const auth = { type: 'basic' as const, username: 'hook', password: 'secret' };

    beforeAll(async () => {
      directory = mkdtempSync(join(tmpdir(), 'hook-test-mosquitto-'));
      chmodSync(directory, 0o755);
      const passwords = join(directory, 'passwords');
      execFileSync('mosquitto_passwd', ['-c', '-b', passwords, auth.username, auth.password]);
      chmodSync(passwords, 0o644);
      const port = await freePort();
      url = `mqtt://127.0.0.1:${port}`;
      const config = join(directory, 'mosquitto.conf');
      writeFileSync(config, [`listener ${port} 127.0.0.1`, 'allow_anonymous false', `password_file ${passwords}`, `max_packet_size ${MAX_PACKET_BYTES}`, 'log_dest stderr', ''].join('\n'));
      server = await startServer('mosquitto', ['-c', config], /mosquitto version .* running/);
    });

    afterAll(async () => {
      await stopServer(server);
      if (directory) rmSync(directory, { recursive: true, force: true });
    });

    it('fails with a clear error when the password is wrong', async () => {
      const result = await publisher.publish(destination(TOPIC, { url, auth: { ...auth, password: 'wrong' } }), message());
      expect(result).toMatchObject({ kind: 'broker_error', body: null });
      expect(result.error).toBe(`could not connect to MQTT broker at ${url.slice('mqtt://'.length)}: the MQTT broker refused the sign-in of user "hook" (Connection refused: Not authorized): check the destination's username and password`);
    });

    it("takes a message of exactly the broker's Maximum Packet Size, and fails one byte more with the limit named", async () => {
      const signedIn = destination(TOPIC, { url, auth });
      // The packet around the body: packet type, remaining length (3 bytes at this size), topic,
      // packet id, and the properties (their length, Content Type, a user property per header).
      const properties = 1 + 2 + 'application/json'.length + Object.entries(HEADERS).reduce((sum, [k, v]) => sum + 1 + 2 + k.length + 2 + v.length, 0);
      const overhead = 1 + 3 + 2 + Buffer.byteLength(TOPIC) + 2 + 2 + properties;
      const fits = await publisher.publish(signedIn, message({ body: Buffer.alloc(MAX_PACKET_BYTES - overhead, 1) }));
      expect(fits).toMatchObject({ kind: 'ok' });
      const over = await publisher.publish(signedIn, message({ body: Buffer.alloc(MAX_PACKET_BYTES - overhead + 1, 1) }));
      expect(over).toMatchObject({ kind: 'broker_error', body: null });
      expect(over.error).toBe(
        `the event is 64 KiB (65537 bytes); this MQTT broker takes at most 64 KiB (65536 bytes) (the Maximum Packet Size in its CONNACK, counting the topic and properties); raise the broker's maximum packet size (Mosquitto: max_packet_size), or deliver to a URL destination`,
      );
    });
  });
});
