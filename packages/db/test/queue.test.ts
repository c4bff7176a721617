import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { answerKind, DESTINATION_FAILURE_LIMIT, firstIdAt, newId, type IssueKind } from '@hook/core';
import pg from 'pg';
import {
  AttemptRecorder, CLAIM_DUE, CLAIM_LISTEN, CLAIM_LISTEN_AFTER, QUEUE_SESSION_SETTINGS, releaseLease, queueExecutor, pruneIssueEvents, RECORD_GROUPED_RESULTS, RECORD_INPUT, RECORD_RESULTS, claimDue, resolveDeliveredIssues, claimForListener, createOrm, DUE_CHANNEL, EventWriter, readDeliveries, refreshQueueStatistics, replayEvent, summarizeEvents, type ClaimedDelivery, type NewEvent, type Orm,
} from '../src/index.ts';
import type { TestDatabase } from '../src/testing.ts';
import { freshDatabase } from '@hook/test/database';
import { insertEndpoint } from './rows.ts';
import { historyIndex, historyKey, historyRelation } from '@hook/test/history-plan';

let database: TestDatabase;
let orm: Orm;
const accountId = newId('account');
let endpointId: string;
let destinationId: string;

async function sql(text: string, params: unknown[] = []): Promise<any[]> {
  return orm.em.fork().getConnection().execute(text, params);
}

beforeAll(async () => {
  database = await freshDatabase();
  orm = await createOrm({ databaseUrl: database.url, poolMax: 20 });
  await sql('insert into account (id, plan, created_at) values (?, ?, now())', [accountId, 'free']);
  const created = await insertEndpoint(sql, accountId);
  endpointId = created.endpointId;
  destinationId = created.destinationIds[0]!;
});
afterAll(async () => {
  await orm.close();
  await database.drop();
});
beforeEach(async () => {
  await sql('delete from attempt');
  await sql('delete from delivery');
  await sql('delete from event');
  await sql('delete from notification_outbox');
  await sql('delete from issue_event');
  await sql('delete from issue');
  await sql("update destination set status = 'active', disabled_reason = null, consecutive_failures = 0, failing_since = null where id = ?", [destinationId]);
  await sql("update endpoint set status = 'active' where id = ?", [endpointId]);
});

function newEvent(endpoint: string, overrides: Partial<NewEvent> = {}): NewEvent {
  const receivedAt = new Date(Date.now() - 1000);
  return {
    id: newId('event'), accountId, endpointId: endpoint, type: null, method: 'POST', path: '', query: '', headers: {}, body: Buffer.from('e'),
    contentType: null, size: 1, receivedAt, status: 'pending', ...overrides,
  };
}

async function due(count: number, endpoint = endpointId): Promise<string[]> {
  const writer = new EventWriter(orm);
  const events = Array.from({ length: count }, () => newEvent(endpoint));
  for (const event of events) await writer.write(event);
  return events.map((event) => event.id);
}

const claimOptions = { limit: 1000, leaseMs: 60_000, perDestinationLimit: 1000 };

/** The kind an attempt with this answer is recorded with (null: no answer, a network error). */
function failureKindOf(status: number | null): IssueKind | null {
  const kind = status === null ? 'network_error' : answerKind(status);
  return kind === 'ok' ? null : kind;
}

function result(delivery: ClaimedDelivery, status: number | null, next: { status: 'delivered' | 'retrying' | 'failed'; nextAttemptAt?: Date | null }) {
  return {
    delivery,
    attempt: { id: newId('attempt'), startedAt: new Date(), durationMs: 5, responseStatus: status, responseBody: null, error: status === null ? 'refused' : null, failureKind: failureKindOf(status) },
    next: { status: next.status, autoAttempts: delivery.autoAttempts + 1, nextAttemptAt: next.nextAttemptAt ?? null },
    health: status !== null && status >= 200 && status < 300 ? 'ok' as const : 'failed' as const,
  };
}

