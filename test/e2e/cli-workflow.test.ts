/**
 * The `hook` binary against a real relay, as a user drives it: sign up, create an
 * endpoint, send events, read them back byte for byte, change and delete endpoints,
 * replay. Checks both the --json documents (their documented fields) and the text a
 * person reads.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let receiver: Receiver;
const user = new HookUser();

beforeAll(async () => {
  relay = await startTestRelay({ allowPrivateDestinations: true }, { workerPollMs: 20 });
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await relay?.close();
  user.remove();
});

describe('hook signup and whoami', () => {
  it('creates an account, saves key and relay URL in the profile, and whoami uses them', async () => {
    const signup = await user.json(['signup', '--api-url', relay.baseUrl]);
    expect(Object.keys(signup).sort()).toEqual(['account', 'api_key']);
    expect(signup.account).toMatchObject({ id: expect.stringMatching(/^acct_/), plan: 'free' });
    expect(signup.api_key).toMatch(/^hk_/);
    expect(JSON.parse(readFileSync(user.configPath, 'utf8'))).toEqual({ profiles: { default: { api_url: relay.baseUrl, api_key: signup.api_key } } });

    const whoami = await user.json(['whoami']);
    expect(whoami).toEqual({
      account: signup.account,
      api_url: relay.baseUrl,
      api_url_source: 'profile',
      profile: 'default',
      api_key_prefix: signup.api_key.slice(0, 11),
      api_key_source: 'profile',
    });
    const text = await user.run(['whoami']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Account:  ${signup.account.id}`);
    expect(text.stdout).toContain(`${relay.baseUrl} (from profile)`);
    expect(text.stdout).not.toContain(signup.api_key);
  });

  it('prints the new key for a person, and says where it was saved on stderr', async () => {
    const other = new HookUser();
    try {
      const result = await other.run(['signup', '--api-url', relay.baseUrl]);
      expect(result.code).toBe(0);
      const saved = JSON.parse(readFileSync(other.configPath, 'utf8')).profiles.default;
      expect(result.stdout).toContain(`API key:  ${saved.api_key}`);
      expect(result.stderr).toContain(`Saved the API key in profile 'default' (${other.configPath})`);
    } finally {
      other.remove();
    }
  });
});

describe('endpoints, send and events', () => {
  let endpoint: any;
  let fileEventId = '';
  const fileBody = '{"b":  1,\n "a": [1,2 ,3],   "text": "é ✓ \\u00e9"}\n\n';

  it('creates an endpoint that holds events for hook listen', async () => {
    const { default: isDefault, ...created } = await user.json(['endpoints', 'create', 'orders']);
    expect(isDefault).toBe(true); // the profile's first endpoint is the one hook listen forwards
    endpoint = created;
    expect(endpoint).toMatchObject({ id: expect.stringMatching(/^ep_/), name: 'orders', status: 'active', destination: { type: 'cli' } });
    expect(endpoint.url).toMatch(new RegExp(`^${relay.baseUrl}/v1/ingest/`));
    expect(Object.keys(endpoint).sort()).toEqual(['created_at', 'dedupe', 'destination', 'destinations', 'filter', 'handshake', 'id', 'name', 'response', 'status', 'transformation', 'updated_at', 'url', 'verification']);
    expect(endpoint.destinations).toEqual([expect.objectContaining({ id: expect.stringMatching(/^dst_/), endpoint_id: endpoint.id, destination: { type: 'cli' }, status: 'active' })]);
  });

  it('sends a file byte for byte; events list and get show exactly those bytes', async () => {
    const file = join(user.home, 'payload.json');
    writeFileSync(file, fileBody);
    const sent = await user.json(['send', 'orders', '--data', `@${file}`, '--type', 'order.created', '-H', 'x-custom: yes', '-H', 'X-Custom: again']);
    expect(sent).toEqual({ id: expect.stringMatching(/^evt_/), status: 'pending', endpoint_id: endpoint.id });
    fileEventId = sent.id;

    const page = await user.json(['events', 'list', '--endpoint', 'orders']);
    expect(Object.keys(page).sort()).toEqual(['data', 'next_cursor']);
    expect(page.data[0]).toMatchObject({ id: sent.id, endpoint_id: endpoint.id, type: 'order.created', status: 'pending', size: Buffer.byteLength(fileBody) });

    const event = await user.json(['events', 'get', sent.id]);
    expect(event.body).toBe(fileBody);
    expect(event).toMatchObject({ body_encoding: 'utf8', content_type: 'application/json', method: 'POST', type: 'order.created' });
    expect(event.headers).toMatchObject({ 'x-custom': 'yes, again', 'x-event-type': 'order.created' });

    const raw = await user.run(['events', 'get', sent.id, '--body']);
    expect(raw.code).toBe(0);
    expect(raw.stdoutBytes.equals(Buffer.from(fileBody))).toBe(true);
  });

  it('shows an event to a person: headers, the JSON body pretty-printed, attempts', async () => {
    const result = await user.run(['events', 'get', fileEventId]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Id: +${fileEventId}$`, 'm'));
    expect(result.stdout).toMatch(/^x-custom: +yes, again$/m);
    expect(result.stdout).toContain(`Body (application/json, ${Buffer.byteLength(fileBody)} B)`);
    // Indented for reading, each value as it was sent (the escape stays one).
    expect(result.stdout).toContain('{\n  "b": 1,\n  "a": [\n    1,\n    2,\n    3\n  ],\n  "text": "é ✓ \\u00e9"\n}\n');
    expect(result.stdout).toContain('Attempts\nNo attempts yet.');

    const list = await user.run(['events', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID +RECEIVED +TYPE +STATUS +ATTEMPTS +LAST +SIZE +ENDPOINT$/);
    expect(list.stdout).toMatch(new RegExp(`^${fileEventId} +\\S+ +order\\.created +pending +0 +- +\\d+ B +${endpoint.name}$`, 'm')); // endpoints by name
  });

  it('sends stdin\'s bytes as they are, binary included', async () => {
    const binary = Buffer.from([0x00, 0xff, 0xfe, 0x41, 0x0a, 0x80]);
    const sent = await user.json(['send', endpoint.id, '--data', '-', '-H', 'content-type: application/octet-stream'], { input: binary });
    const event = await user.json(['events', 'get', sent.id]);
    expect(event.body_encoding).toBe('base64');
    expect(Buffer.from(event.body, 'base64').equals(binary)).toBe(true);
    expect(event.content_type).toBe('application/octet-stream');
    const shown = await user.run(['events', 'get', sent.id]);
    expect(shown.stdout).toContain('not UTF-8 text, shown as base64');
    expect(shown.stdout).toContain(binary.toString('base64'));
  });

  it('sends a JSON test event by default, and --data text, method and path as given', async () => {
    const sample = await user.json(['send', 'orders']);
    const sampleEvent = await user.json(['events', 'get', sample.id]);
    expect(JSON.parse(sampleEvent.body)).toMatchObject({ type: 'hook.test' });
    expect(sampleEvent).toMatchObject({ type: 'hook.test', content_type: 'application/json' });

    const put = await user.json(['send', 'orders', '--data', '{"type":"push" ,"n":1}', '-X', 'put', '--path', '/github/push?delivery=7']);
    const putEvent = await user.json(['events', 'get', put.id]);
    expect(putEvent).toMatchObject({ method: 'PUT', path: '/github/push', query: 'delivery=7', body: '{"type":"push" ,"n":1}', type: 'push' });
    // What the help says of the type is what the relay stored: the body's "type" field without --type.
    const help = (await user.run(['send', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('--type (the x-event-type header) if given, else the JSON body\'s top-level "type" field');

    const text = await user.run(['send', 'orders', '--data', 'not json']);
    expect(text.code).toBe(0);
    expect(text.stderr).toContain('the body is not valid JSON');
    expect(text.stdout).toMatch(/^Sent evt_\S+ to orders \(ep_\S+\): pending, 8 bytes\.$/m);
  });

  it('lists, gets (by name or id), updates, rotates and deletes endpoints', async () => {
    const list = await user.json(['endpoints', 'list']);
    expect(list).toEqual({ data: [{ ...endpoint, default: true }], next_cursor: null });
    const table = await user.run(['endpoints', 'list']);
    expect(table.stdout).toMatch(new RegExp(`^${endpoint.id} +orders \\(default\\) +active +${endpoint.url} +cli$`, 'm'));
    expect(await user.json(['endpoints', 'get', 'orders'])).toEqual(endpoint);
    expect(await user.json(['endpoints', 'get', endpoint.id])).toEqual(endpoint);

    // The waiting events go to the new destination.
    const waiting = (await user.json(['events', 'list', '--endpoint', 'orders', '--status', 'pending'])).data.length;
    const updated = await user.json(['endpoints', 'update', 'orders', '--destination', receiver.url, '--name', 'orders-v2']);
    expect(updated).toMatchObject({ id: endpoint.id, name: 'orders-v2', destination: { type: 'url', url: receiver.url } });
    await receiver.waitFor(waiting);

    expect((await user.json(['endpoints', 'update', 'orders-v2', '--pause'])).status).toBe('paused');
    expect((await user.json(['endpoints', 'update', endpoint.id, '--resume'])).status).toBe('active');
    expect((await user.json(['endpoints', 'update', endpoint.id, '--cli'])).destination).toEqual({ type: 'cli' });

    const secret = await user.json(['endpoints', 'secret', 'orders-v2']);
    expect(secret).toEqual({ secret: expect.stringMatching(/^whsec_/), previous_secret: null, previous_secret_expires_at: null, public_key: null, previous_public_key: null });
    const rotated = await user.json(['endpoints', 'rotate-secret', 'orders-v2']);
    expect(rotated).toMatchObject({ previous_secret: secret.secret, previous_secret_expires_at: expect.any(String) });
    expect(rotated.secret).not.toBe(secret.secret);

    const deleted = await user.json(['endpoints', 'delete', 'orders-v2']);
    expect(deleted).toEqual({ id: endpoint.id, deleted: true });
    const gone = await user.run(['endpoints', 'get', endpoint.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`No endpoint '${endpoint.id}'`);
  });
});

describe('hook events replay', () => {
  let eventId = '';

  it('replays one event now and exits 0 when it is delivered', async () => {
    await user.json(['endpoints', 'create', 'replays', '--destination', receiver.url]);
    const before = receiver.requests.length;
    eventId = (await user.json(['send', 'replays', '--data', '{"type":"again"}'])).id;
    await receiver.waitFor(before + 1);
    // The receiver has it a moment before the attempt is recorded; until then a replay is refused (event_in_flight).
    for (let tries = 0; (await user.json(['events', 'get', eventId])).status !== 'delivered'; tries++) {
      if (tries > 50) throw new Error('the first delivery was never recorded');
    }

    const replayed = await user.json(['events', 'replay', eventId]);
    expect(replayed.id).toBe(eventId);
    expect(replayed.attempts.at(-1)).toMatchObject({ trigger: 'replay', response_status: 200 });
    expect(replayed.replay).toEqual([{ destination_id: replayed.deliveries[0].destination_id, outcome: 'attempted' }]);
    const text = await user.run(['events', 'replay', eventId]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Replayed ${eventId} to ${replayed.deliveries[0].destination_id} (${receiver.url}): attempt #3 answered 200 in `);
    expect(text.stdout).toMatch(/ ms; status now delivered$/m);
  });

  it('exits 1 when the replay attempt fails, with the event on stdout and the error on stderr', async () => {
    receiver.respond = () => ({ status: 500, body: 'receiver broke' });
    try {
      const result = await user.run(['events', 'replay', eventId, '--json']);
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout)).toMatchObject({ id: eventId, status: 'failed' });
      expect(JSON.parse(result.stderr)).toMatchObject({ code: 'replay_failed', detail: expect.stringContaining('answered 500') });
    } finally {
      receiver.respond = () => ({ status: 200 });
    }
  });

  it('queues a bulk replay of an endpoint\'s failing events and says how many', async () => {
    const before = receiver.requests.length;
    const result = await user.json(['events', 'replay', '--endpoint', 'replays', '--since', '1h']);
    expect(result).toEqual({ replayed: 1, deliveries: 1, waiting_for_listener: 0, limit: 10_000, status: ['failed', 'retrying'] });
    await receiver.waitFor(before + 1);

    const none = await user.run(['events', 'replay', '--endpoint', 'replays', '--status', 'failed']);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('Queued 0 events (0 deliveries, 0 for `hook listen`) for replay (status failed, endpoint replays).\n');
  });
});
