/**
 * What becomes of deliveries whose destination goes away or is paused (issue 28, items 4
 * and 5), with the real `hook` binary, real receivers and a real relay:
 *
 * - a delivery still retrying when its destination is deleted is `failed` (nothing will
 *   ever move it again), so the event is `failed`: in `hook events get/list`, the REST
 *   API, the live stream and after a replay to its other destination (a relay process);
 * - a paused endpoint or `cli` destination holds its deliveries from `hook listen` as it
 *   does from the workers, and resuming it hands them to the listener at once (a relay
 *   whose listen sessions poll only once a minute, so only the resume can wake them).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LISTEN_SESSION_CHANNEL, type ListenSessionSignal } from '@hook/relay';
import type { TestDatabase } from '@hook/db/testing';
import { HookUser } from '../support/cli.ts';
import { freshDatabase } from '../support/database.ts';
import { eventually, startHook, startLocalServer, stopAllHookProcesses, type LocalServer } from '../support/hook-process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startRelayProcess, stopRelayProcesses, type RelayProcess } from '../support/relay-process.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { collectSignals } from '../support/signals.ts';

describe('deleting a destination whose delivery is retrying', () => {
  let database: TestDatabase;
  let relay: RelayProcess;
  let ok: Receiver;
  let failing: Receiver;
  const user = new HookUser();
  let key = '';

  beforeAll(async () => {
    database = await freshDatabase();
    // One retry an hour: the 500 leaves its delivery retrying until the destination is deleted.
    relay = await startRelayProcess(database.url, { HOOK_RETRY_SCHEDULE: '1h,1h' });
    ok = await startReceiver(() => ({ status: 200 }));
    failing = await startReceiver(() => ({ status: 500 }));
    key = (await user.json(['signup', '--api-url', relay.baseUrl])).api_key;
    await user.json(['account', 'plan', 'pro']);
  }, 60_000);

  afterAll(async () => {
    await stopAllHookProcesses();
    await ok?.close();
    await failing?.close();
    if (relay) await stopRelayProcesses([relay.child]);
    await database?.drop();
    user.remove();
  });

  /** An endpoint delivering to `ok` and to `failing`, and an event that reached the first and is retrying to the second. */
  async function retryingEvent(name: string): Promise<{ id: string; okId: string; failingId: string }> {
    await user.json(['endpoints', 'create', name, '--destination', ok.url]);
    const okId = (await user.json(['destinations', 'list', name])).data[0].id;
    const failingId = (await user.json(['destinations', 'add', name, '--url', failing.url])).id;
    const { id } = await user.json(['send', name, '--data', '{"type":"order.created"}']);
    await eventually(() => user.json(['events', 'get', id]), (event) => event.status === 'retrying' && event.attempt_count === 2, 15_000, 'the event retrying');
    return { id, okId, failingId };
  }

  it('makes the event failed everywhere it is shown, with the delivery saying its destination was deleted', async () => {
    const { id, okId, failingId } = await retryingEvent('two-ways');
    expect((await user.json(['events', 'list', '--status', 'retrying'])).data.map((event: { id: string }) => event.id)).toEqual([id]);

    expect((await user.run(['destinations', 'delete', failingId])).code).toBe(0);

    const event = await user.json(['events', 'get', id]);
    expect(event).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(event.deliveries).toEqual([
      expect.objectContaining({ destination_id: okId, status: 'delivered', destination_deleted_at: null }),
      expect.objectContaining({ destination_id: failingId, status: 'failed', next_attempt_at: null, destination_deleted_at: expect.any(String) }),
    ]);
    const shown = await user.run(['events', 'get', id]);
    expect(shown.stdout).toMatch(new RegExp(`^${failingId} +\\S+ \\(deleted\\) +failed +1 +-`, 'm'));
    expect((await user.json(['events', 'list', '--status', 'retrying'])).data).toEqual([]);
    expect((await user.json(['events', 'list', '--status', 'failed'])).data).toEqual([expect.objectContaining({ id, status: 'failed', next_attempt_at: null })]);
    const rest = await fetch(`${relay.baseUrl}/v1/events?status=retrying,pending`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await rest.json()) as { data: unknown[] }).data).toEqual([]);

    // A replay to the destination that is left: the delivery and the stream both say what the event now is.
    const tail = startHook(user, ['events', 'tail', '--json']);
    await tail.waitForStderr((line) => line.includes('"state":"open"'));
    const replayed = await user.run(['events', 'replay', id, '--destination', okId]);
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toContain('status now delivered; the event is failed');
    const [finished] = await eventually(
      async () => tail.jsonLines().filter((line) => line.type === 'attempt.finished' && line.event_id === id),
      (lines) => lines.length === 1, 10_000, 'the replay on the stream');
    expect(finished).toMatchObject({ status: 'delivered', event_status: 'failed' });
    expect((await user.json(['events', 'get', id])).status).toBe('failed');
  });

  it('does the same for every delivery of a deleted endpoint', async () => {
    const { id } = await retryingEvent('deleted-whole');
    expect((await user.run(['endpoints', 'delete', 'deleted-whole'])).code).toBe(0);
    const event = await user.json(['events', 'get', id]);
    expect(event).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(event.deliveries.map((delivery: { status: string }) => delivery.status)).toEqual(['delivered', 'failed']);
  });
});

