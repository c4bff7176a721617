import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { firstIdAt, newId } from '@hook/core';
import pg from 'pg';
import { claimDueEvents, createOrm, DUE_CHANNEL, EventWriter, listenBacklog, recordAttempts, refreshQueueStatistics, type NewEvent, type Orm } from '../src/index.ts';
import { CLAIM_DUE } from '../src/queue-sql.ts';
import type { TestDatabase } from '../src/testing.ts';
import { freshDatabase } from '../../../test/support/database.ts';

let database: TestDatabase;
let orm: Orm;
const accountId = newId('account');
const endpointId = newId('endpoint');
/** An endpoint whose events are only stored (a CLI destination nobody listens to). */
const otherEndpointId = newId('endpoint');

async function sql(text: string, params: unknown[] = []): Promise<any[]> {
  return orm.em.fork().getConnection().execute(text, params);
}

beforeAll(async () => {
  database = await freshDatabase();
  orm = await createOrm({ databaseUrl: database.url, poolMax: 20 });
  await sql('insert into account (id, plan, created_at) values (?, ?, now())', [accountId, 'free']);
  await sql(
    `insert into endpoint (id, account_id, name, ingest_id, status, destination_type, destination_url, secret, created_at, updated_at)
     values (?, ?, 'q', 'ingest-q', 'active', 'url', 'http://127.0.0.1:9/x', 'whsec_AAAA', now(), now())`,
    [endpointId, accountId],
  );
  await sql(
    `insert into endpoint (id, account_id, name, ingest_id, status, destination_type, destination_url, secret, created_at, updated_at)
     values (?, ?, 'o', 'ingest-o', 'active', 'cli', null, 'whsec_AAAA', now(), now())`,
    [otherEndpointId, accountId],
  );
});
afterAll(async () => {
  await orm.close();
  await database.drop();
});
beforeEach(async () => {
  await sql('delete from attempt');
  await sql('delete from event');
});

async function due(count: number): Promise<string[]> {
  const writer = new EventWriter(orm);
  const now = new Date(Date.now() - 1000);
  const events: NewEvent[] = Array.from({ length: count }, (_, i) => ({
    id: newId('event'), accountId, endpointId, type: null, method: 'POST', path: '', query: '', headers: {}, body: Buffer.from(`e${i}`),
    contentType: null, size: 2, receivedAt: now, status: 'pending', nextAttemptAt: now,
  }));
  await Promise.all(events.map((event) => writer.write(event)));
  return events.map((event) => event.id);
}

