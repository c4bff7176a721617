/**
 * Ready for a distributed PostgreSQL (issue 29, docs/scaling.md): the statements a relay
 * sends on its hot path (ingest, the claims, recording results, lists and search, replay)
 * can each be routed to one account's shard of a PostgreSQL distributed by `account_id`
 * (Citus), so the code stays ready for one.
 *
 * A real relay told its database is distributed (HOOK_DATABASE_DISTRIBUTED=citus, so that
 * ingest and result recording send one statement per account), with a delivery worker and
 * a `hook listen` session, runs a scripted session against a real PostgreSQL through a
 * proxy that records every statement it sends with the parameters it was bound to
 * (test/support/sql-capture.ts); each one is
 * parsed by the real PostgreSQL parser and checked with the rule Citus routes by
 * (test/support/shard-routing.ts). A statement that is not routed fails the test unless
 * it is in NOT_ROUTED below, with the reason and what it becomes on Citus (the same list
 * is in docs/scaling.md). An entry that no longer matches anything it names, or whose
 * statement routes now, fails the test too, so the list only shrinks.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import type { TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { api, createEndpoint, sendEvent, signUp, startTestRelay, type TestRelay } from '../support/relay.ts';
import { loadSqlParser, routeStatement, type RoutingVerdict, type ShardLayout } from '../support/shard-routing.ts';
import { startSqlCapture, type CapturedStatement, type SqlCapture } from '../support/sql-capture.ts';

/**
 * Where each table lives on Citus (docs/scaling.md#tables): distributed by account and
 * co-located; `account`, `api_key`, `member` and `console_session` are reference tables
 * (small, rarely written, looked up without an account id), and `rate_limit_counter` and
 * `hook_migrations` stay plain tables on the coordinator, so none of those is listed.
 */
const LAYOUT: ShardLayout = {
  distributed: {
    event: 'account_id',
    event_dedupe_key: 'account_id',
    delivery: 'account_id',
    attempt: 'account_id',
    endpoint: 'account_id',
    destination: 'account_id',
    account_usage: 'account_id',
    notification_outbox: 'account_id',
    plan_change: 'account_id',
    playground_session: 'account_id',
    issue: 'account_id',
    issue_event: 'account_id',
    alert_channel: 'account_id',
    alert_outbox: 'account_id',
  },
  // History partitions (packages/db/src/partitions.ts): event_r0, event_r7, event_r7_20261127, …
  partitionOf: (name) => /^(event|delivery|attempt)_r\d+(_\d+)?$/.exec(name)?.[1] ?? null,
};

/** A statement that is not routed to one shard today, and why. */
interface NotRouted {
  /** The prepared statement's name (a trailing `*` matches any suffix), or a pattern of the statement's text (whitespace collapsed). */
  statement: string | RegExp;
  /**
   * `background`: a job's statement across accounts by design (docs/scaling.md says what it
   * becomes); `lookup`: found by a key that is not an account id; `pending`: a hot-path
   * statement that needs the change in `change` to route.
   */
  kind: 'background' | 'lookup' | 'pending';
  why: string;
  /** For `pending`: the change that makes it route, and whose file it is in. */
  change?: string;
  /** It runs only now and then (a timer), so the session may not see it. */
  sometimes?: true;
}