describe('claimDue', () => {
  it('never hands one delivery to two concurrent claimers', async () => {
    const ids = await due(300);
    const claims = await Promise.all(Array.from({ length: 12 }, () => claimDue(orm, { limit: 40, leaseMs: 60_000, perDestinationLimit: 1000 })));
    const claimed = claims.flat().map((delivery) => delivery.id);
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.every((id) => ids.includes(id))).toBe(true);
    // Claimed ones are leased: a second round takes only what is left.
    const rest = await claimDue(orm, claimOptions);
    expect(rest.length + claimed.length).toBe(300);
    expect(rest.some((delivery) => claimed.includes(delivery.id))).toBe(false);
  });

  it('keeps a destination within its in-flight limit (the relay\'s share, or its own max_in_flight if lower), in arrival order', async () => {
    const ids = await due(10);
    const first = await claimDue(orm, { limit: 10, leaseMs: 60_000, perDestinationLimit: 3 });
    expect(first.map((delivery) => delivery.id)).toEqual(ids.slice(0, 3));
    expect(await claimDue(orm, { limit: 10, leaseMs: 60_000, perDestinationLimit: 3 })).toEqual([]);
    await sql('update destination set max_in_flight = 4 where id = ?', [destinationId]);
    try {
      expect((await claimDue(orm, { limit: 10, leaseMs: 60_000, perDestinationLimit: 8 })).map((delivery) => delivery.id)).toEqual([ids[3]]);
    } finally {
      await sql('update destination set max_in_flight = null where id = ?', [destinationId]);
    }
  });

  it('starts no more of a destination\'s deliveries per second than its rate, across concurrent claimers', async () => {
    const ids = await due(10);
    await sql('update destination set rate_per_second = 3 where id = ?', [destinationId]);
    try {
      const together = (await Promise.all([1, 2, 3].map(() => claimDue(orm, claimOptions)))).flat();
      expect(together.map((delivery) => delivery.id).sort()).toEqual(ids.slice(0, 3).sort());
      expect(await claimDue(orm, claimOptions)).toEqual([]);
      // A second later (the window is the database clock's: its start is moved back a second instead of waiting one)
      await sql('update destination set rate_window_start = rate_window_start - interval \'1 second\' where id = ?', [destinationId]);
      expect((await claimDue(orm, claimOptions)).map((delivery) => delivery.id)).toEqual(ids.slice(3, 6));
    } finally {
      await sql('update destination set rate_per_second = null, rate_window_start = null, rate_window_count = 0 where id = ?', [destinationId]);
    }
  });

  it('gives an expired lease to the next claimer, and only the lease holder moves the delivery on', async () => {
    const [id] = await due(1);
    const [stale] = await claimDue(orm, { limit: 1, leaseMs: 50, perDestinationLimit: 10 });
    expect(stale!.id).toBe(id);
    expect(await claimDue(orm, { limit: 1, leaseMs: 50, perDestinationLimit: 10 })).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    const [fresh] = await claimDue(orm, { limit: 1, leaseMs: 60_000, perDestinationLimit: 10 });
    expect(fresh!.id).toBe(id);
    expect(fresh!.leaseId).not.toBe(stale!.leaseId);

    const recorder = new AttemptRecorder(orm);
    expect(await recorder.record(result(stale!, 200, { status: 'delivered' }))).toEqual({ held: false, eventStatus: null });
    const [afterStale] = await sql('select status, lease_id from delivery where event_id = ?', [id]);
    expect(afterStale).toEqual({ status: 'pending', lease_id: fresh!.leaseId });
    expect(await recorder.record(result(fresh!, 200, { status: 'delivered' }))).toEqual({ held: true, eventStatus: 'delivered' });
    const [after] = await sql('select status, lease_id, attempt_count from delivery where event_id = ?', [id]);
    expect(after).toEqual({ status: 'delivered', lease_id: null, attempt_count: 1 });
    expect(await sql('select count(*)::int as n from attempt where event_id = ? and destination_id = ?', [id, destinationId])).toEqual([{ n: 2 }]);
  });

  it('skips paused endpoints and paused destinations, leaving their deliveries waiting', async () => {
    await due(2);
    for (const [table, id] of [['endpoint', endpointId], ['destination', destinationId]] as const) {
      await sql(`update ${table} set status = 'paused' where id = ?`, [id]);
      try {
        expect(await claimDue(orm, claimOptions)).toEqual([]);
      } finally {
        await sql(`update ${table} set status = 'active' where id = ?`, [id]);
      }
    }
    expect(await claimDue(orm, claimOptions)).toHaveLength(2);
  });
});

describe('fan-out', () => {
  it('stores one delivery per destination, each claimed and recorded on its own, and the event summarises them', async () => {
    const fan = await insertEndpoint(sql, accountId, [{ url: 'http://127.0.0.1:9/a' }, { url: 'http://127.0.0.1:9/b', secret: 'whsec_BBBB' }, { type: 'cli' }]);
    const [id] = await due(1, fan.endpointId);
    expect(await sql('select destination_id, status from delivery where event_id = ? order by destination_id', [id])).toHaveLength(3);
    expect((await sql('select delivery_count from event where id = ?', [id]))[0].delivery_count).toBe(3);
    const claimed = (await claimDue(orm, claimOptions)).filter((delivery) => delivery.id === id);
    // Workers take the URL destinations' deliveries, each signed with its own destination's secret.
    expect(claimed.map((delivery) => [delivery.destinationId, delivery.destinationUrl, delivery.secrets]).sort()).toEqual([
      [fan.destinationIds[0], 'http://127.0.0.1:9/a', ['whsec_AAAA']],
      [fan.destinationIds[1], 'http://127.0.0.1:9/b', ['whsec_BBBB']],
    ].sort());
    const recorder = new AttemptRecorder(orm);
    const [a, b] = [claimed.find((delivery) => delivery.destinationId === fan.destinationIds[0])!, claimed.find((delivery) => delivery.destinationId === fan.destinationIds[1])!];
    const [recordedA, recordedB] = await Promise.all([
      recorder.record(result(a, 200, { status: 'delivered' })),
      recorder.record(result(b, 500, { status: 'retrying', nextAttemptAt: new Date(Date.now() + 60_000) })),
    ]);
    expect([recordedA.held, recordedB.held]).toEqual([true, true]);
    // The listener's delivery is still pending, one retries: retrying wins.
    expect((await summarizeEvents(orm, accountId, [id!])).get(id!)).toMatchObject({ status: 'retrying', attemptCount: 2 });
    const [listened] = (await claimForListener(orm, { destinationId: fan.destinationIds[2]!, accountId, fromEventId: '', limit: 10, leaseMs: 60_000 })).deliveries;
    expect(listened).toMatchObject({ id, destinationType: 'cli', trigger: 'listen', destinationUrl: null });
    expect(await recorder.record(result(listened!, 200, { status: 'delivered' }))).toEqual({ held: true, eventStatus: 'retrying' });
    await sql('delete from destination where endpoint_id = ?', [fan.endpointId]);
  });
});