describe('claimDueEvents', () => {
  it('never hands one event to two concurrent claimers', async () => {
    const ids = await due(300);
    const claims = await Promise.all(Array.from({ length: 12 }, () => claimDueEvents(orm, { limit: 40, leaseMs: 60_000, perEndpointLimit: 1000 })));
    const claimed = claims.flat().map((delivery) => delivery.id);
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.every((id) => ids.includes(id))).toBe(true);
    // Claimed ones are leased: a second round takes only what is left.
    const rest = await claimDueEvents(orm, { limit: 1000, leaseMs: 60_000, perEndpointLimit: 1000 });
    expect(rest.length + claimed.length).toBe(300);
    expect(rest.some((delivery) => claimed.includes(delivery.id))).toBe(false);
  });

  it('keeps an endpoint within its in-flight limit, and takes events in arrival order', async () => {
    const ids = await due(10);
    const first = await claimDueEvents(orm, { limit: 10, leaseMs: 60_000, perEndpointLimit: 3 });
    expect(first.map((delivery) => delivery.id)).toEqual(ids.slice(0, 3));
    expect(await claimDueEvents(orm, { limit: 10, leaseMs: 60_000, perEndpointLimit: 3 })).toEqual([]);
  });

  it('gives an expired lease to the next claimer, and only the lease holder moves the event on', async () => {
    const [id] = await due(1);
    const [stale] = await claimDueEvents(orm, { limit: 1, leaseMs: 50, perEndpointLimit: 10 });
    expect(stale!.id).toBe(id);
    expect(await claimDueEvents(orm, { limit: 1, leaseMs: 50, perEndpointLimit: 10 })).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    const [fresh] = await claimDueEvents(orm, { limit: 1, leaseMs: 60_000, perEndpointLimit: 10 });
    expect(fresh!.id).toBe(id);
    expect(fresh!.leaseId).not.toBe(stale!.leaseId);

    const attempt = { startedAt: new Date(), durationMs: 5, responseStatus: 200, responseBody: 'ok', error: null };
    const delivered = { status: 'delivered' as const, autoAttempts: 1, nextAttemptAt: null };
    expect(await recordAttempts(orm, [{ ...attempt, id: newId('attempt'), delivery: stale!, next: delivered }])).toEqual([false]);
    const [afterStale] = await sql('select status, lease_id from event where id = ?', [id]);
    expect(afterStale).toEqual({ status: 'pending', lease_id: fresh!.leaseId });
    expect(await recordAttempts(orm, [{ ...attempt, id: newId('attempt'), delivery: fresh!, next: delivered }])).toEqual([true]);
    const [after] = await sql('select status, lease_id, attempt_count, next_attempt_at from event where id = ?', [id]);
    expect(after).toEqual({ status: 'delivered', lease_id: null, attempt_count: 1, next_attempt_at: null });
    expect(await sql('select count(*)::int as n from attempt where event_id = ?', [id])).toEqual([{ n: 2 }]);
  });

  it('skips paused endpoints and leaves their events waiting', async () => {
    await due(2);
    await sql("update endpoint set status = 'paused' where id = ?", [endpointId]);
    try {
      expect(await claimDueEvents(orm, { limit: 10, leaseMs: 60_000, perEndpointLimit: 10 })).toEqual([]);
    } finally {
      await sql("update endpoint set status = 'active' where id = ?", [endpointId]);
    }
    expect(await claimDueEvents(orm, { limit: 10, leaseMs: 60_000, perEndpointLimit: 10 })).toHaveLength(2);
  });
});

describe('insertEvents with a lease (the shortcut for new events)', () => {
  function leasedEvent(endpoint: string, leaseId: string | null): NewEvent {
    const now = new Date();
    return {
      id: newId('event'), accountId, endpointId: endpoint, type: null, method: 'POST', path: '', query: '', headers: { 'x-a': '1' },
      body: Buffer.from([0xff, 0x00, 0x01]), contentType: null, size: 3, receivedAt: now, status: 'pending', nextAttemptAt: now,
      lease: leaseId ? { id: leaseId, ms: 60_000 } : null,
    };
  }

  async function notificationsDuring(action: () => Promise<unknown>): Promise<number> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    let count = 0;
    client.on('notification', () => (count += 1));
    await client.query(`listen ${DUE_CHANNEL}`);
    try {
      await action();
      await new Promise((resolve) => setTimeout(resolve, 100));
      return count;
    } finally {
      await client.end();
    }
  }

  it('stores the event claimed and returns its delivery, without waking the workers', async () => {
    const event = leasedEvent(endpointId, 'lease.1');
    let outcome: Awaited<ReturnType<EventWriter['write']>> | undefined;
    expect(await notificationsDuring(async () => (outcome = await new EventWriter(orm).write(event)))).toBe(0);
    const delivery = outcome?.stored ? outcome.delivery : null;
    expect(delivery).toMatchObject({ id: event.id, leaseId: 'lease.1', destinationUrl: 'http://127.0.0.1:9/x', secrets: ['whsec_AAAA'], attemptCount: 0, trigger: 'auto' });
    expect(delivery!.body.equals(event.body)).toBe(true);
    const [row] = await sql('select lease_id, locked_until > now() + interval \'50 seconds\' as long_lease from event where id = ?', [event.id]);
    expect(row).toEqual({ lease_id: 'lease.1', long_lease: true });
    // Nobody else can claim it while the lease holds.
    expect(await claimDueEvents(orm, { limit: 10, leaseMs: 60_000, perEndpointLimit: 10 })).toEqual([]);
  });

  it('stores the event unclaimed, and wakes the workers, when the endpoint is paused by then', async () => {
    const pausedId = newId('endpoint');
    await sql(
      `insert into endpoint (id, account_id, name, ingest_id, status, destination_type, destination_url, secret, created_at, updated_at)
       values (?, ?, 'paused', ?, 'paused', 'url', 'http://127.0.0.1:9/p', 'whsec_BBBB', now(), now())`,
      [pausedId, accountId, `ingest-${pausedId}`],
    );
    const writer = new EventWriter(orm);
    const paused = leasedEvent(pausedId, 'lease.2');
    const active = leasedEvent(endpointId, 'lease.3');
    let results: unknown[] = [];
    expect(await notificationsDuring(async () => (results = await Promise.all([writer.write(paused), writer.write(active)])))).toBeGreaterThan(0);
    expect(results[0]).toEqual({ stored: true, delivery: null });
    expect(results[1]).toMatchObject({ stored: true, delivery: { id: active.id, leaseId: 'lease.3' } });
    const rows = await sql('select id, lease_id, locked_until from event where id in (?, ?) order by id', [paused.id, active.id]);
    expect(rows.find((row) => row.id === paused.id)).toMatchObject({ lease_id: null, locked_until: null });
  });
});

