/**
 * `hook issues` with the real binary against a real relay and a real receiver that answers
 * 503: the failures show as one issue, which is read, acknowledged, resolved by hand,
 * reopened by the next failure, retried while the receiver still fails (exit 1, naming the
 * command that lists the events) and, once the receiver is fixed, retried to delivered
 * (exit 0) and resolved by the relay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { eventually } from '../support/hook-process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let receiver: Receiver;
const user = new HookUser();
const sent: string[] = [];
let issueId: string;

/** The account's issues in every status, as --json gives them. */
async function allIssues(): Promise<any[]> {
  return (await user.json(['issues', 'list', '--status', 'all'])).data;
}

beforeAll(async () => {
  // One retry an hour: a failed first attempt leaves each event retrying for the whole file, so only the test's own retries reach the receiver.
  relay = await startTestRelay({ allowPrivateDestinations: true, retryScheduleMs: [3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000] }, { workerPollMs: 20 });
  receiver = await startReceiver(() => ({ status: 503 }));
  await user.json(['signup', '--api-url', relay.baseUrl]);
  await user.json(['endpoints', 'create', 'orders', '--destination', receiver.url]);
  for (const n of [1, 2, 3]) sent.push((await user.json(['send', 'orders', '--data', JSON.stringify({ type: 'order.created', n })])).id);
  await receiver.waitFor(3);
  const [issue] = await eventually(allIssues, (issues) => issues.length === 1 && issues[0].event_count === 3, 10_000, 'one issue covering the three events');
  issueId = issue.id;
});

afterAll(async () => {
  await receiver?.close();
  await relay?.close();
  user.remove();
});

