/**
 * MQTT destinations, over mqtt.js. A message is a QoS 1 PUBLISH on the destination's topic
 * (not retained), body byte for byte as the payload.
 *
 * MQTT 5 when the broker speaks it (Mosquitto 2, EMQX, HiveMQ): every event header is a
 * user property, and content-type is also the Content Type property. A broker that refuses
 * MQTT 5 (unsupported protocol version; aedes, Mosquitto 1.5) is spoken to in MQTT 3.1.1,
 * which has no headers at all: the payload arrives alone, without webhook-id or signature,
 * and the attempt's answer says so.
 *
 * Success is the broker's PUBACK (in MQTT 5 a reason code below 0x80; 0x10 "no matching
 * subscribers" is success: the broker took the message). The limit is the Maximum Packet
 * Size the broker gives in its CONNACK (MQTT 5), else the protocol's largest packet, 256 MiB.
 */
import { randomUUID } from 'node:crypto';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import type { QueueTarget } from '@hook/core';
import type { QueueMessage } from './types.ts';
import type { BrokerConnection, BrokerConnectOptions, QueueDriver } from './index.ts';

/** The largest MQTT packet: a remaining length of 268,435,455 bytes (four length bytes) and its fixed header. */
const MQTT_MAX_PACKET_BYTES = 268_435_455 + 5;
/** CONNACK reason codes of a broker that does not speak the protocol version asked for (3.1.1's 1, MQTT 5's 0x84). */
const UNSUPPORTED_PROTOCOL_VERSION = new Set([1, 0x84]);

export const mqttDriver: QueueDriver = {
  broker: 'MQTT broker',
  schemes: { 'mqtt:': { secure: false, port: 1883 }, 'mqtts:': { secure: true, port: 8883 } },
  connect: connectMqtt,
};

async function connectMqtt(options: BrokerConnectOptions): Promise<BrokerConnection> {
  try {
    return await open(options, 5);
  } catch (error) {
    if (!UNSUPPORTED_PROTOCOL_VERSION.has((error as { reasonCode?: number }).reasonCode ?? -1)) throw error;
    return await open(options, 4);
  }
}

/** Opens one connection in one protocol version (5, or 4 for 3.1.1); resolves on the CONNACK. */
function open(options: BrokerConnectOptions, protocolVersion: 4 | 5): Promise<MqttConnection> {
  const { auth, tls } = options;
  const clientOptions: IClientOptions = {
    protocol: options.secure ? 'mqtts' : 'mqtt',
    host: options.address,
    hostname: options.address,
    port: options.port,
    protocolVersion,
    clientId: `hook-relay-${randomUUID()}`,
    clean: true,
    // The publisher opens a new connection (through its address check) when this one drops.
    reconnectPeriod: 0,
    connectTimeout: options.timeoutMs,
    ...(options.servername ? { servername: options.servername } : {}),
    ...(auth ? { username: auth.username, password: auth.password } : {}),
    ...(tls?.ca ? { ca: tls.ca } : {}),
    ...(tls?.client_certificate ? { cert: tls.client_certificate } : {}),
    ...(tls?.client_key ? { key: tls.client_key } : {}),
  };
  return new Promise((resolve, reject) => {
    const client = connect(clientOptions);
    // A socket may report more than one error while it closes; an 'error' with no listener would throw.
    client.on('error', () => {});
    const fail = (error: Error & { code?: number }): void => {
      client.end(true);
      // The broker's refusal (a CONNACK reason code) has a numeric code; a socket's error a string (ECONNREFUSED …).
      const refused = typeof error.code === 'number';
      const signIn = refused && (error.code === 4 || error.code === 5 || error.code === 0x86 || error.code === 0x87);
      const wrapped = new Error(
        signIn
          ? `the MQTT broker refused the sign-in${auth ? ` of user ${JSON.stringify(auth.username)}` : ' (the destination has no credentials)'} (${error.message}): check the destination's username and password`
          : error.message,
      );
      // The CONNACK's reason code (numeric) decides a fall back to 3.1.1; a socket's code (ECONNREFUSED …) goes on to the words.
      Object.assign(wrapped, refused ? { reasonCode: error.code } : { code: (error as unknown as { code?: unknown }).code });
      reject(wrapped);
    };
    const closedEarly = (): void => fail(new Error('the broker closed the connection before its CONNACK'));
    client.once('error', fail);
    client.once('close', closedEarly);
    client.once('connect', (connack) => {
      client.removeListener('error', fail);
      client.removeListener('close', closedEarly);
      resolve(new MqttConnection(client, protocolVersion, connack.properties?.maximumPacketSize));
    });
  });
}

