/**
 * MQTT destinations end to end through a real relay and its delivery worker, against an
 * in-process broker (aedes), so `npm test` covers the whole way on a machine with only Node:
 * a destination added through the API, an event ingested with a body that is not UTF-8, the
 * message a subscriber receives byte for byte, and the delivery and its attempt as the API
 * shows them; a broker that is down (a clear error, retries scheduled, a replay delivering
 * once it is up); and the checks a queue destination passes before it is stored. The broker
 * password given in auth basic is in no answer.
 *
 * Not here: an event over the broker's size limit. aedes speaks MQTT 3.1.1, whose CONNACK
 * carries no Maximum Packet Size, so the only limit is the protocol's 256 MiB, beyond what
 * ingest takes (10 MiB); test/brokers/relay-delivery.test.ts covers it through the relay
 * against a NATS server's max_payload, test/brokers/mqtt.test.ts against Mosquitto's.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { Aedes, type AuthenticateError } from 'aedes';
import { connectAsync, type IPublishPacket, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createEndpoint, expectProblem, sendEvent, signUp, startTestRelay, type ApiResponse, type TestRelay } from '@hook/test/relay';
import { closedPort } from '@hook/test/receiver';

/** Long waits between retries: a delivery that arrives within a test arrived because something made it due. */
const SLOW_SCHEDULE = [3_600_000, 3_600_000, 3_600_000];
/** JSON whitespace a re-serialisation would lose, and bytes that are not UTF-8. */
const BODY = Buffer.concat([Buffer.from('{ "type" : "order.paid",\n\t"amount": [ 1 , 2.50 ] }  \r\n'), Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3])]);
/** The broker password of the destination: it must never come back in an answer. */
const BROKER_PASSWORD = 'aedes-s3cret-7f3k';

let relay: TestRelay;
let key: string;
let broker: Aedes;
const servers: Server[] = [];
let brokerUrl: string;
let subscriber: MqttClient;
const received: IPublishPacket[] = [];
/** The sign-ins the broker saw: [username, password]. */
const signIns: Array<[string | undefined, string | undefined]> = [];
/** Every API answer of this file, to check that the broker password never comes back. */
const answers: string[] = [];

/** Serves the broker on `port` (0: a free one) and answers the port. */
async function serveBroker(port = 0): Promise<number> {
  const server = createServer(broker.handle);
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return (server.address() as AddressInfo).port;
}


beforeAll(async () => {
  relay = await startTestRelay({ retryScheduleMs: SLOW_SCHEDULE, deliveryTimeoutMs: 2000 }, { workerPollMs: 20 });
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
  broker = await Aedes.createBroker({
    // Anonymous, as most brokers on a private network; a username signs in only with its password.
    authenticate: (_client, username, password, done) => {
      signIns.push([username, password?.toString()]);
      if (username === undefined || (username === 'hook' && password?.toString() === BROKER_PASSWORD)) return done(null, true);
      done(Object.assign(new Error('bad user name or password'), { returnCode: 4 }) as AuthenticateError, null);
    },
  });
  brokerUrl = `mqtt://127.0.0.1:${await serveBroker()}`;
  subscriber = await connectAsync(brokerUrl, { protocolVersion: 4, clientId: 'queue-destinations-subscriber', reconnectPeriod: 0 });
  subscriber.on('message', (_topic, _payload, packet) => received.push(packet));
  await subscriber.subscribeAsync('hook/#', { qos: 1 });
});

afterAll(async () => {
  await relay?.close();
  await subscriber?.endAsync();
  await new Promise<void>((resolve) => (broker ? broker.close(() => resolve()) : resolve()));
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
});

async function call(method: string, path: string, json?: unknown, on: TestRelay = relay): Promise<ApiResponse> {
  const response = await api(on.baseUrl, method, path, { key, ...(json === undefined ? {} : { json }) });
  answers.push(JSON.stringify(response.body));
  return response;
}