const NOT_ROUTED: NotRouted[] = [
  // Across accounts by design.
  {
    statement: 'hook_claim_due',
    kind: 'background',
    why: "the workers' claim takes due deliveries of every account's URL destinations; on Citus it becomes a read of open destinations with due work, then one routed claim per destination (claim-listen's shape)",
  },
  {
    statement: /from notification_outbox o left join endpoint p on p\.account_id = o\.account_id/,
    kind: 'background',
    why: 'the notifier takes outbox rows of every account (FOR UPDATE SKIP LOCKED); on Citus it takes them per account (or per shard), each statement routed',
    sometimes: true,
  },
  {
    statement: /^with removed as \(delete from notification_outbox/,
    kind: 'background',
    why: 'the notifier stores the events of the rows it took, of several accounts; on Citus one statement per account',
    sometimes: true,
  },
  {
    statement: /^with looked as \(select s\.id, s\.account_id, s\.destination_id from issue s where s\.status <> 'resolved'/,
    kind: 'background',
    why: 'the issue sweep (jobs/issue-sweep.ts) resolves every account\'s issues whose events were all delivered; on Citus a multi-shard statement, or one per shard',
    sometimes: true,
  },
  {
    statement: /^with looked as \(select ie\.issue_id, ie\.event_id from issue_event ie/,
    kind: 'background',
    why: 'the issue sweep forgets covered events retention removed, a batch of every account\'s rows by event id; on Citus a multi-shard statement, like retention',
    sometimes: true,
  },
  {
    statement: /^with due as \(select id from alert_outbox where status = 'pending' and next_attempt_at <= now\(\)/,
    kind: 'background',
    why: 'the alert sender (jobs/alert-sender.ts) takes due alerts of every account (FOR UPDATE SKIP LOCKED), like the notifier; on Citus it takes them per account (or per shard), each statement routed',
    sometimes: true,
  },
  {
    statement: /^(select account_id, channel, held_back, .* from alert_channel where account_id = any\(|select account_id, channel, count\(\*\)::int as sent from alert_outbox where account_id = any\(|update alert_channel c set held_back = .* from unnest\(|insert into alert_outbox \(account_id, channel, type, payload\) select \* from unnest\()/,
    kind: 'background',
    why: "the notifier queues the alerts of the rows it took (alerts.ts queueAlerts), of several accounts: it locks their channels (FOR UPDATE), counts each channel's last hour and inserts the alerts; on Citus one statement per account, with the notifier's",
    sometimes: true,
  },
  {
    statement: /^delete from alert_outbox where status <> 'pending' and created_at < /,
    kind: 'background',
    why: "the alert sender prunes every account's sent and failed alerts older than a day (alerts.ts pruneAlertOutbox); a multi-shard delete on Citus, like retention",
    sometimes: true,
  },
  {
    statement: 'hook_queue_has_rows',
    kind: 'background',
    why: "the worker's statistics refresh asks whether delivery has any row at all (then ANALYZE, which Citus runs on every shard)",
    sometimes: true,
  },
  {
    statement: /^analyze delivery_open$/,
    kind: 'background',
    why: 'planner statistics of the queue: Citus propagates ANALYZE to every shard',
    sometimes: true,
  },
  {
    statement: /^select a\.id, a\.plan, a\.retention_days, oldest\.id as oldest_event_id from account a cross join lateral/,
    kind: 'background',
    why: "retention's pass over every account with legacy (class 0) history (retention-sql.ts); a multi-shard read on Citus",
    sometimes: true,
  },
  {
    statement: /^with expired as \(select id from event where retention_class = 0 and account_id = /,
    kind: 'background',
    why: "retention's row-by-row pass over one account's legacy (class 0) rows: its attempts and deliveries are deleted by event id only (removeEventsCtes, retention-sql.ts); it would route with `and account_id = ?` in those deletes",
    sometimes: true,
  },
  {
    statement: /^select a\.id, .* as retention_class from account a where .* exists \(select 1 from event_r\d+_\d+ e where e\.account_id = a\.id\)/,
    kind: 'background',
    why: 'partition upkeep: which accounts of an expiring leaf must be kept longer (partitions.ts); a multi-shard read on Citus',
    sometimes: true,
  },
  {
    statement: /^delete from delivery l where l\.layout = 1 and .* and l\.retention_class = \S+ and l\.event_id >= \S+ and l\.event_id < /,
    kind: 'background',
    why: "partition upkeep deletes a dropped period's deliveries still open (in the queue, delivery_open) by a range of event ids in one class (partitions.ts removeDeliveries); a multi-shard delete on Citus",
    sometimes: true,
  },
  {
    statement: /^(select exists \(select 1 from delivery_r0 where event_id >= |delete from delivery where layout = 0 and event_id = any\()/,
    kind: 'background',
    why: "partition upkeep deletes a dropped period's deliveries stored before delivery was partitioned (delivery_r0), by the period's event ids (partitions.ts removeDeliveries); multi-shard on Citus",
    sometimes: true,
  },
  {
    statement: /^(alter table (event|delivery|attempt)_r\d+ detach partition|drop table if exists (event|delivery|attempt)_r\d+_\d+$)/,
    kind: 'background',
    why: 'partition upkeep drops an expired leaf whole: DDL, which Citus runs on the coordinator and propagates to every shard',
    sometimes: true,
  },
  {
    statement: /^(update endpoint set status = 'disabled', updated_at = .* account_id in \(select account_id from playground_session|with expired as \(select account_id from playground_session where expires_at)/,
    kind: 'background',
    why: 'playground expiry removes every expired playground account at once (playground.ts); on Citus one statement per account',
    sometimes: true,
  },
  // Found by a key that is not an account id.
  {
    statement: /from "endpoint" as "e0" where "e0"\."ingest_id" = /,
    kind: 'lookup',
    why: "ingest finds its endpoint by ingest id, before it knows the account (apps/relay/src/routes/ingest/target-cache.ts, cached per process); on Citus it reads a reference table ingest_route (ingest_id → account_id, endpoint_id) kept with the endpoint, then the endpoint by id and account",
  },
];

/** The statements each hot path must have sent in the session, so the check above cannot pass by seeing nothing. */
const HOT_PATHS: { path: string; statement: string | RegExp }[] = [
  { path: 'ingest', statement: 'hook_insert_events_account_*' },
  { path: 'ingest (dedupe: the keyed statement looks keys up and claims them, migration 022)', statement: 'hook_insert_events_account_keyed_*' },
  { path: "the workers' claim", statement: 'hook_claim_due' },
  { path: "a listener's claim", statement: 'hook_claim_listen' },
  { path: 'a listener connecting', statement: 'hook_make_due' },
  { path: 'a lease given back', statement: 'hook_release_lease' },
  { path: 'recording results', statement: 'hook_record_results_account' },
  { path: 'recording results with failures (grouped into issues, docs/issues.md)', statement: 'hook_record_results_account_issues' },
  { path: 'list', statement: /cross join lateral \(select case when bool_or\(l\.status = 'retrying'/ },
  { path: 'search', statement: /strpos\(lower\(hook_body_text\(/ },
  { path: 'replay one', statement: 'hook_replay_one' },
  { path: 'bulk replay', statement: 'hook_replay_many' },
];

/** One statement's text as patterns see it: whitespace and `--` comments collapsed. */
function flat(text: string): string {
  return text.replace(/--[^\n]*/g, ' ').replace(/\s+/g, ' ').replace(/\( /g, '(').trim();
}

function matches(pattern: string | RegExp, statement: CapturedStatement): boolean {
  if (typeof pattern !== 'string') return pattern.test(flat(statement.text));
  return pattern.endsWith('*') ? statement.name.startsWith(pattern.slice(0, -1)) : statement.name === pattern;
}

function describeStatement(statement: CapturedStatement): string {
  const text = flat(statement.text);
  return `${statement.name ? `[${statement.name}] ` : ''}${text.length > 240 ? `${text.slice(0, 240)}…` : text}`;
}

let database: TestDatabase;
let capture: SqlCapture;
let receiver: Receiver;
let relay: TestRelay;
let routed: { statement: CapturedStatement; verdict: RoutingVerdict }[] = [];

/** Waits until the capture holds a statement matching `pattern`. */
async function sent(pattern: string | RegExp): Promise<void> {
  await until(`a statement ${String(pattern)}`, () => capture.statements.some((statement) => matches(pattern, statement)));
}

/** Waits (in beforeAll, where expect.poll is not allowed) until `check` holds. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  await vi.waitFor(async () => {
    if (!(await check())) throw new Error(`no ${what} yet`);
  }, { timeout: 10_000, interval: 20 });
}

/** A `hook listen` session on the endpoint: `deliveries` as they come; `answer` sends a listener's result. */
async function listen(key: string, endpointId: string): Promise<{ socket: WebSocket; deliveries: any[]; answer(delivery: any): void }> {
  const socket = new WebSocket(`${relay.baseUrl.replace('http', 'ws')}/v1/stream?mode=listen&endpoint_id=${endpointId}`, { headers: { authorization: `Bearer ${key}` } });
  const deliveries: any[] = [];
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (message.type === 'delivery') deliveries.push(message);
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return {
    socket,
    deliveries,
    answer: (delivery) => socket.send(JSON.stringify({ type: 'result', version: 1, delivery_id: delivery.delivery_id, status: 200, duration_ms: 1, error: null })),
  };
}

beforeAll(async () => {
  await loadSqlParser();
  database = await freshDatabase();
  capture = await startSqlCapture(database.url);
  receiver = await startReceiver((request) => ({ status: request.url.endsWith('/failing') ? 500 : 200 }));
  relay = await startTestRelay({ retryScheduleMs: Array(6).fill(3_600_000), databaseDistributed: 'citus' }, { workerPollMs: 20, peers: true, database: { ...database, url: capture.url } });
  const { key } = await signUp(relay.baseUrl, { plan: 'pro' });
  const ok = await createEndpoint(relay.baseUrl, key, { name: 'ok', destination: { type: 'url', url: `${receiver.url}/ok` }, dedupe: { header: 'x-delivery' } });
  // A second destination: its events fan out, so recording reads their summaries.
  expect((await api(relay.baseUrl, 'POST', `/v1/endpoints/${ok.id}/destinations`, { key, json: { destination: { type: 'url', url: `${receiver.url}/ok-too` } } })).status).toBe(201);
  const failing = await createEndpoint(relay.baseUrl, key, { name: 'failing', destination: { type: 'url', url: `${receiver.url}/failing` } });
  const cli = await createEndpoint(relay.baseUrl, key, { name: 'cli' });

  capture.recording = true;
  // Ingest, the workers' claim and recording: a delivered event (and a duplicate of it), one that fails.
  const delivered = await sendEvent(ok.url, '{"type":"order.paid"}', { 'content-type': 'application/json', 'x-delivery': 'd-1' });
  expect(await sendEvent(ok.url, '{"type":"order.paid"}', { 'content-type': 'application/json', 'x-delivery': 'd-1' })).toBe(delivered);
  const failed = await sendEvent(failing.url, '{"type":"order.refunded"}');
  await receiver.waitFor(3);
  await until('a retrying status', async () => (await api(relay.baseUrl, 'GET', `/v1/events/${failed}`, { key })).body.status === 'retrying');
  // Lists and search.
  for (const query of ['', '?status=failed,retrying', '?type=order.paid', `?endpoint_id=${ok.id}&since=2020-01-01T00:00:00Z`, '?q=refunded']) {
    expect((await api(relay.baseUrl, 'GET', `/v1/events${query}`, { key })).status).toBe(200);
  }
  expect((await api(relay.baseUrl, 'GET', `/v1/events/${delivered}`, { key })).status).toBe(200);
  // Replay: one event now (a claim and an attempt), then many.
  expect((await api(relay.baseUrl, 'POST', `/v1/events/replay/${failed}`, { key, json: {} })).status).toBe(200);
  expect((await api(relay.baseUrl, 'POST', '/v1/events/replay', { key, json: {} })).status).toBe(202);
  // A listener: connecting makes its destination due, it claims, answers one delivery, and leaves without answering the next.
  const listener = await listen(key, cli.id);
  await sent('hook_make_due');
  await sendEvent(cli.url, '{"type":"ping"}');
  await until('first delivery to the listener', () => listener.deliveries.length === 1);
  listener.answer(listener.deliveries[0]);
  await sendEvent(cli.url, '{"type":"ping"}');
  await until('second delivery to the listener', () => listener.deliveries.length === 2);
  await sent('hook_record_results_account');
  listener.socket.close();
  await sent('hook_release_lease');
  capture.recording = false;

  routed = capture.statements.map((statement) => ({ statement, verdict: routeStatement(statement.text, statement.params, LAYOUT) }));
});

afterAll(async () => {
  await relay?.close();
  await receiver?.close();
  await capture?.close();
  await database?.drop();
});

describe('hot-path statements on a PostgreSQL distributed by account', () => {
  it('routes each one to one account\'s shard, or it is listed in NOT_ROUTED with its reason', () => {
    const unlisted = new Map<string, string[]>();
    for (const { statement, verdict } of routed) {
      if (verdict.kind !== 'multi' || NOT_ROUTED.some((entry) => matches(entry.statement, statement))) continue;
      unlisted.set(describeStatement(statement), verdict.problems);
    }
    expect([...unlisted].map(([statement, problems]) => `${statement}\n    ${problems.join('\n    ')}`)).toEqual([]);
  });

  it('saw every hot path: ingest, both claims, recording, list, search and replay', () => {
    const missing = HOT_PATHS.filter(({ statement }) => !routed.some((entry) => matches(statement, entry.statement))).map(({ path }) => path);
    expect(missing).toEqual([]);
  });

  it('lists nothing in NOT_ROUTED that routes now or that the session no longer sends', () => {
    const stale: string[] = [];
    for (const entry of NOT_ROUTED) {
      const seen = routed.filter(({ statement }) => matches(entry.statement, statement));
      if (seen.length === 0 && !entry.sometimes) stale.push(`${String(entry.statement)}: not sent in the session (renamed, or gone?)`);
      if (seen.length > 0 && seen.every(({ verdict }) => verdict.kind !== 'multi')) stale.push(`${String(entry.statement)}: routes now, take it out of NOT_ROUTED and docs/scaling.md`);
    }
    expect(stale).toEqual([]);
  });
});

describe('the routing rule', () => {
  const route = (sql: string, params: string[] = ['acct_1', 'acct_2']) => routeStatement(sql, params, LAYOUT);

  it('routes a statement whose every table, in every level, is pinned to one account', () => {
    expect(route('select * from event where account_id = $1 and id = $2')).toMatchObject({ kind: 'single', value: 'acct_1' });
    expect(route(`with due as (select l.event_id from delivery l join destination d on d.id = l.destination_id and d.account_id = l.account_id
                  where l.account_id = $1 and exists (select 1 from endpoint p where p.id = l.endpoint_id and p.account_id = $1) for update of l skip locked)
                  update delivery l set lease_id = 'x' from due, event e where l.event_id = due.event_id and l.account_id = $1 and e.account_id = $1`))
      .toMatchObject({ kind: 'single', value: 'acct_1' });
    expect(route("insert into attempt (id, account_id) values ('att_1', $1) returning id")).toMatchObject({ kind: 'single', value: 'acct_1' });
    expect(route('insert into event (id, account_id) select $2, a.account_id from endpoint a where a.account_id = $1', ['acct_1', 'evt_1'])).toMatchObject({ kind: 'single', value: 'acct_1' });
    expect(route('update event_r7_20261127 set type = null where account_id = $1')).toMatchObject({ kind: 'single', tables: ['event'] });
    expect(route("select * from account a join api_key k on k.account_id = a.id where k.key_hash = 'h'")).toMatchObject({ kind: 'none' });
  });

  it('refuses a table found by another key, a correlated subquery without its own pin, two accounts, and an insert of unpinned rows', () => {
    expect(route('select * from event where id = $1').problems).toEqual(['event in the statement: no event.account_id = <one value>']);
    expect(route('select e.id from event e where e.account_id = $1 and exists (select 1 from delivery l where l.event_id = e.id and l.account_id = e.account_id)').problems)
      .toEqual(['delivery l in subquery in the statement: no l.account_id = <one value>']);
    expect(route('select * from event e join delivery l on l.event_id = e.id and l.account_id = $2 where e.account_id = $1').problems)
      .toEqual(['pinned to several values: acct_1, acct_2']);
    expect(route('select * from event e where e.account_id = $1 or e.account_id = $2').kind).toBe('multi');
    expect(route('insert into event (id, account_id) select id, account_id from unnest($1::text[], $2::text[]) as t(id, account_id)', ['{a}', '{b}']).problems)
      .toEqual(['the statement: insert into event: the rows\' account_id is not pinned to one value']);
    expect(route('analyze delivery').problems).toEqual(['VacuumStmt on delivery is not a routed query']);
  });
});
