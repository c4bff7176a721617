/**
 * Migration 009 (destinations and the delivery queue) on a database filled as the code
 * before it stored things: endpoints of every kind, 100,000 events in every state
 * (delivered, failed, filtered, retrying, pending due, pending under a live lease, a
 * replay queued, `hook listen` events waiting or retrying) and their attempts. After the
 * migration every event has exactly the delivery it had, nothing is lost, and a relay
 * started on it delivers exactly what was due: nothing already delivered goes again.
 * HOOK_MIGRATION_TEST_EVENTS scales it (the figure per million in docs/deployment.md).
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createOrm } from '@hook/db';
import { adminQuery, withDatabase } from '@hook/db/testing';
import { inject } from 'vitest';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startRelayProcess } from '../support/relay-process.ts';

const EVENTS = Number(process.env.HOOK_MIGRATION_TEST_EVENTS ?? 100_000);
const name = `hook_migration_${process.pid}_${Date.now()}`;
const children: ChildProcess[] = [];
let receiver: Receiver | undefined;

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await receiver?.close();
  await adminQuery(inject('databaseServerUrl'), `drop database if exists ${name} with (force)`);
});

/**
 * Each event's state by its number g (one in STATES.length of each), as the old code
 * left it: [status, endpoint, attempt_count, auto_attempts, next_attempt_at, next_trigger, leased].
 */
const STATES = [
  `('delivered', 'url', 1, 1, null, 'auto', false)`,
  `('failed', 'url', 7, 7, null, 'auto', false)`,
  `('filtered', 'url', 0, 0, null, 'auto', false)`,
  `('retrying', 'url', 2, 2, now() + interval '1 hour', 'auto', false)`,
  `('delivered', 'cli', 1, 1, null, 'auto', false)`,
  `('pending', 'cli', 0, 0, null, 'auto', false)`,
  `('retrying', 'cli', 1, 1, now() + interval '1 hour', 'auto', false)`,
];
/** Rare states, by event number: what a relay started on the migrated database must deliver (or leave alone). */
const DUE_PENDING = 60; // pending URL events due now
const REPLAY_QUEUED = 20; // delivered URL events with a replay queued
const LEASED = 20; // pending URL events under a live lease of a relay that is gone (due again once it runs out)

