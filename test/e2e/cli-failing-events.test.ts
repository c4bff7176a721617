/**
 * What an agent means by "what is failing", with the real `hook` binary against a real
 * relay and a real receiver that answers 500: a failing event is `retrying` until its
 * retries run out, so `--status` takes several statuses and bulk replay takes the failing
 * ones (failed or retrying) by default, and says which statuses it took.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { eventually } from '../support/hook-process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let failing: Receiver;
const user = new HookUser();
const sent: string[] = [];

beforeAll(async () => {
  // One retry an hour: a failed first attempt leaves the event retrying for the whole file.
  relay = await startTestRelay({ allowPrivateDestinations: true, retryScheduleMs: [3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000] }, { workerPollMs: 20 });
  failing = await startReceiver(() => ({ status: 500 }));
  await user.json(['signup', '--api-url', relay.baseUrl]);
  await user.json(['endpoints', 'create', 'orders', '--destination', failing.url]);
  for (const n of [1, 2]) sent.push((await user.json(['send', 'orders', '--data', JSON.stringify({ type: 'order.created', n })])).id);
  await failing.waitFor(2);
  await eventually(async () => (await user.json(['events', 'list', '--endpoint', 'orders'])).data.map((event: any) => event.status).join(), (statuses) => statuses === 'retrying,retrying', 10_000, 'both events retrying');
});

afterAll(async () => {
  await failing?.close();
  await relay?.close();
  user.remove();
});

describe('failing events', () => {
  it('are found by --status failed,retrying (what the top-level help suggests), and by each status alone as it is', async () => {
    // The help shows each example's command line, then what it does on the next line.
    const help = (await user.run(['--help'])).stdout.split('\n');
    const example = help[help.findIndex((line) => line.includes('see what is failing')) - 1]!;
    const found = await user.json(example.trim().replace(/^\$ hook /, '').split(' '));
    expect(found.data.map((event: any) => event.id).sort()).toEqual([...sent].sort());
    expect((await user.json(['events', 'list', '--status', 'failed'])).data).toEqual([]);
    expect((await user.json(['events', 'list', '--status', 'retrying,delivered'])).data).toHaveLength(2);
    const bad = await user.run(['events', 'list', '--status', 'failing']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('several separated by commas (failed,retrying)');
  });

  it('are replayed in bulk by default, and the answer says which statuses it took', async () => {
    const before = failing.requests.length;
    const replayed = await user.json(['events', 'replay', '--endpoint', 'orders']);
    expect(replayed).toMatchObject({ replayed: 2, deliveries: 2, status: ['failed', 'retrying'] });
    await failing.waitFor(before + 2);
    const text = await user.run(['events', 'replay', '--endpoint', 'orders', '--status', 'failed']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Queued 0 events (0 deliveries, 0 for `hook listen`) for replay (status failed, endpoint orders).');
  });
});
