/**
 * OpenTelemetry tracing (docs/deployment.md#tracing) as an operator sees it: a real relay
 * process with OTEL_* pointing at a real OTLP/HTTP receiver (a node:http server decoding the
 * JSON export requests), an event sent with the sender's `traceparent`, delivered to a real
 * URL receiver and forwarded by the real `hook listen` to a local server. The spans must
 * form one trace: ingest (child of the sender's span) → store and both delivery attempts →
 * the listener's round trip, each delivery carrying a `traceparent` naming its attempt.
 * Without OTEL_* (or with OTEL_SDK_DISABLED) nothing is exported and deliveries carry the
 * sender's headers as they came.
 */
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { HookUser } from '../support/cli.ts';
import { freshDatabase } from '../support/database.ts';
import { startHook, startLocalServer, stopAllHookProcesses, type LocalServer } from '../support/hook-process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startRelayProcess, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';

/** One span as an OTLP/JSON export request carries it, attributes flattened. */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  resource: Record<string, string | number | boolean>;
}

interface OtlpReceiver {
  url: string;
  /** Every export request, in arrival order. */
  requests: { path: string; headers: IncomingHttpHeaders; body: Buffer }[];
  /** The spans of the JSON ones. */
  spans: ExportedSpan[];
  close(): Promise<void>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const valueOf = (value: OtlpValue): string | number | boolean =>
  value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.boolValue ?? value.doubleValue ?? '';
const attributesOf = (list: { key: string; value: OtlpValue }[] = []) => Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

/** A collector's OTLP/HTTP traces endpoint: records every export request and decodes the JSON ones (POST /v1/traces) into spans. */
async function startOtlpReceiver(port = 0): Promise<OtlpReceiver> {
  const requests: OtlpReceiver['requests'] = [];
  const spans: ExportedSpan[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) });
      if (request.url === '/v1/traces' && request.headers['content-type'] === 'application/json') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: any[] };
        for (const resourceSpans of body.resourceSpans) {
          const resource = attributesOf(resourceSpans.resource?.attributes);
          for (const scopeSpans of resourceSpans.scopeSpans) {
            for (const span of scopeSpans.spans) {
              spans.push({ ...span, parentSpanId: span.parentSpanId ?? '', attributes: attributesOf(span.attributes), status: span.status ?? {}, resource });
            }
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

/** `00-<trace id>-<parent span id>-<flags>` split into its parts. */
function parseTraceParent(value: string | string[] | undefined): { traceId: string; spanId: string; flags: string } {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(String(value));
  expect(match, `traceparent ${String(value)}`).not.toBeNull();
  return { traceId: match![1]!, spanId: match![2]!, flags: match![3]! };
}

const children: ChildProcess[] = [];
const servers: { close(): Promise<void> }[] = [];
const user = new HookUser();
let database: TestDatabase | undefined;

beforeAll(async () => {
  database = await freshDatabase();
}, 60_000);

afterAll(async () => {
  await stopAllHookProcesses();
  await stopRelayProcesses(children);
  await Promise.all(servers.map((server) => server.close()));
  await database?.drop();
  user.remove();
});

async function relayWith(env: Record<string, string>): Promise<RelayProcess> {
  const relay = await startRelayProcess(database!.url, env);
  children.push(relay.child);
  return relay;
}

async function request(relay: RelayProcess, method: string, path: string, key: string | null, body?: unknown): Promise<any> {
  const response = await fetch(`${relay.baseUrl}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = await response.json();
  expect(response.status, `${method} ${path}: ${JSON.stringify(answer)}`).toBeLessThan(300);
  return answer;
}

async function traceParentStored(eventId: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: database!.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ trace_parent: string | null }>('select trace_parent from event where id = $1', [eventId]);
    return rows[0]!.trace_parent;
  } finally {
    await client.end();
  }
}

describe('tracing', () => {
  it('follows one event from the sender through ingest and storage to each delivery attempt and the listener', async () => {
    const otlp = await startOtlpReceiver();
    const receiver: Receiver = await startReceiver();
    const local: LocalServer = await startLocalServer(0, 202);
    servers.push(otlp, receiver, local);
    const relay = await relayWith({
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-token=s3cret%20token',
      OTEL_SERVICE_NAME: 'hook-relay-e2e',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    const { api_key: key } = await user.json(['signup', '--api-url', relay.baseUrl]);
    const listen = startHook(user, ['listen', String(local.port), '--endpoint', 'traced', '--json']);
    const ready = await listen.waitForJson((line) => line.type === 'ready');
    const endpointId: string = ready.endpoint.id;
    const ingestUrl: string = ready.ingest_url;
    const cliDestinationId: string = (await request(relay, 'GET', `/v1/endpoints/${endpointId}/destinations`, key)).data[0].id;
    const urlDestination = await request(relay, 'POST', `/v1/endpoints/${endpointId}/destinations`, key, { destination: { type: 'url', url: `${receiver.url}/hooks?token=dest-secret` } });

    const sender = { traceId: hex(16), spanId: hex(8) };
    const sent = await fetch(`${ingestUrl}?source=billing`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${sender.traceId}-${sender.spanId}-01`, tracestate: 'vendor=abc', 'user-agent': 'sender/1.0' },
      body: JSON.stringify({ type: 'invoice.paid' }),
    });
    expect(sent.status).toBe(200);
    const eventId = ((await sent.json()) as { id: string }).id;

    const [delivered] = await receiver.waitFor(1);
    const [forwarded] = await local.waitFor(1);
    const toUrl = parseTraceParent(delivered!.headers.traceparent);
    const toListener = parseTraceParent(forwarded!.headers.traceparent);
    // The relay's spans continue the sender's trace; the sender's tracestate travels with it.
    expect(toUrl).toMatchObject({ traceId: sender.traceId, flags: '01' });
    expect(toListener).toMatchObject({ traceId: sender.traceId, flags: '01' });
    expect(delivered!.headers.tracestate).toBe('vendor=abc');

    const named = (name: string) => otlp.spans.filter((span) => span.name === name);
    await expect.poll(() => named('listen forward').length + named('delivery attempt').length, { timeout: 15_000 }).toBe(3);
    await expect.poll(() => named('store event').length, { timeout: 15_000 }).toBe(1);

    const ingest = named('POST /v1/ingest/:ingest_id');
    expect(ingest).toHaveLength(1);
    const ingestSpan = ingest[0]!;
    expect(ingestSpan).toMatchObject({ traceId: sender.traceId, parentSpanId: sender.spanId, kind: 2 /* SERVER */ });
    expect(ingestSpan.attributes).toMatchObject({
      'hook.event_id': eventId,
      'hook.endpoint_id': endpointId,
      'http.request.method': 'POST',
      'http.route': '/v1/ingest/:ingest_id',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
      'user_agent.original': 'sender/1.0',
    });
    expect(ingestSpan.resource['service.name']).toBe('hook-relay-e2e');

    const [store] = named('store event');
    expect(store).toMatchObject({ traceId: sender.traceId, parentSpanId: ingestSpan.spanId });
    expect(store!.attributes).toMatchObject({ 'hook.event_id': eventId, 'hook.endpoint_id': endpointId, 'db.system.name': 'postgresql', 'hook.store.outcome': 'stored' });

    const attempts = named('delivery attempt');
    const urlAttempt = attempts.find((span) => span.attributes['hook.destination_id'] === urlDestination.id)!;
    const cliAttempt = attempts.find((span) => span.attributes['hook.destination_id'] === cliDestinationId)!;
    for (const attempt of [urlAttempt, cliAttempt]) {
      expect(attempt).toMatchObject({ traceId: sender.traceId, parentSpanId: ingestSpan.spanId });
      expect(attempt.attributes).toMatchObject({ 'hook.event_id': eventId, 'hook.endpoint_id': endpointId, 'hook.attempt': 1, 'hook.delivery.status': 'delivered' });
    }
    // Each delivery's traceparent names its own attempt span.
    expect(urlAttempt.spanId).toBe(toUrl.spanId);
    expect(cliAttempt.spanId).toBe(toListener.spanId);
    const receiverUrl = new URL(receiver.url);
    expect(urlAttempt).toMatchObject({ kind: 3 /* CLIENT */ });
    expect(urlAttempt.attributes).toMatchObject({
      'hook.trigger': 'auto',
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      // The destination's query (often a token) is not exported.
      'url.full': `${receiver.url}/hooks`,
      'server.address': receiverUrl.hostname,
      'server.port': Number(receiverUrl.port),
    });
    expect(cliAttempt.attributes).toMatchObject({ 'hook.trigger': 'listen', 'hook.destination_type': 'cli', 'http.response.status_code': 202 });

    const [forward] = named('listen forward');
    expect(forward).toMatchObject({ traceId: sender.traceId, parentSpanId: cliAttempt.spanId });
    expect(forward!.attributes).toMatchObject({ 'hook.event_id': eventId, 'hook.destination_id': cliDestinationId, 'http.response.status_code': 202 });
    expect(String(forward!.attributes['hook.listen.session_id'])).toMatch(/^ses_/);

    // The ingest URL's secret and the destination's token stay out of every exported span.
    const exported = JSON.stringify(otlp.spans);
    expect(exported).not.toContain(new URL(ingestUrl).pathname.split('/').pop()!);
    expect(exported).not.toContain('dest-secret');
    expect(otlp.requests.every(({ headers }) => headers['x-collector-token'] === 's3cret token')).toBe(true);
    expect(await traceParentStored(eventId)).toBe(`00-${sender.traceId}-${ingestSpan.spanId}-01`);
  }, 90_000);

  it('exports OTLP protobuf (the default protocol) to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given', async () => {
    const otlp = await startOtlpReceiver();
    const receiver = await startReceiver();
    servers.push(otlp, receiver);
    const relay = await relayWith({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/collector/traces`, OTEL_BSP_SCHEDULE_DELAY: '50' });
    const { api_key: key } = await request(relay, 'POST', '/v1/accounts', null);
    const endpoint = await request(relay, 'POST', '/v1/endpoints', key, { name: 'protobuf', destination: { type: 'url', url: receiver.url } });
    const traceId = hex(16);
    expect((await fetch(endpoint.url, { method: 'POST', headers: { traceparent: `00-${traceId}-${hex(8)}-01` }, body: 'x' })).status).toBe(200);
    await receiver.waitFor(1);
    // Protobuf carries ids as raw bytes: the sender's trace id is in the request, under the default service name.
    const carries = ({ body }: { body: Buffer }) => body.includes(Buffer.from(traceId, 'hex')) && body.includes(Buffer.from('hook-relay'));
    await expect.poll(() => otlp.requests.filter(carries).length, { timeout: 15_000 }).toBeGreaterThan(0);
    expect(otlp.requests.every(({ path, headers }) => path === '/collector/traces' && headers['content-type'] === 'application/x-protobuf')).toBe(true);
  }, 60_000);

  it('exports nothing and passes the sender\'s trace headers through when OTEL_* is unset or OTEL_SDK_DISABLED=true', async () => {
    // The OTLP default endpoint (localhost:4318): where spans would go if tracing came on without one.
    const defaultCollector = await startOtlpReceiver(4318);
    const disabledCollector = await startOtlpReceiver();
    const receiver = await startReceiver();
    servers.push(defaultCollector, disabledCollector, receiver);
    const unset = Object.fromEntries(Object.keys(process.env).filter((name) => name.startsWith('OTEL_')).map((name) => [name, '']));
    const relays = [
      await relayWith({ ...unset }),
      await relayWith({ ...unset, OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: disabledCollector.url, OTEL_BSP_SCHEDULE_DELAY: '50' }),
    ];
    for (const [i, relay] of relays.entries()) {
      const { api_key: key } = await request(relay, 'POST', '/v1/accounts', null);
      const endpoint = await request(relay, 'POST', '/v1/endpoints', key, { name: `untraced-${i}`, destination: { type: 'url', url: `${receiver.url}/untraced` } });
      const traceParent = `00-${hex(16)}-${hex(8)}-01`;
      const sent = await fetch(endpoint.url, { method: 'POST', headers: { 'content-type': 'application/json', traceparent: traceParent, tracestate: 'vendor=xyz' }, body: '{}' });
      expect(sent.status).toBe(200);
      const eventId = ((await sent.json()) as { id: string }).id;
      const requests = await receiver.waitFor(i + 1);
      // Forwarded as received, like any other original header.
      expect(requests[i]!.headers.traceparent).toBe(traceParent);
      expect(requests[i]!.headers.tracestate).toBe('vendor=xyz');
      expect(await traceParentStored(eventId)).toBeNull();
    }
    // A relay's shutdown exports what it has left: stopping them leaves no span unsent.
    await stopRelayProcesses(relays.map((relay) => relay.child));
    expect(defaultCollector.requests).toHaveLength(0);
    expect(disabledCollector.requests).toHaveLength(0);
  }, 60_000);
});