describe('claimForListener', () => {
  it('claims a cli destination\'s due deliveries oldest first, one claimer each, and leaves older events for --skip-missed', async () => {
    const cli = await insertEndpoint(sql, accountId, [{ type: 'cli' }]);
    const ids = await due(4, cli.endpointId);
    // Workers never take a cli destination's deliveries.
    expect((await claimDue(orm, claimOptions)).filter((delivery) => ids.includes(delivery.id))).toEqual([]);
    const skipping = await claimForListener(orm, { destinationId: cli.destinationIds[0]!, accountId, fromEventId: firstIdAt('event', Date.now() + 60_000), limit: 10, leaseMs: 60_000 });
    expect(skipping).toEqual({ deliveries: [], cursor: null });
    const [one, two] = (await Promise.all([1, 2].map(() => claimForListener(orm, { destinationId: cli.destinationIds[0]!, accountId, fromEventId: '', limit: 3, leaseMs: 60_000 })))).map((claim) => claim.deliveries);
    const claimed = [...one!, ...two!].map((delivery) => delivery.id);
    expect(claimed.sort()).toEqual([...ids].sort());
    expect(one!.map((delivery) => delivery.id)).toEqual([...one!.map((delivery) => delivery.id)].sort());
    await sql('delete from destination where endpoint_id = ?', [cli.endpointId]);
  });

  it('walks on from where its last claim ended, and from the start without a cursor (what was given back behind it)', async () => {
    const cli = await insertEndpoint(sql, accountId, [{ type: 'cli' }]);
    const ids = await due(5, cli.endpointId);
    const options = { destinationId: cli.destinationIds[0]!, accountId, fromEventId: '', limit: 2, leaseMs: 60_000 };
    const first = await claimForListener(orm, options);
    expect(first.deliveries.map((delivery) => delivery.id)).toEqual(ids.slice(0, 2));
    expect(first.cursor?.eventId).toBe(ids[1]);
    // The first is given back (its listener went away): due again, behind the cursor.
    await releaseLease(orm, first.deliveries[0]!);
    const next = await claimForListener(orm, { ...options, after: first.cursor });
    expect(next.deliveries.map((delivery) => delivery.id)).toEqual(ids.slice(2, 4));
    expect(next.cursor?.eventId).toBe(ids[3]);
    // Without a cursor (the session's poll) the walk starts over and finds it.
    const over = await claimForListener(orm, options);
    expect(over.deliveries.map((delivery) => delivery.id)).toEqual([ids[0], ids[4]]);
    await sql('delete from destination where endpoint_id = ?', [cli.endpointId]);
  });
});

describe('destination health', () => {
  it('a 2xx after failures makes the destination\'s other retrying deliveries due now; a 410 disables it and its endpoint, with notifications', async () => {
    const ids = await due(3);
    const later = new Date(Date.now() + 3_600_000);
    const recorder = new AttemptRecorder(orm);
    const claimed = await claimDue(orm, claimOptions);
    for (const delivery of claimed.slice(0, 2)) await recorder.record(result(delivery, 500, { status: 'retrying', nextAttemptAt: later }));
    expect((await sql('select consecutive_failures, failing_since is not null as failing from destination where id = ?', [destinationId]))[0]).toEqual({ consecutive_failures: 2, failing: true });
    await recorder.record(result(claimed[2]!, 200, { status: 'delivered' }));
    expect((await sql('select consecutive_failures, failing_since from destination where id = ?', [destinationId]))[0]).toEqual({ consecutive_failures: 0, failing_since: null });
    const retrying = await sql('select event_id, next_attempt_at <= now() as due from delivery where event_id in (?, ?)', [ids[0], ids[1]]);
    expect(retrying.map((row) => row.due)).toEqual([true, true]);

    const again = await claimDue(orm, claimOptions);
    expect(again.map((delivery) => delivery.id).sort()).toEqual([ids[0], ids[1]].sort());
    await recorder.record(result(again[0]!, 410, { status: 'retrying', nextAttemptAt: later }));
    expect((await sql('select status, disabled_reason from destination where id = ?', [destinationId]))[0]).toEqual({ status: 'disabled', disabled_reason: 'gone_410' });
    expect((await sql('select status from endpoint where id = ?', [endpointId]))[0].status).toBe('disabled');
    // Its only destination: the endpoint's notification says it all.
    // (the failures' issue alerts itself: see 'issues' below)
    const notices = await sql(`select type, data from notification_outbox where type not like 'issue.%' order by type`);
    expect(notices).toEqual([{ type: 'endpoint.disabled', data: { endpoint_id: endpointId, reason: 'gone_410', disabled_at: expect.stringMatching(/Z$/) } }]);
  });

  it(`disables a destination that failed ${DESTINATION_FAILURE_LIMIT.attempts} attempts in a row over at least its span, not sooner, and says so`, async () => {
    const fan = await insertEndpoint(sql, accountId, [{}, { type: 'cli' }]);
    const failing = fan.destinationIds[0]!;
    await due(2, fan.endpointId);
    const recorder = new AttemptRecorder(orm);
    const later = new Date(Date.now() + 3_600_000);
    await sql('update destination set consecutive_failures = ?, failing_since = now() where id = ?', [DESTINATION_FAILURE_LIMIT.attempts, failing]);
    const [first, second] = await claimDue(orm, claimOptions);
    await recorder.record(result(first!, 500, { status: 'retrying', nextAttemptAt: later }));
    expect((await sql('select status from destination where id = ?', [failing]))[0].status).toBe('active');
    await sql(`update destination set failing_since = now() - make_interval(secs => ?) where id = ?`, [DESTINATION_FAILURE_LIMIT.spanMs / 1000 + 60, failing]);
    await recorder.record(result(second!, null, { status: 'retrying', nextAttemptAt: later }));
    expect((await sql('select status, disabled_reason, consecutive_failures from destination where id = ?', [failing]))[0])
      .toEqual({ status: 'disabled', disabled_reason: 'failing', consecutive_failures: DESTINATION_FAILURE_LIMIT.attempts + 2 });
    // Its other destination still takes events: the endpoint stays up, and the account hears of this one.
    expect((await sql('select status from endpoint where id = ?', [fan.endpointId]))[0].status).toBe('active');
    expect(await sql(`select type, data from notification_outbox where type not like 'issue.%'`)).toEqual([{
      type: 'destination.disabled',
      data: { endpoint_id: fan.endpointId, destination_id: failing, reason: 'failing', consecutive_failures: DESTINATION_FAILURE_LIMIT.attempts + 2, disabled_at: expect.stringMatching(/Z$/) },
    }]);
    await sql('delete from destination where endpoint_id = ?', [fan.endpointId]);
  });
});