describe('hook issues', () => {
  it('lists the failures as one issue: a table for people, the page as JSON', async () => {
    const page = await user.json(['issues', 'list']);
    expect(page.next_cursor).toBeNull();
    expect(page.data).toEqual([
      expect.objectContaining({
        id: issueId, kind: 'http_5xx', title: 'Receiver answered 5xx', status: 'open', resolved_by: null,
        event_count: 3, failure_count: 3, reopen_count: 0, last_status: 503,
        events: { total: 3, delivered: 0, failing: 3, pending: 0 },
      }),
    ]);
    expect(sent).toContain(page.data[0].last_event_id);

    const text = await user.run(['issues', 'list']);
    expect(text.code).toBe(0);
    const [header, row] = text.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+STATUS\s+PROBLEM\s+DESTINATION\s+EVENTS\s+FAILURES\s+LAST SEEN$/);
    expect(row).toContain(issueId);
    expect(row).toContain('open');
    expect(row).toContain('Receiver answered 5xx');
    expect(row).toContain(`orders → ${receiver.url}`);
    expect(text.stderr).toContain(`hook issues get ${issueId}`);

    expect((await user.json(['issues', 'list', '--endpoint', 'orders', '--kind', 'http_5xx'])).data).toHaveLength(1);
    expect((await user.json(['issues', 'list', '--kind', 'timeout'])).data).toEqual([]);
    expect((await user.json(['issues', 'list', '--status', 'resolved'])).data).toEqual([]);
    const unknownEndpoint = await user.run(['issues', 'list', '--endpoint', 'nope', '--json']);
    expect(unknownEndpoint.code).toBe(1);
    expect(unknownEndpoint.stdout).toBe('');
    expect(JSON.parse(unknownEndpoint.stderr)).toMatchObject({ code: 'endpoint_not_found' });
    const badStatus = await user.run(['issues', 'list', '--status', 'closed']);
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toContain('open, acknowledged, resolved');
  });

  it('gets one issue with the events it covers, newest failure first', async () => {
    const { issue, events } = await user.json(['issues', 'get', issueId]);
    expect(issue).toMatchObject({ id: issueId, status: 'open', event_count: 3 });
    expect(events.next_cursor).toBeNull();
    expect(events.data.map((event: any) => event.event_id).sort()).toEqual([...sent].sort());
    for (const event of events.data) expect(event).toMatchObject({ delivery_status: 'retrying', attempt_count: 1, last_status: 503, type: 'order.created' });

    const text = await user.run(['issues', 'get', issueId]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Problem:\s+Receiver answered 5xx \(http_5xx\)/);
    expect(text.stdout).toMatch(/Events now:\s+delivered 0 of 3, failing 3, pending 0/);
    expect(text.stdout).toContain('Events (newest failure first)');
    for (const id of sent) expect(text.stdout).toContain(id);
    expect(text.stdout).toContain('answered 503');
    expect(text.stderr).toContain(`hook issues retry ${issueId} --wait`);
  });

  it('answers an unknown issue with issue_not_found and the command that lists issues; a malformed id is a usage error', async () => {
    const unknown = 'iss_00000000000000000000000000';
    const text = await user.run(['issues', 'get', unknown]);
    expect(text.code).toBe(1);
    expect(text.stdout).toBe('');
    expect(text.stderr).toContain('(issue_not_found)');
    expect(text.stderr).toContain('Fix: Run `hook issues list`');
    for (const verb of ['ack', 'resolve', 'retry']) {
      const json = await user.run(['issues', verb, unknown, '--json']);
      expect(json.code, verb).toBe(1);
      expect(json.stdout, verb).toBe('');
      const problem = JSON.parse(json.stderr);
      expect(problem, verb).toMatchObject({ code: 'issue_not_found', status: 404 });
      expect(problem.fix, verb).toContain('hook issues list');
    }
    const malformed = await user.run(['issues', 'get', 'evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('must be an issue id (iss_…)');
  });

  it('acknowledges it (still listed), resolves it by hand, and the next failure reopens it', async () => {
    const acknowledged = await user.json(['issues', 'ack', issueId]);
    expect(acknowledged).toMatchObject({ id: issueId, status: 'acknowledged' });
    expect(acknowledged.acknowledged_at).not.toBeNull();
    expect((await user.json(['issues', 'list'])).data.map((issue: any) => issue.status)).toEqual(['acknowledged']);
    const again = await user.run(['issues', 'ack', issueId]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Issue ${issueId} is acknowledged`);

    const resolved = await user.json(['issues', 'resolve', issueId]);
    expect(resolved).toMatchObject({ id: issueId, status: 'resolved', resolved_by: 'user' });
    expect((await user.json(['issues', 'list'])).data).toEqual([]);
    expect((await user.json(['issues', 'list', '--status', 'resolved'])).data.map((issue: any) => issue.id)).toEqual([issueId]);

    sent.push((await user.json(['send', 'orders', '--data', JSON.stringify({ type: 'order.created', n: 4 })])).id);
    const reopened = await eventually(async () => (await user.json(['issues', 'get', issueId])).issue, (issue) => issue.status === 'open', 10_000, 'the issue reopened');
    expect(reopened).toMatchObject({ reopen_count: 1, event_count: 4, failure_count: 4, resolved_by: null, last_event_id: sent[3] });
  });

  it('retry --wait while the receiver still fails: every event tried once more, exit 1 naming the command that lists them', async () => {
    const before = receiver.requests.length;
    const run = await user.run(['issues', 'retry', issueId, '--wait', '--timeout', '20s', '--json'], { timeoutMs: 40_000 });
    expect(run.code, run.stderr).toBe(1);
    expect(receiver.requests.length - before).toBe(4);
    const result = JSON.parse(run.stdout);
    expect(result.queued).toBe(4);
    expect(result.issue).toMatchObject({ id: issueId, status: 'open', events: { total: 4, delivered: 0, failing: 4, pending: 0 } });
    expect(result.issue.retry).toMatchObject({ queued: 4 });
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(`Queued 4 events of ${issueId} for one more attempt to ${result.issue.destination_id}.`);
    const problem = JSON.parse(lines.at(-1)!);
    expect(problem).toMatchObject({ code: 'replay_failed' });
    expect(problem.detail).toContain(`4 events of ${issueId} still fail`);
    expect(problem.fix).toContain(`hook issues get ${issueId}`);
  });

  it('retry --wait once the receiver is fixed: progress on stderr, every event delivered, exit 0, and the relay resolves the issue', async () => {
    receiver.respond = () => ({ status: 200 });
    const before = receiver.requests.length;
    const run = await user.run(['issues', 'retry', issueId, '--wait', '--timeout', '20s'], { timeoutMs: 40_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(receiver.requests.length - before).toBe(4);
    expect(new Set(receiver.requests.slice(before).map((request) => request.headers['webhook-id']))).toEqual(new Set(sent));
    expect(run.stderr).toContain(`${issueId}: delivered 4 of 4, failing 0, pending 0`);
    expect(run.stdout).toMatch(new RegExp(`^${issueId} is (open|resolved): delivered 4 of 4, failing 0, pending 0\\.$`, 'm'));

    const resolved = await eventually(async () => (await user.json(['issues', 'get', issueId])).issue, (issue) => issue.status === 'resolved', 15_000, 'the relay resolved the issue');
    expect(resolved).toMatchObject({ resolved_by: 'auto', events: { total: 4, delivered: 4, failing: 0, pending: 0 } });
    expect((await user.json(['issues', 'list'])).data).toEqual([]);

    // Nothing left to retry: queued 0, and --wait ends at once.
    const nothing = await user.run(['issues', 'retry', issueId, '--wait', '--json']);
    expect(nothing.code).toBe(0);
    expect(JSON.parse(nothing.stdout)).toMatchObject({ queued: 0, issue: { status: 'resolved' } });
  });
});