async function fill(client: pg.Client, ids: { account: string; url: string; cli: string; gone: string; paused: string }, receiverUrl: string): Promise<void> {
  await client.query(`insert into account (id, plan, created_at) values ($1, 'enterprise', now())`, [ids.account]);
  for (const [id, type, url, status] of [[ids.url, 'url', receiverUrl, 'active'], [ids.cli, 'cli', null, 'active'], [ids.gone, 'url', `${receiverUrl}/gone`, 'disabled'], [ids.paused, 'url', `${receiverUrl}/paused`, 'paused']] as const) {
    await client.query(
      `insert into endpoint (id, account_id, name, ingest_id, status, destination_type, destination_url, secret, transformation_code, filter, created_at, updated_at)
       values ($1, $2, $1, 'ingest-' || $1, $3, $4, $5, 'whsec_bWlncmF0aW9uLXRlc3Qtc2VjcmV0LWtleS1tYXRlcmlhbA==', $6, $7, now(), now())`,
      [id, ids.account, status, type, url, id === ids.paused ? "addHandler('transform', (r) => r)" : null, id === ids.paused ? { body: { type: 'x' } } : null],
    );
  }
  const chunk = 50_000;
  for (let from = 0; from < EVENTS; from += chunk) {
    const to = Math.min(EVENTS, from + chunk) - 1;
    await client.query(
      `insert into event (id, account_id, endpoint_id, type, method, path, query, headers, body, content_type, size, received_at,
                          status, attempt_count, auto_attempts, next_attempt_at, next_trigger, lease_id, locked_until)
       select 'evt_' || to_char(g, 'FM0000000000') || 'MIGRATION0000000', $1,
              case when s.kind = 'cli' then $3 else $2 end, 'invoice.paid', 'POST', '', '', '{"content-type":"application/json"}'::jsonb,
              convert_to('{"n":' || g || '}', 'UTF8'), 'application/json', 10, now() - interval '1 day',
              s.status, s.attempts, s.auto, s.next_at, s.trigger, case when s.leased then 'old-relay.' || g end,
              case when s.leased then now() + interval '5 seconds' end
       from generate_series($4::int, $5::int) g
       cross join lateral (select * from (values ${STATES.join(', ')}) as v(status, kind, attempts, auto, next_at, trigger, leased) offset g % ${STATES.length} limit 1) s`,
      [ids.account, ids.url, ids.cli, from, to],
    );
  }
  // The rare states, on URL events: due now, replay queued, leased by a relay that is gone.
  const urlEvents = (await client.query<{ id: string }>(`select id from event where endpoint_id = $1 and status = 'filtered' order by id limit $2`, [ids.url, DUE_PENDING + REPLAY_QUEUED + LEASED])).rows.map((row) => row.id);
  await client.query(`update event set status = 'pending', attempt_count = 0, next_attempt_at = now() where id = any($1)`, [urlEvents.slice(0, DUE_PENDING)]);
  await client.query(`update event set status = 'delivered', attempt_count = 1, auto_attempts = 1, next_trigger = 'replay', next_attempt_at = now() where id = any($1)`, [urlEvents.slice(DUE_PENDING, DUE_PENDING + REPLAY_QUEUED)]);
  await client.query(`update event set status = 'pending', next_attempt_at = now(), lease_id = 'old-relay.' || id, locked_until = now() + interval '3 seconds' where id = any($1)`, [urlEvents.slice(DUE_PENDING + REPLAY_QUEUED)]);
  // Paused endpoint's events wait; the disabled endpoint's are delivered, with their attempts.
  await client.query(`update event set endpoint_id = $2, status = 'pending', attempt_count = 0, next_attempt_at = now() where id in (select id from event where endpoint_id = $1 and status = 'failed' order by id limit 30)`, [ids.url, ids.paused]);
  await client.query(`update event set endpoint_id = $2 where id in (select id from event where endpoint_id = $1 and status = 'delivered' and next_trigger = 'auto' order by id limit 30)`, [ids.url, ids.gone]);
  await client.query(
    `insert into attempt (id, event_id, account_id, n, trigger, started_at, duration_ms, response_status, response_body, error)
     select 'att_' || substr(e.id, 5) || lpad(n::text, 3, '0'), e.id, e.account_id, n, case when p.destination_type = 'cli' then 'listen' else 'auto' end,
            now() - interval '1 day', 12, case when e.status = 'delivered' and n = e.attempt_count then 200 else 500 end, null, null
     from event e join endpoint p on p.id = e.endpoint_id cross join lateral generate_series(1, e.attempt_count) n`,
  );
}

