/**
 * `hook listen` as a user runs it: the real binary as a child process, a real relay
 * (buildApp on a fresh database, with a delivery worker) and real local HTTP servers.
 * What arrives at the local server must be what was sent, byte for byte, signed with
 * the endpoint's secret; the local server's answers drive the event's status.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '@hook/client';
import { LISTEN_SESSION_CHANNEL, type ListenSessionSignal } from '@hook/relay';
import { HookUser } from '../support/cli.ts';
import { eventually, freePort, startHook, startLocalServer, stopAllHookProcesses, type HookProcess, type LocalServer } from '../support/hook-process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { api, startTestRelay, type TestRelay } from '../support/relay.ts';
import { collectSignals } from '../support/signals.ts';

let relay: TestRelay;
let key: string;
const user = new HookUser();
const servers: { close(): Promise<void> }[] = [];

async function local(port?: number, status?: number): Promise<LocalServer> {
  const server = await startLocalServer(port, status);
  servers.push(server);
  return server;
}

async function ingest(url: string, body: Buffer | string, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers, body });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

async function event(id: string): Promise<any> {
  const response = await api(relay.baseUrl, 'GET', `/v1/events/${id}`, { key });
  expect(response.status).toBe(200);
  return response.body;
}

/** Starts `hook listen … --json` and waits for its ready line. */
async function listen(args: string[]): Promise<{ hook: HookProcess; ready: any }> {
  const hook = startHook(user, ['listen', ...args, '--json']);
  const ready = await hook.waitForJson((line) => line.type === 'ready');
  return { hook, ready };
}

beforeAll(async () => {
  relay = await startTestRelay({ allowPrivateDestinations: true, retryScheduleMs: [100, 100, 100, 100, 100, 100] }, { workerPollMs: 20 });
  const signup = await user.json(['signup', '--api-url', relay.baseUrl]);
  key = signup.api_key;
  await user.json(['account', 'plan', 'pro']); // the file makes more endpoints than free allows
});