describe('issues', () => {
  const issues = () => sql(`select kind, status, failure_count::int as failures, event_count as events, reopen_count as reopens, last_status, destination_id
                            from issue order by kind`);
  const alerts = () => sql(`select type, data->>'kind' as kind from notification_outbox where type like 'issue.%' order by type, kind`);

  it('groups failed attempts by destination and kind, counts failures and events, reopens a resolved issue, and alerts at most once per throttle', async () => {
    const recorder = new AttemptRecorder(orm);
    const later = new Date(Date.now() + 3_600_000);
    await due(3);
    const claimed = await claimDue(orm, claimOptions);
    // two 500s and a 503 in one batch, a 404 and a refused connection: three issues
    await Promise.all([
      recorder.record(result(claimed[0]!, 500, { status: 'retrying', nextAttemptAt: later })),
      recorder.record(result(claimed[1]!, 503, { status: 'retrying', nextAttemptAt: later })),
      recorder.record(result(claimed[2]!, 404, { status: 'retrying', nextAttemptAt: later })),
    ]);
    expect(await issues()).toEqual([
      { kind: 'http_4xx', status: 'open', failures: 1, events: 1, reopens: 0, last_status: 404, destination_id: destinationId },
      { kind: 'http_5xx', status: 'open', failures: 2, events: 2, reopens: 0, last_status: expect.any(Number), destination_id: destinationId },
    ]);
    expect(await alerts()).toEqual([{ type: 'issue.opened', kind: 'http_4xx' }, { type: 'issue.opened', kind: 'http_5xx' }]);
    expect((await sql(`select failure_kind from attempt order by failure_kind`)).map((row) => row.failure_kind)).toEqual(['http_4xx', 'http_5xx', 'http_5xx']);

    // the same event failing again counts a failure, not an event
    await sql(`update delivery set next_attempt_at = now() where event_id = ?`, [claimed[0]!.id]);
    const [again] = await claimDue(orm, claimOptions);
    await recorder.record(result(again!, 502, { status: 'retrying', nextAttemptAt: later }));
    expect((await issues()).find((row) => row.kind === 'http_5xx')).toMatchObject({ failures: 3, events: 2, last_status: 502 });

    // resolved, then a failure: reopened, but within the throttle of its last alert, so no second alert
    await sql(`update issue set status = 'resolved', resolved_by = 'user', resolved_at = now() where kind = 'http_5xx'`);
    await sql(`update delivery set next_attempt_at = now() where event_id = ?`, [claimed[1]!.id]);
    const [third] = await claimDue(orm, claimOptions);
    await recorder.record(result(third!, 500, { status: 'retrying', nextAttemptAt: later }));
    expect((await issues()).find((row) => row.kind === 'http_5xx')).toMatchObject({ status: 'open', reopens: 1, failures: 4 });
    expect(await sql(`select resolved_by, resolved_at from issue where kind = 'http_5xx'`)).toEqual([{ resolved_by: null, resolved_at: null }]);
    expect(await alerts()).toHaveLength(2);

    // past the throttle, a reopen alerts
    await sql(`update issue set status = 'resolved', resolved_by = 'user', resolved_at = now(), last_alerted_at = now() - interval '2 hours' where kind = 'http_5xx'`);
    await sql(`update delivery set next_attempt_at = now() where event_id = ?`, [claimed[1]!.id]);
    const [fourth] = await claimDue(orm, claimOptions);
    await recorder.record(result(fourth!, null, { status: 'retrying', nextAttemptAt: later }));
    // a refused connection is its own kind; the 5xx issue stays resolved
    expect((await issues()).map((row) => [row.kind, row.status])).toEqual([['http_4xx', 'open'], ['http_5xx', 'resolved'], ['network_error', 'open']]);
    await sql(`update delivery set next_attempt_at = now() where event_id = ?`, [claimed[1]!.id]);
    const [fifth] = await claimDue(orm, claimOptions);
    await recorder.record(result(fifth!, 500, { status: 'retrying', nextAttemptAt: later }));
    expect(await alerts()).toEqual([
      { type: 'issue.opened', kind: 'http_4xx' }, { type: 'issue.opened', kind: 'http_5xx' },
      { type: 'issue.opened', kind: 'network_error' }, { type: 'issue.reopened', kind: 'http_5xx' },
    ]);
    const [reopened] = await sql(`select data from notification_outbox where type = 'issue.reopened'`);
    expect(reopened.data).toEqual({
      issue_id: expect.stringMatching(/^iss_/), endpoint_id: endpointId, destination_id: destinationId, kind: 'http_5xx', title: 'Receiver answered 5xx',
      event_id: claimed[1]!.id, last_status: 500, failure_count: 5,
    });
  });

  it('the sweep resolves an issue once its events are delivered, and forgets covered events retention removed', async () => {
    const recorder = new AttemptRecorder(orm);
    const [kept, dropped] = (await due(2)).sort();
    const claimed = await claimDue(orm, claimOptions);
    await Promise.all(claimed.map((delivery) => recorder.record(result(delivery, 500, { status: 'failed' }))));
    const [{ id }] = await sql('select id from issue');
    expect((await resolveDeliveredIssues(orm)).resolved).toEqual([]);

    // retention removes one event; a small batch walks the rows in event id order and wraps around
    await sql('delete from delivery where event_id = ?', [dropped]);
    await sql('delete from event where id = ?', [dropped]);
    expect(await pruneIssueEvents(orm, '', 1)).toEqual({ removed: 0, lastEventId: kept });
    expect(await pruneIssueEvents(orm, kept!, 1)).toEqual({ removed: 1, lastEventId: dropped });
    expect(await pruneIssueEvents(orm, dropped!, 1)).toEqual({ removed: 0, lastEventId: null });
    expect((await sql('select event_id from issue_event')).map((row) => row.event_id)).toEqual([kept]);

    // the one left delivered: resolved by the sweep, once
    await sql(`update delivery set status = 'delivered' where event_id = ?`, [kept]);
    expect((await resolveDeliveredIssues(orm)).resolved).toEqual([id]);
    expect(await sql('select status, resolved_by from issue')).toEqual([{ status: 'resolved', resolved_by: 'auto' }]);
    expect((await resolveDeliveredIssues(orm)).resolved).toEqual([]);
  });

  it('makes none of a 2xx, a cli destination, or the account\'s notifications endpoint', async () => {
    const recorder = new AttemptRecorder(orm);
    const fan = await insertEndpoint(sql, accountId, [{ type: 'cli' }]);
    const notifications = await insertEndpoint(sql, accountId);
    await sql(`update endpoint set kind = 'notifications' where id = ?`, [notifications.endpointId]);
    await due(1);
    await due(1, notifications.endpointId);
    const claimed = await claimDue(orm, claimOptions);
    expect(claimed).toHaveLength(2);
    await recorder.record(result(claimed.find((delivery) => delivery.endpointId === endpointId)!, 200, { status: 'delivered' }));
    await recorder.record(result(claimed.find((delivery) => delivery.endpointId === notifications.endpointId)!, 500, { status: 'failed' }));
    await due(1, fan.endpointId);
    const [listened] = await claimForListener(orm, { destinationId: fan.destinationIds[0]!, accountId, fromEventId: '', limit: 10, leaseMs: 60_000 }).then((found) => found.deliveries);
    await recorder.record({ ...result(listened!, 500, { status: 'retrying', nextAttemptAt: new Date(Date.now() + 60_000) }), health: null });
    expect(await sql('select count(*)::int as n from attempt where response_status = 500')).toEqual([{ n: 2 }]);
    expect(await issues()).toEqual([]);
    for (const made of [fan, notifications]) await sql('delete from destination where endpoint_id = ?', [made.endpointId]);
  });
});