describe('migration 009-destinations', () => {
  it(`carries ${EVENTS.toLocaleString('en')} events in every state into deliveries with nothing lost, and a relay on it delivers only what was due`, async () => {
    const serverUrl = inject('databaseServerUrl');
    await adminQuery(serverUrl, `create database ${name}`);
    const url = withDatabase(serverUrl, name);
    const orm = await createOrm({ databaseUrl: url, poolMax: 2 });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    receiver = await startReceiver();
    const ids = { account: 'acct_01MIGRATIONTEST0000000000', url: 'ep_01MIGRATIONURL00000000000', cli: 'ep_01MIGRATIONCLI00000000000', gone: 'ep_01MIGRATIONGONE0000000000', paused: 'ep_01MIGRATIONPAUSED00000000' };
    try {
      await orm.migrator.up({ to: '008-transformation-cpu' });
      const fillStarted = performance.now();
      await fill(client, ids, receiver.url);
      await client.query('vacuum analyze');
      const before = (await client.query(`select id, endpoint_id, status, attempt_count, auto_attempts, next_attempt_at, next_trigger, lease_id from event`)).rows;
      const attemptsBefore = Number((await client.query('select count(*) from attempt')).rows[0].count);
      console.info(`migration: filled ${before.length} events and ${attemptsBefore} attempts in ${((performance.now() - fillStarted) / 1000).toFixed(1)} s`);
      expect(before).toHaveLength(EVENTS);
      expect(new Set(before.map((row) => row.status))).toEqual(new Set(['pending', 'delivered', 'retrying', 'failed', 'filtered']));

      const started = performance.now();
      expect((await orm.migrator.up({ to: '009-destinations' })).map((migration) => migration.name)).toEqual(['009-destinations']);
      const seconds = (performance.now() - started) / 1000;
      console.info(`migration: 009-destinations took ${seconds.toFixed(2)} s for ${EVENTS} events (${(seconds * 1_000_000 / EVENTS).toFixed(0)} s per million events)`);

      // Every event has exactly the delivery it had, to its endpoint's first destination.
      const deliveries = new Map((await client.query(`select * from delivery`)).rows.map((row) => [row.event_id, row]));
      expect(deliveries.size).toBe(EVENTS);
      for (const event of before) {
        const delivery = deliveries.get(event.id);
        expect(delivery, event.id).toMatchObject({
          destination_id: `dst_${event.endpoint_id.slice(3)}`, endpoint_id: event.endpoint_id, status: event.status,
          attempt_count: event.attempt_count, auto_attempts: event.auto_attempts, next_trigger: event.next_trigger, lease_id: event.lease_id,
        });
        // A listener's waiting events are due for the next listener's claim; nothing else changes its due time.
        const waiting = event.endpoint_id === ids.cli && event.status === 'pending';
        expect(delivery.next_attempt_at?.getTime() ?? null, event.id).toBe(waiting ? delivery.next_attempt_at.getTime() : event.next_attempt_at?.getTime() ?? null);
        if (waiting) expect(delivery.next_attempt_at, event.id).not.toBeNull();
      }
      expect(Number((await client.query('select count(*) from event where delivery_count <> 1')).rows[0].count)).toBe(0);
      expect(Number((await client.query('select count(*) from attempt')).rows[0].count)).toBe(attemptsBefore);
      expect(Number((await client.query(`select count(*) from attempt a join event e on e.id = a.event_id where a.destination_id is distinct from 'dst_' || substr(e.endpoint_id, 4)`)).rows[0].count)).toBe(0);
      const destinations = (await client.query(`select endpoint_id, type, url, status, disabled_reason, secret, transformation_code, filter from destination order by endpoint_id`)).rows;
      expect(destinations).toHaveLength(4);
      expect(destinations.find((row) => row.endpoint_id === ids.gone)).toMatchObject({ status: 'disabled', disabled_reason: 'gone_410' });
      expect(destinations.find((row) => row.endpoint_id === ids.paused)).toMatchObject({ status: 'active', transformation_code: "addHandler('transform', (r) => r)", filter: { body: { type: 'x' } } });
      expect(destinations.find((row) => row.endpoint_id === ids.cli)).toMatchObject({ type: 'cli', url: null });

      // A relay on the migrated database delivers exactly what was due: pending, replays, and
      // the gone relay's leased ones once their lease runs out. Nothing delivered goes again.
      const relay = await startRelayProcess(url, { HOOK_LOG_LEVEL: 'error' });
      children.push(relay.child);
      const due = before.filter((event) => event.endpoint_id === ids.url && (event.next_trigger === 'replay' || (event.status === 'pending' && event.next_attempt_at !== null)));
      expect(due).toHaveLength(DUE_PENDING + REPLAY_QUEUED + LEASED);
      await receiver.waitFor(due.length, 30_000);
      // The due ones recorded delivered, and no lease held anywhere: no process has a delivery it could send (again).
      await expect.poll(async () => (await client.query(`select count(*)::int as n from delivery where lease_id is not null or (event_id = any($1) and status <> 'delivered')`, [due.map((event) => event.id)])).rows[0].n, { timeout: 30_000 }).toBe(0);
      const delivered = receiver.requests.map((request) => String(request.headers['webhook-id']));
      expect(delivered.sort()).toEqual(due.map((event) => event.id).sort());
      const after = (await client.query(`select status, count(*)::int as n from delivery where event_id = any($1) group by status`, [due.map((event) => event.id)])).rows;
      expect(after).toEqual([{ status: 'delivered', n: due.length }]);
    } finally {
      await client.end();
      await orm.close();
    }
  }, 300_000);
});
