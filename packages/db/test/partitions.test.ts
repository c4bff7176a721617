/**
 * History partitions made and dropped by many processes at once (partitions.ts): each
 * partition is made exactly once whoever asks, and the partitions several passes find
 * expired are all dropped, with no pass failing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createOrm, dropExpiredPartitions, ensureHistoryPartitions, historyLeaves, maintainHistoryPartitions, type Orm } from '../src/index.ts';
import type { TestDatabase } from '../src/testing.ts';
import { freshDatabase } from '@hook/test/database';

const DAY_MS = 86_400_000;
let database: TestDatabase;
/** One ORM per "process", each with its own connections. */
let orms: Orm[];

beforeAll(async () => {
  database = await freshDatabase();
  orms = await Promise.all(Array.from({ length: 4 }, () => createOrm({ databaseUrl: database.url, poolMax: 4 })));
});
afterAll(async () => {
  await Promise.all(orms.map((orm) => orm.close()));
  await database.drop();
});

const leavesOf = async (retentionClass: number) => (await historyLeaves(orms[0]!.em.fork())).filter((leaf) => leaf.retentionClass === retentionClass);

it('a class and its partitions asked for by 8 callers at once are made once: 11 periods, 33 partitions (event, attempt and delivery)', async () => {
  // class 40: 1-day periods; 10 days back to today is 11 periods
  const from = new Date(Date.now() - 10 * DAY_MS);
  const to = new Date();
  const made = await Promise.all(Array.from({ length: 8 }, (_, i) => ensureHistoryPartitions(orms[i % orms.length]!.em.fork(), 40, from, to)));
  expect(made.reduce((sum, n) => sum + n, 0)).toBe(33);
  expect(await leavesOf(40)).toHaveLength(11);
  expect(await ensureHistoryPartitions(orms[0]!.em.fork(), 40, from, to)).toBe(0);
});

it('passes of 4 processes at once (and the next pass) drop every expired partition, none fails, none is counted twice, and none is left detached', async () => {
  await ensureHistoryPartitions(orms[0]!.em.fork(), 41, new Date(Date.now() - 100 * DAY_MS), new Date(Date.now() - 90 * DAY_MS));
  const before = await leavesOf(41);
  expect(before.length).toBeGreaterThanOrEqual(11);
  // two concurrent detaches of one partition can both give up (one's deadlock, the other's 'already pending'):
  // the next pass finishes it, so the partitions are all gone after one more pass
  const results = [...await Promise.all(orms.map((orm) => dropExpiredPartitions(orm))), await dropExpiredPartitions(orms[0]!)];
  // each drop is counted by the pass that made it, so never twice (a pass that lost a race to another counts nothing for it)
  const counted = results.reduce((sum, result) => sum + result.leaves, 0);
  expect(counted).toBeGreaterThan(0);
  expect(counted).toBeLessThanOrEqual(before.length);
  expect(await leavesOf(41)).toEqual([]);
  const left = await orms[0]!.em.fork().execute<{ n: number }[]>(`select count(*)::int as n from pg_class where relkind = 'r' and (relname like 'event_r41_%' or relname like 'attempt_r41_%')`);
  expect(left[0]!.n).toBe(0);
});

it("a dropped partition takes all its events' deliveries (in its delivery leaf, in the queue, and more than one batch of them in the table from before 021), and only theirs", async () => {
  const em = orms[0]!.em.fork();
  const at = Date.now() - 100 * DAY_MS;
  await ensureHistoryPartitions(em, 43, new Date(at), new Date(at));
  // 5,050 events in one class 43 partition with a delivery each (5,000 are deleted a statement), and one kept event's delivery
  await em.execute(`
    insert into event (id, account_id, endpoint_id, method, path, query, headers, body, size, received_at, retention_class)
    select left(hook_history_bound(?::bigint), 14) || lpad(g::text, 16, '0'), 'acct_p', 'ep_p', 'POST', '', '', '{}', '\\x00', 1, ?, 43
    from generate_series(1, 5050) g`, [at, new Date(at)]);
  // each event's delivery to dst_p stored before delivery was partitioned (delivery_r0: 5,000 are deleted a statement),
  // and to dst_q since: 50 still open (a paused destination's, in the queue), the others done (in the class 43 leaf)
  await em.execute(`insert into delivery_r0 (event_id, destination_id, account_id, endpoint_id, status, retention_class, layout)
                    select id, 'dst_p', account_id, endpoint_id, 'delivered', 43, 0 from event where retention_class = 43`);
  await em.execute(`insert into delivery (event_id, destination_id, account_id, endpoint_id, status, retention_class)
                    select id, 'dst_q', account_id, endpoint_id, case when row_number() over (order by id) <= 50 then 'pending' else 'delivered' end, 43
                    from event where retention_class = 43`);
  await em.execute(`insert into delivery_r0 (event_id, destination_id, account_id, endpoint_id, status, retention_class, layout)
                    values ('evt_kept', 'dst_p', 'acct_p', 'ep_p', 'delivered', 7, 0)`);
  const where = async () => em.execute<{ relname: string; n: number }[]>(`
    select tableoid::regclass::text as relname, count(*)::int as n from delivery where destination_id in ('dst_p', 'dst_q') group by 1 order by 1`);
  expect(await where()).toEqual([
    { relname: 'delivery_open', n: 50 }, { relname: 'delivery_r0', n: 5051 }, { relname: expect.stringMatching(/^delivery_r43_\d{8}$/), n: 5000 },
  ]);
  await dropExpiredPartitions(orms[0]!);
  expect(await leavesOf(43)).toEqual([]);
  expect(await where()).toEqual([{ relname: 'delivery_r0', n: 1 }]);
});

it('a delivery replayed in delivery_r0 by a relay of the release before 021 is moved to the queue (what the claims read) by the next upkeep pass', async () => {
  const em = orms[0]!.em.fork();
  await em.execute(`insert into delivery_r0 (event_id, destination_id, account_id, endpoint_id, status, next_trigger, next_attempt_at, retention_class, layout)
                    values ('evt_stranded', 'dst_s', 'acct_s', 'ep_s', 'delivered', 'replay', now(), 7, 0),
                           ('evt_done', 'dst_s', 'acct_s', 'ep_s', 'delivered', 'auto', null, 7, 0)`);
  await maintainHistoryPartitions(orms[0]!);
  const rows = await em.execute<{ event_id: string; relname: string }[]>(
    `select event_id, tableoid::regclass::text as relname from delivery where destination_id = 'dst_s' order by event_id`);
  expect(rows).toEqual([{ event_id: 'evt_done', relname: 'delivery_r0' }, { event_id: 'evt_stranded', relname: 'delivery_open' }]);
});
