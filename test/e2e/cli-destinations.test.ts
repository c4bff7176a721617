/**
 * `hook destinations` and replay per destination, with the real `hook` binary against a
 * real relay and real receivers: an endpoint fans out to two URLs, each signed with its
 * own secret; a destination is paused, resumed and deleted; a cli-only event is replayed.
 */
import { verifyWebhook, WebhookVerificationError } from '@hook/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let first: Receiver;
let second: Receiver;
const user = new HookUser();
let firstId = '';
let secondId = '';

beforeAll(async () => {
  relay = await startTestRelay({ allowPrivateDestinations: true }, { workerPollMs: 20 });
  first = await startReceiver();
  second = await startReceiver();
  await user.json(['signup', '--api-url', relay.baseUrl]);
  await user.json(['endpoints', 'create', 'fanout', '--destination', first.url]);
});

afterAll(async () => {
  await first?.close();
  await second?.close();
  await relay?.close();
  user.remove();
});

/** Each delivery's status of an event, by destination id. */
async function deliveryStatuses(eventId: string): Promise<Record<string, string>> {
  const event = await user.json(['events', 'get', eventId]);
  return Object.fromEntries(event.deliveries.map((delivery: { destination_id: string; status: string }) => [delivery.destination_id, delivery.status]));
}

describe('hook destinations', () => {
  it('adds a URL destination; an event reaches both, each signed with its own destination\'s secret', async () => {
    const added = await user.json(['destinations', 'add', 'fanout', '--url', second.url, '--max-in-flight', '4']);
    expect(added).toMatchObject({ id: expect.stringMatching(/^dst_/), destination: { type: 'url', url: second.url }, status: 'active', max_in_flight: 4, rate_per_second: null });
    secondId = added.id;

    const listed = await user.json(['destinations', 'list', 'fanout']);
    expect(listed.data.map((destination: { destination: unknown }) => destination.destination)).toEqual([{ type: 'url', url: first.url }, { type: 'url', url: second.url }]);
    firstId = listed.data[0].id;
    const shown = await user.run(['endpoints', 'get', 'fanout']);
    expect(shown.stdout).toMatch(new RegExp(`^${firstId} +\\S+ +active +ok`, 'm'));
    expect(shown.stdout).toMatch(new RegExp(`^${secondId} +\\S+ +active +ok +4 in flight$`, 'm'));

    const firstSecret = (await user.json(['destinations', 'secret', firstId])).secret;
    const secondSecret = (await user.json(['destinations', 'secret', secondId])).secret;
    expect(firstSecret).not.toBe(secondSecret);
    expect((await user.json(['endpoints', 'secret', 'fanout'])).secret).toBe(firstSecret);

    const sent = await user.json(['send', 'fanout', '--data', '{"type":"fan.out"}']);
    const [toFirst] = await first.waitFor(1);
    const [toSecond] = await second.waitFor(1);
    for (const request of [toFirst!, toSecond!]) expect(request.body.toString()).toBe('{"type":"fan.out"}');
    expect(toFirst!.headers['webhook-signature']).not.toBe(toSecond!.headers['webhook-signature']);
    expect(verifyWebhook(toFirst!.body, toFirst!.headers as Record<string, string>, firstSecret).id).toBe(sent.id);
    expect(verifyWebhook(toSecond!.body, toSecond!.headers as Record<string, string>, secondSecret).id).toBe(sent.id);
    expect(() => verifyWebhook(toSecond!.body, toSecond!.headers as Record<string, string>, firstSecret)).toThrow(WebhookVerificationError);

    await expect.poll(() => deliveryStatuses(sent.id), { timeout: 10_000 }).toEqual({ [firstId]: 'delivered', [secondId]: 'delivered' });
    const event = await user.run(['events', 'get', sent.id]);
    expect(event.stdout).toMatch(new RegExp(`^${firstId} +${first.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} +delivered +1`, 'm'));
    expect(event.stdout).toMatch(new RegExp(`^${secondId} +\\S+ +delivered +1`, 'm'));
  });

  it('pauses a destination: its deliveries wait while the other gets them, and go out once it is active again', async () => {
    const paused = await user.json(['destinations', 'update', secondId, '--status', 'paused', '--rate', '50']);
    expect(paused).toMatchObject({ id: secondId, status: 'paused', rate_per_second: 50, disabled_reason: null });
    expect((await user.run(['destinations', 'list', 'fanout'])).stdout).toMatch(new RegExp(`^${secondId} +\\S+ +paused +ok +50/s, 4 in flight$`, 'm'));

    const sent = await user.json(['send', 'fanout', '--data', '{"type":"while.paused"}']);
    await first.waitFor(2);
    await expect.poll(() => deliveryStatuses(sent.id), { timeout: 10_000 }).toEqual({ [firstId]: 'delivered', [secondId]: 'pending' });
    expect(second.requests).toHaveLength(1);

    const resumed = await user.json(['destinations', 'update', secondId, '--status', 'active', '--rate', 'none', '--max-in-flight', 'none']);
    expect(resumed).toMatchObject({ status: 'active', rate_per_second: null, max_in_flight: null });
    const [, held] = await second.waitFor(2);
    expect(held!.body.toString()).toBe('{"type":"while.paused"}');
  });

  it('deletes a destination, but not an endpoint\'s last one (last_destination, exit 1)', async () => {
    const deleted = await user.run(['destinations', 'delete', secondId]);
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toBe(`Deleted destination ${secondId}. It gets no more deliveries; its attempts stay in the history.\n`);
    expect((await user.json(['destinations', 'list', 'fanout'])).data.map((destination: { id: string }) => destination.id)).toEqual([firstId]);

    const last = await user.run(['destinations', 'delete', firstId]);
    expect(last.code).toBe(1);
    expect(last.stderr).toContain('(last_destination)');
    const lastJson = await user.run(['destinations', 'delete', firstId, '--json']);
    expect(lastJson.code).toBe(1);
    expect(JSON.parse(lastJson.stderr)).toMatchObject({ code: 'last_destination', status: 409 });
    expect((await user.json(['destinations', 'list', 'fanout'])).data).toHaveLength(1);
  });

  it('refuses a command line that says nothing, or not a destination id (exit 2)', async () => {
    const nowhere = await user.run(['destinations', 'add', 'fanout']);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('--url <url>');
    const notAnId = await user.run(['destinations', 'update', 'ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', '--status', 'paused']);
    expect(notAnId.code).toBe(2);
    expect(notAnId.stderr).toContain('must be a destination id');
    const unknown = await user.run(['destinations', 'update', 'dst_00000000000000000000000000', '--status', 'paused', '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ code: 'destination_not_found' });
  });
});

describe('hook events replay to a `hook listen` destination', () => {
  it('says the event waits for the next listener, and exits 0', async () => {
    const endpoint = await user.json(['endpoints', 'create', 'listened']);
    const destinationId = endpoint.destinations[0].id;
    const sent = await user.json(['send', 'listened', '--data', '{"type":"for.listen"}']);

    const replayed = await user.run(['events', 'replay', sent.id]);
    expect(replayed.stderr).toBe('');
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toBe(`Replayed ${sent.id} to ${destinationId} (cli): waiting for the next \`hook listen\`\n`);

    const asJson = await user.json(['events', 'replay', sent.id, '--destination', destinationId]);
    expect(asJson.replay).toEqual([{ destination_id: destinationId, outcome: 'waiting_for_listener' }]);
    expect(asJson.deliveries).toEqual([expect.objectContaining({ destination_id: destinationId, destination: { type: 'cli' }, next_trigger: 'replay' })]);
  });
});