describe('listenBacklog', () => {
  it('offers pending events from the floor up and due retries from anywhere, oldest first', async () => {
    const cliId = newId('endpoint');
    await sql(
      `insert into endpoint (id, account_id, name, ingest_id, status, destination_type, secret, created_at, updated_at)
       values (?, ?, 'cli', ?, 'active', 'cli', 'whsec_CCCC', now(), now())`,
      [cliId, accountId, `ingest-${cliId}`],
    );
    const writer = new EventWriter(orm);
    const at = (offsetMs: number): NewEvent => {
      const receivedAt = new Date(Date.now() - 120_000 + offsetMs);
      return {
        // An id made at receivedAt (newId never goes back in time, so it would not do for past times).
        id: `${firstIdAt('event', receivedAt.getTime()).slice(0, -6)}${String(offsetMs % 1_000_000).padStart(6, '0')}`, accountId, endpointId: cliId, type: null, method: 'POST', path: '', query: '', headers: {},
        body: Buffer.from('x'), contentType: null, size: 1, receivedAt, status: 'pending', nextAttemptAt: null,
      };
    };
    const [oldPending, oldRetry, notDue, newPending] = [at(0), at(1000), at(2000), at(60_000)];
    for (const event of [oldPending, oldRetry, notDue, newPending]) await writer.write(event);
    await sql("update event set status = 'retrying', next_attempt_at = now() - interval '1 second' where id = ?", [oldRetry.id]);
    await sql("update event set status = 'retrying', next_attempt_at = now() + interval '1 hour' where id = ?", [notDue.id]);
    const read = (pendingFromId: string, excludeIds: string[] = []) =>
      listenBacklog(orm, { endpointId: cliId, since: null, pendingFromId, excludeIds, limit: 10 }).then((events) => events.map((event) => event.id));

    expect(await read('')).toEqual([oldPending.id, oldRetry.id, newPending.id]);
    const floor = firstIdAt('event', newPending.receivedAt.getTime() - 1000);
    expect(await read(floor)).toEqual([oldRetry.id, newPending.id]); // below the floor only the due retry
    expect(await read('', [oldRetry.id, oldPending.id])).toEqual([newPending.id]);
  });
});

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function planNodes(node: Record<string, any>): Record<string, any>[] {
  return [node, ...((node.Plans as Record<string, any>[] | undefined) ?? []).flatMap(planNodes)];
}