describe('insertEvents with a lease (the shortcut for new events)', () => {
  async function notificationsDuring(action: () => Promise<unknown>): Promise<number> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    let count = 0;
    const marker = `after the action ${newId('event')}`;
    let markerArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (markerArrived = resolve));
    client.on('notification', (notification) => (notification.payload === marker ? markerArrived() : (count += 1)));
    await client.query(`listen ${DUE_CHANNEL}`);
    try {
      await action();
      // Notifications arrive in commit order: once one sent after the action is here, all of the action's are.
      await sql('select pg_notify(?, ?)', [DUE_CHANNEL, marker]);
      await arrived;
      return count;
    } finally {
      await client.end();
    }
  }

  it('stores the delivery claimed and returns it, without waking the workers', async () => {
    const event = newEvent(endpointId, { headers: { 'x-a': '1' }, body: Buffer.from([0xff, 0x00, 0x01]), size: 3, lease: { id: 'lease.1', ms: 60_000, destinationType: 'url' } });
    let outcome: Awaited<ReturnType<EventWriter['write']>> | undefined;
    expect(await notificationsDuring(async () => (outcome = await new EventWriter(orm).write(event)))).toBe(0);
    const delivery = outcome?.stored ? outcome.delivery : null;
    expect(delivery).toMatchObject({ id: event.id, destinationId, leaseId: 'lease.1', destinationUrl: 'http://127.0.0.1:9/x', secrets: ['whsec_AAAA'], attemptCount: 0, trigger: 'auto' });
    expect(delivery!.body.equals(event.body)).toBe(true);
    // the same delivery as a claim returns it (one mapper, toClaimed): the shortcut's event side is the request in memory, the rest the statement's
    expect(delivery).toEqual((await readDeliveries(orm, accountId, [{ eventId: event.id, destinationId }]))[0]);
    const [row] = await sql('select lease_id, locked_until > now() + interval \'50 seconds\' as long_lease from delivery where event_id = ?', [event.id]);
    expect(row).toEqual({ lease_id: 'lease.1', long_lease: true });
    // Nobody else can claim it while the lease holds.
    expect(await claimDue(orm, claimOptions)).toEqual([]);
  });

  it('stores the delivery unclaimed, and wakes the workers, when the endpoint is paused by then or has several destinations', async () => {
    const paused = await insertEndpoint(sql, accountId, [{}], { status: 'paused' });
    const fan = await insertEndpoint(sql, accountId, [{}, {}]);
    const writer = new EventWriter(orm);
    const events = [newEvent(paused.endpointId, { lease: { id: 'lease.2', ms: 60_000, destinationType: 'url' } }), newEvent(endpointId, { lease: { id: 'lease.3', ms: 60_000, destinationType: 'url' } }), newEvent(fan.endpointId, { lease: { id: 'lease.4', ms: 60_000, destinationType: 'url' } })];
    let results: unknown[] = [];
    expect(await notificationsDuring(async () => (results = await Promise.all(events.map((event) => writer.write(event)))))).toBeGreaterThan(0);
    expect(results[0]).toEqual({ stored: true, delivery: null });
    expect(results[1]).toMatchObject({ stored: true, delivery: { id: events[1]!.id, leaseId: 'lease.3' } });
    expect(results[2]).toEqual({ stored: true, delivery: null });
    expect(await sql('select count(*)::int as n from delivery where lease_id is not null')).toEqual([{ n: 1 }]);
  });
});

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function planNodes(node: Record<string, any>): Record<string, any>[] {
  return [node, ...((node.Plans as Record<string, any>[] | undefined) ?? []).flatMap(planNodes)];
}