afterEach(async () => {
  await stopAllHookProcesses();
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

afterAll(async () => {
  await relay?.close();
  user.remove();
});

describe('hook listen', () => {
  it('creates the endpoint, prints its ingest URL and secret, and forwards exact bytes with a valid signature', async () => {
    const server = await local();
    const { hook, ready } = await listen([String(server.port), '--endpoint', 'bytes']);
    expect(ready).toMatchObject({ type: 'ready', created: true, mirror: false, forward_to: `http://127.0.0.1:${server.port}/` });
    expect(ready.endpoint).toMatchObject({ id: expect.stringMatching(/^ep_/), name: 'bytes', destination: { type: 'cli' } });
    expect(ready.ingest_url).toBe(ready.endpoint.url);
    const secret = (await api(relay.baseUrl, 'GET', `/v1/endpoints/${ready.endpoint.id}/secret`, { key })).body.secret;
    // stdout of a script is often logged: the secret is printed only when asked for (--print-secret).
    expect(JSON.stringify(hook.jsonLines())).not.toContain(secret);
    expect(ready).not.toHaveProperty('secret');
    expect((await user.json(['listen', '--print-secret', '--endpoint', 'bytes'])).secret).toBe(secret);

    // Not UTF-8, with a NUL and bytes a JSON round trip would mangle; then JSON with odd spacing.
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x7b, 0x22, 0xc3, 0x28, 0x0a, 0x0d]);
    const json = Buffer.from('{ "type" : "order.created",\n  "amount":1.50e2 }');
    const binaryId = await ingest(`${ready.ingest_url}/stripe?account=7`, binary, { 'content-type': 'application/octet-stream', 'x-custom': 'kept' });
    const jsonId = await ingest(ready.ingest_url, json);

    const [first, second] = await server.waitFor(2);
    const byId = new Map([first!, second!].map((request) => [request.headers['webhook-id'], request]));
    const binaryRequest = byId.get(binaryId)!;
    const jsonRequest = byId.get(jsonId)!;
    expect(binaryRequest.method).toBe('POST');
    expect(binaryRequest.url).toBe('/stripe?account=7');
    expect(binaryRequest.body.equals(binary)).toBe(true);
    expect(binaryRequest.headers['content-type']).toBe('application/octet-stream');
    expect(binaryRequest.headers['content-length']).toBe(String(binary.length));
    expect(binaryRequest.headers['x-custom']).toBe('kept');
    expect(binaryRequest.headers['x-hook-event-id']).toBe(binaryId);
    expect(jsonRequest.url).toBe('/');
    expect(jsonRequest.body.equals(json)).toBe(true);
    for (const request of [binaryRequest, jsonRequest]) {
      expect(verifyWebhook(request.body, request.headers as Record<string, string>, secret).id).toBe(request.headers['webhook-id']);
    }

    const lines = await eventually(async () => hook.jsonLines().filter((line) => line.type === 'delivery'), (found) => found.length === 2, 10_000, 'two delivery lines');
    const binaryLine = lines.find((line) => line.event_id === binaryId);
    expect(binaryLine).toMatchObject({ status: 200, error: null, method: 'POST', url: `http://127.0.0.1:${server.port}/stripe?account=7`, reported: true, attempt: 1 });
    expect(typeof binaryLine.duration_ms).toBe('number');

    const delivered = await eventually(() => event(binaryId), (found) => found.status === 'delivered', 10_000, 'delivered');
    expect(delivered.attempts).toHaveLength(1);
    expect(delivered.attempts[0]).toMatchObject({ trigger: 'listen', response_status: 200, response_body: 'local answer 200' });
    expect((await hook.stop('SIGINT')).code).toBe(0);
  });

  it('prints the ingest URL and secret on stderr and one line per delivery on stdout for a person, --path replacing the path', async () => {
    const server = await local();
    const hook = startHook(user, ['listen', String(server.port), '--endpoint', 'human', '--path', '/webhooks']);
    await hook.waitForStderr((line) => line.startsWith('Connected.'));
    const ingestLine = hook.stderrLines.find((line) => line.startsWith('Ingest URL:'))!;
    expect(hook.stderrLines.find((line) => line.startsWith('Secret:'))).toMatch(/whsec_/);
    const ingestUrl = ingestLine.split(/\s+/)[2]!;
    const id = await ingest(`${ingestUrl}/github`, '{"a":1}');
    const line = await hook.waitForStdout((text) => text.includes(id));
    expect(line).toMatch(new RegExp(`^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z  200  POST /webhooks/github  \\d+ ms  ${id}  -$`));
    expect(server.requests[0]!.url).toBe('/webhooks/github');
    const exit = await hook.stop('SIGTERM');
    expect(exit.code).toBe(0);
    expect(hook.stderrLines.at(-1)).toBe('Stopped.');
  });

  it('marks the event retrying while the local server is down or failing, and delivers it once the server is back', async () => {
    const port = await freePort();
    const { hook, ready } = await listen([String(port), '--endpoint', 'flaky']);
    const id = await ingest(ready.ingest_url, '{"n":1}');
    const refused = await hook.waitForJson((line) => line.type === 'delivery' && line.event_id === id);
    expect(refused).toMatchObject({ status: null, error: expect.stringContaining('connection refused') });
    const retrying = await eventually(() => event(id), (found) => found.attempts.length >= 1, 10_000, 'a recorded attempt');
    expect(retrying.status).toBe('retrying');
    expect(retrying.attempts[0]).toMatchObject({ trigger: 'listen', response_status: null, error: expect.stringContaining('connection refused') });

    // Up, but answering 500: still a failure.
    const server = await local(port, 500);
    await server.waitFor(1);
    await eventually(() => event(id), (found) => found.attempts.some((attempt: any) => attempt.response_status === 500), 10_000, 'a 500 attempt');
    expect((await event(id)).status).toBe('retrying');

    server.status = 200;
    const delivered = await eventually(() => event(id), (found) => found.status === 'delivered', 15_000, 'delivered');
    expect(delivered.attempts.at(-1)).toMatchObject({ response_status: 200, trigger: 'listen' });
    expect(server.requests.every((request) => request.headers['webhook-id'] === id)).toBe(true);
    await hook.stop();
  });

  it('forwards events that arrived while nobody listened, oldest first, and --skip-missed leaves them', async () => {
    const created = await user.json(['endpoints', 'create', 'missed']);
    const sent: string[] = [];
    for (let n = 0; n < 4; n++) sent.push(await ingest(created.url, JSON.stringify({ n })));
    const server = await local();
    const { hook, ready } = await listen([String(server.port), '--endpoint', 'missed']);
    expect(ready.created).toBe(false);
    await server.waitFor(4);
    expect(server.requests.map((request) => request.headers['webhook-id'])).toEqual(sent);
    await hook.stop();

    const skipping = await user.json(['endpoints', 'create', 'skipping']);
    const old = [await ingest(skipping.url, '{"old":1}'), await ingest(skipping.url, '{"old":2}')];
    const skipServer = await local();
    const skip = await listen([String(skipServer.port), '--endpoint', skipping.id, '--skip-missed']);
    const fresh = await ingest(skipping.url, '{"new":1}');
    await skipServer.waitFor(1);
    // The session looks for due work every second, from the start of its backlog: once a poll
    // begun after the fresh event arrived has ended, whatever it would take has been taken.
    const polls = collectSignals<ListenSessionSignal>(LISTEN_SESSION_CHANNEL);
    try {
      const first = await polls.waitFor((signal) => signal.kind === 'claimed' && signal.fromStart, 10_000);
      await polls.waitFor((signal, index) => index > polls.seen.indexOf(first) && signal.kind === 'claimed' && signal.fromStart, 10_000);
    } finally {
      polls.stop();
    }
    for (const signal of polls.seen) if (signal.kind === 'claimed') expect(signal.eventIds.filter((id) => old.includes(id))).toEqual([]);
    expect(skipServer.requests.map((request) => request.headers['webhook-id'])).toEqual([fresh]);
    for (const id of old) expect((await event(id)).status).toBe('pending');
    await skip.hook.stop();
  });

  it('gives every event to each of two listeners on one endpoint', async () => {
    const a = await local();
    const b = await local();
    const first = await listen([String(a.port), '--endpoint', 'shared']);
    const second = await listen([String(b.port), '--endpoint', 'shared']);
    expect(second.ready.endpoint.id).toBe(first.ready.endpoint.id);
    const ids = [await ingest(first.ready.ingest_url, '{"x":1}'), await ingest(first.ready.ingest_url, '{"x":2}')];
    await a.waitFor(2);
    await b.waitFor(2);
    expect(new Set(a.requests.map((request) => request.headers['webhook-id']))).toEqual(new Set(ids));
    expect(new Set(b.requests.map((request) => request.headers['webhook-id']))).toEqual(new Set(ids));
    await Promise.all([first.hook.stop(), second.hook.stop()]);
  });

  it('mirrors an endpoint with a URL destination: its own delivery decides the status, the local answer is not recorded', async () => {
    const destination: Receiver = await startReceiver();
    servers.push(destination);
    const endpoint = await user.json(['endpoints', 'create', 'mirrored', '--destination', destination.url]);
    const server = await local(undefined, 500);
    const { hook, ready } = await listen([String(server.port), '--endpoint', 'mirrored']);
    expect(ready).toMatchObject({ mirror: true, created: false });
    expect(ready.endpoint.id).toBe(endpoint.id);
    const body = '{"mirror":true}';
    const sessions = collectSignals<ListenSessionSignal>(LISTEN_SESSION_CHANNEL);
    const id = await ingest(endpoint.url, body);
    await server.waitFor(1);
    await destination.waitFor(1);
    expect(server.requests[0]!.body.toString()).toBe(body);
    expect(server.requests[0]!.headers['webhook-id']).toBe(id);
    const stored = await eventually(() => event(id), (found) => found.status === 'delivered', 10_000, 'delivered by the relay');
    await hook.waitForJson((line) => line.type === 'delivery' && line.event_id === id && line.status === 500);
    // The session took the listener's answer (500) for a mirror copy's, which records nothing.
    try {
      await sessions.waitFor((signal) => signal.kind === 'result', 10_000);
    } finally {
      sessions.stop();
    }
    expect(sessions.seen.filter((signal) => signal.kind === 'result').map((signal) => signal.kind === 'result' && signal.as)).toEqual(['mirror']);
    expect((await event(id)).attempts.map((attempt: any) => attempt.trigger)).toEqual(['auto']);
    expect(stored.status).toBe('delivered');
    await hook.stop();
  });

  it('exits 0 on Ctrl-C and 1 with the relay\'s problem for an unknown endpoint id or a bad key', async () => {
    const server = await local();
    const { hook } = await listen([String(server.port), '--endpoint', 'quits']);
    expect((await hook.stop('SIGINT')).code).toBe(0);

    const unknown = await user.run(['listen', String(server.port), '--endpoint', 'ep_00000000000000000000000000', '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr.trim().split('\n').at(-1)!)).toMatchObject({ code: 'endpoint_not_found' });
    expect(unknown.stdout).toBe('');

    const badKey = await user.run(['listen', String(server.port), '--api-key', 'hk_not_a_real_key']);
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toMatch(/^Error: .*\(invalid_api_key\)/m);
  });

  it('exits 2 for a bad command line', async () => {
    expect((await user.run(['listen'])).code).toBe(2);
    expect((await user.run(['listen', 'not-a-port'])).code).toBe(2);
    expect((await user.run(['listen', '3000', '--max-in-flight', '0'])).code).toBe(2);
    expect((await user.run(['listen', '3000', '--path', 'no-slash'])).code).toBe(2);
  });
});