describe('the claim statement plan', () => {
  it('with statistics a backlog outgrew: counts live leases in their index, walks the due index once, in order, and finds every other row by primary key', async () => {
    // Statistics taken while the table held 5,000 events of another endpoint and none of
    // this one's (as in bench:delivery's throughput phase), then a backlog of 3,000 due
    // events behind a history of 2,000 delivered ones whose claimed versions are dead:
    // what a claim meets when events arrive faster than the statistics are refreshed.
    await sql(
      `insert into event (id, account_id, endpoint_id, method, path, query, headers, body, size, received_at, status, next_attempt_at)
       select 'evt_o' || lpad(g::text, 8, '0'), ?, ?, 'POST', '', '', '{}', '\\x00', 1, now(), 'pending', null
       from generate_series(1, 5000) g`,
      [accountId, otherEndpointId],
    );
    await sql('analyze event');
    await sql(
      `insert into event (id, account_id, endpoint_id, method, path, query, headers, body, size, received_at, status, next_attempt_at, lease_id, locked_until)
       select 'evt_h' || lpad(g::text, 8, '0'), ?, ?, 'POST', '', '', '{}', '\\x00', 1, now(), 'pending', now(), 'l' || g, now() + interval '30 s'
       from generate_series(1, 2000) g`,
      [accountId, endpointId],
    );
    await sql(`update event set status = 'delivered', next_attempt_at = null, lease_id = null, locked_until = null where endpoint_id = ?`, [endpointId]);
    await sql(
      `insert into event (id, account_id, endpoint_id, method, path, query, headers, body, size, received_at, status, next_attempt_at)
       select 'evt_w' || lpad(g::text, 8, '0'), ?, ?, 'POST', '', '', '{}', '\\x00', 1, now(), 'pending', now() - interval '1 min'
       from generate_series(1, 3000) g`,
      [accountId, endpointId],
    );
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const settings = Object.entries(CLAIM_DUE.planner).map(([setting, value]) => `set local ${setting} = ${value}`).join('; ');
      await client.query(`begin; ${settings}`);
      await client.query(`prepare claim_plan as ${CLAIM_DUE.text}`);
      const explained = await client.query(`explain (format json) execute claim_plan(16, 30000, 32, 'lease')`);
      const nodes = planNodes(explained.rows[0]['QUERY PLAN'][0].Plan);
      const onEvent = nodes.filter((node) => node['Relation Name'] === 'event');
      expect(nodes.filter((node) => String(node['Node Type']).startsWith('Bitmap'))).toEqual([]);
      expect(onEvent.filter((node) => node['Node Type'] === 'Seq Scan')).toEqual([]);
      // no walk of a whole index either: every index scan on event has a condition
      expect(onEvent.filter((node) => String(node['Node Type']).startsWith('Index') && !node['Index Cond'])).toEqual([]);
      expect(onEvent.filter((node) => node['Index Name'] === 'event_leased_idx')).toHaveLength(1);
      expect(onEvent.filter((node) => node['Index Name'] === 'event_due_idx')).toHaveLength(1);
      // every other row is found by its primary key
      const probes = onEvent.filter((node) => String(node['Node Type']).startsWith('Index') && node['Index Name'] !== 'event_leased_idx' && node['Index Name'] !== 'event_due_idx');
      expect(probes.length).toBeGreaterThanOrEqual(2);
      for (const probe of probes) expect([probe['Index Name'], probe['Index Cond']]).toEqual(['event_pkey', expect.stringMatching(/^\(id = /)]);
    } finally {
      await client.query('rollback');
      await client.end();
    }
  });
});

describe('refreshQueueStatistics', () => {
  const estimatedRows = async (): Promise<number> => Number((await sql(`select reltuples from pg_class where relname = 'event'`))[0].reltuples);

  it('analyses a table with rows, and leaves an emptied one as it was so it is not taken for empty while it refills', async () => {
    await due(300);
    expect(await refreshQueueStatistics(orm)).toBe(true);
    expect(await estimatedRows()).toBe(300);
    await sql('delete from event');
    expect(await refreshQueueStatistics(orm)).toBe(false);
    expect(await estimatedRows()).toBe(300);
    await due(10);
    expect(await refreshQueueStatistics(orm)).toBe(true);
    expect(await estimatedRows()).toBe(10);
  });
});