class MqttConnection implements BrokerConnection {
  readonly limit;
  readonly carriesHeaders: boolean;
  readonly dropped: Promise<string>;
  readonly #client: MqttClient;
  readonly #protocolVersion: 4 | 5;

  constructor(client: MqttClient, protocolVersion: 4 | 5, maximumPacketSize: number | undefined) {
    this.#client = client;
    this.#protocolVersion = protocolVersion;
    this.carriesHeaders = protocolVersion === 5;
    this.limit = maximumPacketSize
      ? { bytes: maximumPacketSize, holder: 'this MQTT broker', setting: 'the Maximum Packet Size in its CONNACK, counting the topic and properties', fix: "raise the broker's maximum packet size (Mosquitto: max_packet_size)" }
      : { bytes: MQTT_MAX_PACKET_BYTES, holder: 'MQTT', setting: 'the largest packet the protocol allows', fix: 'a message this large cannot go over MQTT' };
    let lastError: Error | null = null;
    client.on('error', (error) => {
      lastError = error;
    });
    this.dropped = new Promise((resolve) => client.once('close', () => resolve(lastError ? lastError.message : 'the connection closed')));
  }

  /** The whole PUBLISH packet, as the broker's Maximum Packet Size counts it. */
  messageBytes(target: QueueTarget, message: QueueMessage): number {
    const topic = target.type === 'mqtt' ? target.topic : '';
    let properties = 0;
    if (this.#protocolVersion === 5) {
      const contentType = message.headers['content-type'];
      if (contentType !== undefined) properties += 1 + 2 + Buffer.byteLength(contentType);
      for (const [name, value] of Object.entries(message.headers)) properties += 1 + 2 + Buffer.byteLength(name) + 2 + Buffer.byteLength(value);
      properties += varintBytes(properties);
    }
    const remaining = 2 + Buffer.byteLength(topic) + 2 + properties + message.body.length;
    return 1 + varintBytes(remaining) + remaining;
  }

  publish(target: QueueTarget, message: QueueMessage): Promise<string> {
    if (target.type !== 'mqtt') return Promise.reject(new Error(`an ${target.type} target on an MQTT connection`));
    const v5 = this.#protocolVersion === 5;
    const contentType = message.headers['content-type'];
    return new Promise((resolve, reject) => {
      this.#client.publish(
        target.topic,
        message.body,
        {
          qos: 1,
          retain: false,
          ...(v5 ? { properties: { userProperties: message.headers, ...(contentType !== undefined ? { contentType } : {}) } } : {}),
        },
        (error, packet) => {
          if (error) return reject(new Error(`the MQTT broker refused the message on topic ${target.topic}: ${error.message}`));
          const reasonCode = (packet as { reasonCode?: number } | undefined)?.reasonCode;
          const noSubscriber = reasonCode === 0x10 ? ' (no subscriber matched)' : '';
          resolve(
            v5
              ? `MQTT broker acknowledged (PUBACK): topic ${target.topic}${noSubscriber}`
              : `MQTT broker acknowledged (PUBACK): topic ${target.topic}; the broker speaks MQTT 3.1.1 only, so the headers (webhook-id, signature) were not carried`,
          );
        },
      );
    });
  }

  async close(): Promise<void> {
    await this.#client.endAsync().catch(() => {});
  }
}

/** Bytes of an MQTT variable byte integer. */
function varintBytes(value: number): number {
  return value < 128 ? 1 : value < 16_384 ? 2 : value < 2_097_152 ? 3 : 4;
}