/** Runs `work` in a transaction on a connection set up as the queue's are (QUEUE_SESSION_SETTINGS), rolled back after. */
async function onQueueSession<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const settings = Object.entries(QUEUE_SESSION_SETTINGS).map(([setting, value]) => `set local ${setting} = ${value}`).join('; ');
    await client.query(`begin; ${settings}`);
    return await work(client);
  } finally {
    await client.query('rollback');
    await client.end();
  }
}

describe('the claim statement plan', () => {
  it('with statistics a backlog outgrew: counts live leases in their index, walks the due index once, in order, and finds every other row by primary key', async () => {
    // Statistics taken while the table held 5,000 deliveries of another destination and
    // none of this one's (as in bench:delivery's throughput phase), then a backlog of 3,000
    // due deliveries behind a history of 2,000 delivered ones whose claimed versions are
    // dead: what a claim meets when events arrive faster than the statistics are refreshed.
    const other = await insertEndpoint(sql, accountId, [{ type: 'cli' }]);
    const insertDeliveries = (prefix: string, endpoint: string, destination: string, columns: string, values: string) => sql(
      `with e as (
         insert into event (id, account_id, endpoint_id, method, path, query, headers, body, size, received_at)
         select 'evt_${prefix}' || lpad(g::text, 8, '0'), ?, ?, 'POST', '', '', '{}', '\\x00', 1, now() from generate_series(1, ?) g
         returning id
       )
       insert into delivery (event_id, destination_id, account_id, endpoint_id, status${columns}) select id, ?, ?, ?, 'pending'${values} from e`,
      [accountId, endpoint, prefix === 'o' ? 5000 : prefix === 'h' ? 2000 : 3000, destination, accountId, endpoint],
    );
    await insertDeliveries('o', other.endpointId, other.destinationIds[0]!, ', next_attempt_at', ', null');
    await sql('analyze delivery');
    await insertDeliveries('h', endpointId, destinationId, ', next_attempt_at, lease_id, locked_until', ", now(), 'l' || id, now() + interval '30 s'");
    await sql(`update delivery set status = 'delivered', next_attempt_at = null, lease_id = null, locked_until = null where destination_id = ?`, [destinationId]);
    await insertDeliveries('w', endpointId, destinationId, ', next_attempt_at', ", now() - interval '1 min'");
    await onQueueSession(async (client) => {
      await client.query(`prepare claim_plan as ${CLAIM_DUE.text}`);
      const explained = await client.query(`explain (format json) execute claim_plan(16, 30000, 32, 'lease')`);
      const nodes = planNodes(explained.rows[0]['QUERY PLAN'][0].Plan);
      const onQueue = nodes.filter((node) => historyRelation('delivery').test(node['Relation Name']) || historyRelation('event').test(node['Relation Name']));
      expect(nodes.filter((node) => String(node['Node Type']).startsWith('Bitmap'))).toEqual([]);
      expect(onQueue.filter((node) => node['Node Type'] === 'Seq Scan')).toEqual([]);
      // no walk of a whole index either: every index scan on the queue has a condition
      expect(onQueue.filter((node) => String(node['Node Type']).startsWith('Index') && !node['Index Cond'])).toEqual([]);
      // of delivery's partitions, only the queue is read (DELIVERY_OPEN prunes the history's: migration 021); `delivery` is the update's target
      expect([...new Set(onQueue.map((node) => node['Relation Name']).filter((name) => name !== 'delivery' && historyRelation('delivery').test(name)))]).toEqual(['delivery_open']);
      // each partition's leased and due index once (the history is partitioned: docs/retention.md#partitions)
      for (const index of [historyIndex('delivery', 'leased_idx'), historyIndex('delivery', 'due_idx')]) {
        const scans = onQueue.filter((node) => index.test(node['Index Name']));
        expect(scans.length).toBeGreaterThanOrEqual(1);
        expect(new Set(scans.map((node) => node['Relation Name'])).size).toBe(scans.length);
      }
      // an ordered delivery's turn is one probe of the ordered index (delivery_ordered_idx, with its condition: checked above)
      expect(onQueue.filter((node) => /_ordered_idx$/.test(node['Index Name'])).map((node) => node['Relation Name'])).toEqual(['delivery_open']);
      // every other row is found by its key
      const probes = onQueue.filter((node) => String(node['Node Type']).startsWith('Index') && !/_(leased|due|ordered)_idx$/.test(node['Index Name']));
      expect(probes.length).toBeGreaterThanOrEqual(2);
      for (const probe of probes) expect(probe['Index Name']).toMatch(new RegExp(`${historyKey('delivery').source}|${historyKey('event').source}`));
    });
  });
});