/** An endpoint whose one destination is `body`'s: the `hook listen` destination it is made with is deleted. */
async function endpointWith(body: Record<string, unknown>): Promise<{ endpoint: any; destination: any }> {
  const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'queue' });
  answers.push(JSON.stringify(endpoint));
  const created = await call('POST', `/v1/endpoints/${endpoint.id}/destinations`, body);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect((await call('DELETE', `/v1/destinations/${endpoint.destinations[0].id}`)).status).toBe(204);
  return { endpoint, destination: created.body };
}

async function eventOf(id: string): Promise<any> {
  return (await call('GET', `/v1/events/${id}`)).body;
}

async function receivedOn(topic: string, count = 1): Promise<IPublishPacket[]> {
  await expect.poll(() => received.filter((packet) => packet.topic === topic).length).toBeGreaterThanOrEqual(count);
  return received.filter((packet) => packet.topic === topic);
}

describe('MQTT destinations through the relay (aedes)', () => {
  it('delivers an event that is not UTF-8 byte for byte, signed in with auth basic, and shows the PUBACK as the attempt\'s answer', async () => {
    const { endpoint, destination } = await endpointWith({
      destination: { type: 'mqtt', url: brokerUrl, topic: 'hook/orders' },
      auth: { type: 'basic', username: 'hook', password: BROKER_PASSWORD },
    });
    expect(destination).toMatchObject({ endpoint_id: endpoint.id, destination: { type: 'mqtt', url: brokerUrl, topic: 'hook/orders' }, status: 'active', auth: { type: 'basic', username: 'hook', secret_set: true } });
    expect((await call('GET', `/v1/destinations/${destination.id}`)).body).toMatchObject({ destination: { type: 'mqtt', url: brokerUrl, topic: 'hook/orders' }, auth: { type: 'basic', username: 'hook', secret_set: true } });
    expect((await call('GET', `/v1/endpoints/${endpoint.id}/destinations`)).body.data.map((row: any) => row.id)).toEqual([destination.id]);

    const id = await sendEvent(endpoint.url, BODY, { 'content-type': 'application/octet-stream' });
    const [packet] = await receivedOn('hook/orders');
    expect(Buffer.compare(packet!.payload as Buffer, BODY)).toBe(0);
    expect(packet!.qos).toBe(1);
    expect(signIns).toContainEqual(['hook', BROKER_PASSWORD]);

    await expect.poll(async () => (await eventOf(id)).status).toBe('delivered');
    const event = await eventOf(id);
    expect(event).toMatchObject({ body_encoding: 'base64', body: BODY.toString('base64'), attempt_count: 1 });
    expect(event.deliveries).toEqual([expect.objectContaining({ destination_id: destination.id, destination: { type: 'mqtt', url: brokerUrl, topic: 'hook/orders' }, status: 'delivered', attempt_count: 1, next_attempt_at: null })]);
    expect(event.attempts).toHaveLength(1);
    // aedes speaks MQTT 3.1.1 only: the attempt says the headers could not go with the payload.
    expect(event.attempts[0]).toMatchObject({
      destination_id: destination.id,
      n: 1,
      trigger: 'auto',
      response_status: null,
      error: null,
      response_body: 'MQTT broker acknowledged (PUBACK): topic hook/orders; the broker speaks MQTT 3.1.1 only, so the headers (webhook-id, signature) were not carried',
    });
    expect(received.filter((p) => p.topic === 'hook/orders')).toHaveLength(1);
  });

  it('fails each attempt clearly while the broker is down and keeps retrying; once it is up, a replay delivers', async () => {
    const port = await closedPort();
    const url = `mqtt://127.0.0.1:${port}`;
    const { endpoint, destination } = await endpointWith({ destination: { type: 'mqtt', url, topic: 'hook/later' } });
    const id = await sendEvent(endpoint.url, BODY, { 'content-type': 'application/octet-stream' });

    await expect.poll(async () => (await eventOf(id)).status).toBe('retrying');
    const failed = await eventOf(id);
    expect(failed.deliveries[0]).toMatchObject({ destination_id: destination.id, status: 'retrying', attempt_count: 1, next_trigger: 'auto' });
    expect(Date.parse(failed.deliveries[0].next_attempt_at)).toBeGreaterThan(Date.now() + 3_000_000);
    expect(failed.attempts).toHaveLength(1);
    expect(failed.attempts[0]).toMatchObject({ trigger: 'auto', response_status: null, response_body: null });
    expect(failed.attempts[0].error).toMatch(new RegExp(`^could not connect to MQTT broker at 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*\\(is the broker running and listening on that port\\?\\)$`));
    expect(received.some((p) => p.topic === 'hook/later')).toBe(false);

    await serveBroker(port);
    const replayed = await call('POST', `/v1/events/replay/${id}`, {});
    expect(replayed.status, JSON.stringify(replayed.body)).toBe(200);
    expect(replayed.body.replay).toEqual([{ destination_id: destination.id, outcome: 'attempted' }]);
    expect(replayed.body).toMatchObject({ status: 'delivered', attempt_count: 2 });
    expect(replayed.body.attempts.map((attempt: any) => [attempt.trigger, attempt.error === null])).toEqual([['auto', false], ['replay', true]]);
    expect(replayed.body.deliveries[0]).toMatchObject({ status: 'delivered', next_attempt_at: null });
    const [packet] = await receivedOn('hook/later');
    expect(Buffer.compare(packet!.payload as Buffer, BODY)).toBe(0);
  });

  it('refuses a queue destination without its target, with a password in its URL, with auth other than basic, or with the wrong scheme', async () => {
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'refused' });
    const add = (body: unknown) => call('POST', `/v1/endpoints/${endpoint.id}/destinations`, body);

    const noTopic = expectProblem(await add({ destination: { type: 'mqtt', url: brokerUrl } }), 400, 'validation_failed');
    expect(noTopic.errors).toContainEqual(expect.objectContaining({ field: expect.stringMatching(/topic/) }));

    const password = expectProblem(await add({ destination: { type: 'mqtt', url: 'mqtt://u:p-in-url@127.0.0.1:1883', topic: 'hook/x' } }), 400, 'validation_failed');
    expect(password.errors).toEqual([{ field: 'body.destination.url', message: expect.stringContaining('auth {"type":"basic"') }]);

    const bearer = expectProblem(await add({ destination: { type: 'mqtt', url: brokerUrl, topic: 'hook/x' }, auth: { type: 'bearer', token: 'bearer-s3cret' } }), 400, 'validation_failed');
    expect(bearer.errors).toEqual([{ field: 'body.auth.type', message: 'is bearer; a mqtt destination signs in to its broker with basic (username and password) only' }]);

    const scheme = expectProblem(await add({ destination: { type: 'amqp', url: 'http://127.0.0.1:5672', exchange: 'orders', routing_key: 'paid' } }), 400, 'validation_failed');
    expect(scheme.errors).toContainEqual(expect.objectContaining({ field: expect.stringMatching(/^body\.destination\.url/) }));

    // Nothing was added: the endpoint has only the destination it was made with.
    expect((await call('GET', `/v1/endpoints/${endpoint.id}/destinations`)).body.data).toHaveLength(1);
  });

  it('refuses a broker at a private address when the relay does not allow private destinations', async () => {
    const hosted = await startTestRelay({ allowPrivateDestinations: false }, { sharing: relay });
    try {
      const endpoint = (await call('POST', '/v1/endpoints', { name: 'hosted' }, hosted)).body;
      const refused = await call('POST', `/v1/endpoints/${endpoint.id}/destinations`, { destination: { type: 'mqtt', url: brokerUrl, topic: 'hook/private' } }, hosted);
      const problem = expectProblem(refused, 422, 'destination_not_allowed');
      expect(problem.detail).toContain(brokerUrl);
    } finally {
      await hosted.close();
    }
  });

  it('shows the broker password in no answer of this file', () => {
    expect(answers.length).toBeGreaterThan(10);
    const all = answers.join('\n');
    for (const secret of [BROKER_PASSWORD, 'p-in-url', 'bearer-s3cret']) expect(all).not.toContain(secret);
  });
});