describe('hook listen on a paused endpoint or destination', () => {
  let relay: TestRelay;
  const user = new HookUser();
  let server: LocalServer;

  beforeAll(async () => {
    // Listen sessions claim on their own only once a minute: a delivery that arrives sooner was handed over or woken.
    relay = await startTestRelay({ allowPrivateDestinations: true }, { workerPollMs: 20, listenPollIntervalMs: 60_000 });
    await user.json(['signup', '--api-url', relay.baseUrl]);
  });

  afterEach(async () => {
    await stopAllHookProcesses();
    await server?.close();
  });

  afterAll(async () => {
    await relay?.close();
    user.remove();
  });

  /**
   * Sends an event while the listener's endpoint or destination is paused: the session claims
   * at the event it is told of (its poll comes only once a minute here), and takes nothing.
   * The event stays pending and the local server gets nothing.
   */
  async function sendHeld(endpoint: string): Promise<string> {
    const sessions = collectSignals<ListenSessionSignal>(LISTEN_SESSION_CHANNEL);
    try {
      const { id } = await user.json(['send', endpoint, '--data', '{"type":"while.paused"}']);
      const claimed = await sessions.waitFor((signal) => signal.kind === 'claimed', 10_000);
      expect(claimed).toMatchObject({ kind: 'claimed', eventIds: [] });
      expect(server.requests).toHaveLength(0);
      expect((await user.json(['events', 'get', id])).status).toBe('pending');
      return id;
    } finally {
      sessions.stop();
    }
  }

  it('holds an event for a paused endpoint and hands it to the listener as soon as it is resumed', async () => {
    server = await startLocalServer();
    const listen = startHook(user, ['listen', String(server.port), '--endpoint', 'held', '--json']);
    await listen.waitForJson((line) => line.type === 'ready');
    expect((await user.run(['endpoints', 'update', 'held', '--pause'])).code).toBe(0);

    const id = await sendHeld('held');

    expect((await user.run(['endpoints', 'update', 'held', '--resume'])).code).toBe(0);
    const [request] = await server.waitFor(1, 10_000);
    expect(request!.headers['webhook-id']).toBe(id);
    await eventually(() => user.json(['events', 'get', id]), (event) => event.status === 'delivered', 10_000, 'the event delivered');
  });

  it('holds an event for a paused cli destination, and resuming the destination hands it over at once', async () => {
    server = await startLocalServer();
    const listen = startHook(user, ['listen', String(server.port), '--endpoint', 'held-destination', '--json']);
    const ready = await listen.waitForJson((line) => line.type === 'ready');
    const destinationId = ready.endpoint.destinations[0].id;
    expect((await user.json(['destinations', 'update', destinationId, '--status', 'paused'])).status).toBe('paused');

    const id = await sendHeld('held-destination');

    expect((await user.json(['destinations', 'update', destinationId, '--status', 'active'])).status).toBe('active');
    const [request] = await server.waitFor(1, 10_000);
    expect(request!.headers['webhook-id']).toBe(id);
  });
});