describe('the listen claim plan', () => {
  it('on the queue\'s connections (one plan for every value): walks its destination\'s due index in order, past a history of moved rows, and stops at the limit', async () => {
    const cli = await insertEndpoint(sql, accountId, [{ type: 'cli' }]);
    const destination = cli.destinationIds[0]!;
    const insertDeliveries = (prefix: string, count: number, columns: string, values: string) => sql(
      `with e as (
         insert into event (id, account_id, endpoint_id, method, path, query, headers, body, size, received_at)
         select 'evt_${prefix}' || lpad(g::text, 8, '0'), ?, ?, 'POST', '', '', '{}', '\\x00', 1, now() from generate_series(1, ?) g
         returning id
       )
       insert into delivery (event_id, destination_id, account_id, endpoint_id, status${columns}) select id, ?, ?, ?, 'pending'${values} from e`,
      [accountId, cli.endpointId, count, destination, accountId, cli.endpointId],
    );
    // delivered ones, moved out of the queue (their entries in its indexes are dead), then a backlog
    await insertDeliveries('lh', 3000, ', next_attempt_at', ", now() - interval '2 min'");
    await sql(`update delivery set status = 'delivered', next_attempt_at = null where destination_id = ?`, [destination]);
    await insertDeliveries('lw', 3000, ', next_attempt_at', ", now() - interval '1 min'");
    await onQueueSession(async (client) => {
      await client.query(`prepare listen_plan as ${CLAIM_LISTEN.text}`);
      const explained = await client.query(`explain (analyze, format json) execute listen_plan('${destination}', '', 32, 30000, 'lease', null, '${accountId}')`);
      const nodes = planNodes(explained.rows[0]['QUERY PLAN'][0].Plan);
      const onDelivery = nodes.filter((node) => historyRelation('delivery').test(node['Relation Name']) && String(node['Node Type']).includes('Scan'));
      expect(nodes.filter((node) => node['Node Type'] === 'Sort' || String(node['Node Type']).startsWith('Bitmap') || node['Node Type'] === 'Seq Scan')).toEqual([]);
      const walk = onDelivery.filter((node) => historyIndex('delivery', 'due_idx').test(node['Index Name']));
      expect(walk).toHaveLength(1);
      // it stops at the limit: no more rows read from the walk than it returns (32 claimed of 3,000 due)
      expect(walk[0]!['Actual Rows']).toBeLessThanOrEqual(32);
      // from a cursor, the walk starts at it: the place is in the index condition, not a filter after it
      await client.query(`prepare listen_after_plan as ${CLAIM_LISTEN_AFTER.text}`);
      const after = await client.query(`explain (format json) execute listen_after_plan('${destination}', '', 32, 30000, 'lease', null, '${accountId}', now() - interval '90 s', '')`);
      const [afterWalk] = planNodes(after.rows[0]['QUERY PLAN'][0].Plan).filter((node) => historyIndex('delivery', 'due_idx').test(node['Index Name']));
      expect(String(afterWalk!['Index Cond'])).toMatch(/ROW\(next_attempt_at, event_id\) > ROW\(/);
    });
  });
});

describe('the queue executor', () => {
  it('moves deliveries along on sessions of its own (index plans, commits without waiting for the flush); the ORM\'s pool commits durably', async () => {
    const show = 'select current_setting(\'synchronous_commit\') as commit, current_setting(\'enable_seqscan\') as seqscan';
    const queueSession = await queueExecutor(orm).transaction(async (client) => (await client.query(show)).rows[0]);
    expect(queueSession).toEqual({ commit: 'off', seqscan: 'off' });
    const [ormSession] = await sql(show);
    expect(ormSession).toEqual({ commit: 'on', seqscan: 'on' });
  });
});

describe('the record statement plan', () => {
  it('made on the queue\'s connections while the table was small, finds each delivery by its key rather than scanning the table', async () => {
    // A prepared statement keeps its plan for the life of its connection: one made while
    // the queue was small (a new relay) is the one used as it grows. Planned normally, it
    // hashes the input and scans the whole delivery table per statement.
    await sql(
      `with e as (
         insert into event (id, account_id, endpoint_id, method, path, query, headers, body, size, received_at)
         select 'evt_s' || lpad(g::text, 8, '0'), ?, ?, 'POST', '', '', '{}', '\\x00', 1, now() from generate_series(1, 20) g
         returning id
       )
       insert into delivery (event_id, destination_id, account_id, endpoint_id, status) select id, ?, ?, ?, 'pending' from e`,
      [accountId, endpointId, destinationId, accountId, endpointId],
    );
    await sql('analyze delivery');
    const nodes = await queueExecutor(orm).transaction(async (client) => {
      await client.query('set local plan_cache_mode = force_generic_plan');
      await client.query(`prepare record_plan as ${RECORD_RESULTS.text}`);
      const arrays = RECORD_INPUT.columns.map(() => `'{}'`).join(', ');
      const explained = await client.query(`explain (format json) execute record_plan(${arrays}, 10, 86400000, 'channel')`);
      return planNodes(explained.rows[0]['QUERY PLAN'][0].Plan);
    });
    const onDelivery = nodes.filter((node) => historyRelation('delivery').test(node['Relation Name']) && String(node['Node Type']).endsWith('Scan'));
    expect(onDelivery.length).toBeGreaterThan(0);
    expect(onDelivery.filter((node) => node['Node Type'] === 'Seq Scan' || String(node['Node Type']).startsWith('Bitmap'))).toEqual([]);
    expect(onDelivery.filter((node) => !node['Index Cond'])).toEqual([]);
    // the healthy path's statement touches no issue table (a batch with a failure takes RECORD_GROUPED_RESULTS)
    expect(nodes.filter((node) => /^issue/.test(String(node['Relation Name'] ?? '')))).toEqual([]);
  });

  it('with failures (the grouped statement), finds each destination, endpoint, issue and covered event by its key', async () => {
    await sql(`insert into issue (id, account_id, endpoint_id, destination_id, kind, first_seen_at, last_seen_at, opened_at, last_event_id)
               select 'iss_' || lpad(g::text, 26, '0'), ?, ?, ?, (array['http_5xx', 'http_4xx', 'timeout'])[g], now(), now(), now(), 'evt_x'
               from generate_series(1, 3) g`, [accountId, endpointId, destinationId]);
    await sql(`insert into issue_event (issue_id, event_id, account_id, first_failed_at, last_failed_at)
               select 'iss_' || lpad('1', 26, '0'), 'evt_s' || lpad(g::text, 8, '0'), ?, now(), now() from generate_series(1, 20) g`, [accountId]);
    await sql('analyze issue, issue_event, destination, endpoint');
    const plan = (statement: string) => queueExecutor(orm).transaction(async (client) => {
      await client.query('set local plan_cache_mode = force_generic_plan');
      await client.query(`prepare plan_of as ${statement}`);
      const arrays = RECORD_INPUT.columns.map(() => `'{}'`).join(', ');
      const explained = await client.query(`explain (format json) execute plan_of(${arrays}, 10, 86400000, 'channel')`);
      await client.query('deallocate plan_of');
      return planNodes(explained.rows[0]['QUERY PLAN'][0].Plan);
    });
    const scans = (nodes: Record<string, any>[], tables: RegExp) => nodes.filter((node) => tables.test(String(node['Relation Name'] ?? '')) && String(node['Node Type']).endsWith('Scan'));
    const unkeyed = (nodes: Record<string, any>[]) => nodes.filter((node) => node['Node Type'] === 'Seq Scan' || !node['Index Cond']);
    const grouped = await plan(RECORD_GROUPED_RESULTS.text);
    const onIssues = scans(grouped, /^(issue|issue_event)$/);
    expect(new Set(onIssues.map((node) => node['Relation Name']))).toEqual(new Set(['issue', 'issue_event']));
    expect(unkeyed(onIssues)).toEqual([]);
    // the grouping's look-ups of destinations and endpoints are by key: it adds no scan without one to the healthy statement's
    const tables = /^(destination|endpoint)$/;
    expect(scans(grouped, tables).length).toBeGreaterThan(scans(await plan(RECORD_RESULTS.text), tables).length);
    expect(unkeyed(scans(grouped, tables)).length).toBe(unkeyed(scans(await plan(RECORD_RESULTS.text), tables)).length);
  });
});

describe('refreshQueueStatistics', () => {
  // the queue is delivery's partition of open deliveries (migration 021)
  const estimatedRows = async (): Promise<number> => Number((await sql(`select reltuples from pg_class where relname = 'delivery_open'`))[0].reltuples);

  it('analyses a table with rows, and leaves an emptied one as it was so it is not taken for empty while it refills', async () => {
    await due(300);
    expect(await refreshQueueStatistics(orm)).toBe(true);
    expect(await estimatedRows()).toBe(300);
    await sql('delete from delivery');
    expect(await refreshQueueStatistics(orm)).toBe(false);
    expect(await estimatedRows()).toBe(300);
    await due(10);
    expect(await refreshQueueStatistics(orm)).toBe(true);
    expect(await estimatedRows()).toBe(10);
  });
});

describe('a delivery moved to another partition meanwhile', () => {
  it('a replay that waited for a delivery another transaction finished (moving it from the queue to its history leaf) runs again and replays it', async () => {
    const [id] = await due(1);
    const where = async () => (await sql('select tableoid::regclass::text as relname from delivery where event_id = ?', [id]))[0].relname as string;
    expect(await where()).toBe('delivery_open');
    const finisher = new pg.Client({ connectionString: database.url });
    await finisher.connect();
    try {
      await finisher.query('begin');
      await finisher.query(`update delivery set status = 'delivered', next_attempt_at = null where event_id = $1`, [id]);
      const replaying = replayEvent(orm, { eventId: id!, accountId, leaseMs: 60_000 });
      // the replay waits for the finisher's row lock, then meets the row gone to another partition (serialization_failure)
      await expect.poll(async () => (await sql('select count(*)::int as n from pg_locks where not granted'))[0].n).toBeGreaterThan(0);
      await finisher.query('commit');
      expect((await replaying).map((outcome) => outcome.kind)).toEqual(['claimed']);
    } finally {
      await finisher.end();
    }
    expect(await where()).toBe('delivery_open');
  });
});
