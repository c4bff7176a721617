/**
 * The event list's bounded walk (listEvents, eventListQuery): a page looks through at most
 * `maxScanned` events from the cursor on, so a filter no index serves (a status, a payload
 * search, a type beside an endpoint, an endpoint left out) answers a short page, even an
 * empty one, with a cursor, and following the cursors finds every match once, in order.
 * Run with PostgreSQL choosing parallel plans too (vitest.config.ts, parallel-plans).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstIdAt, newId, type EventStatus } from '@hook/core';
import { createOrm, eventListQuery, insertEvents, listEvents, type EventListFilter, type NewEvent, type Orm } from '../src/index.ts';
import type { TestDatabase } from '../src/testing.ts';
import { freshDatabase } from '@hook/test/database';
import { insertEndpoint } from './rows.ts';

const EVENTS = 40;
const SECOND_MS = 1000;

/** What event `i` (0 oldest) is: each filter below matches a few, scattered. */
function shapeOf(i: number): { endpoint: 'a' | 'b'; type: string; needle: boolean; status: EventStatus } {
  return {
    endpoint: i % 4 === 0 ? 'b' : 'a',
    type: i % 10 === 3 ? 'rare.type' : 'common',
    needle: i % 13 === 5,
    status: i === 17 ? 'retrying' : i % 7 === 2 ? 'failed' : i % 11 === 4 ? 'pending' : 'delivered',
  };
}

describe('the event list\'s bounded walk', () => {
  let database: TestDatabase;
  let orm: Orm;
  const accountId = newId('account');
  const endpoints = { a: '', b: '' };
  const events: (ReturnType<typeof shapeOf> & { id: string; receivedAt: Date })[] = [];
  const startMs = Date.now() - EVENTS * SECOND_MS - 60_000;

  async function sql(text: string, params: unknown[] = []): Promise<any[]> {
    return orm.em.fork().getConnection().execute(text, params);
  }

  beforeAll(async () => {
    database = await freshDatabase();
    orm = await createOrm({ databaseUrl: database.url });
    await sql('insert into account (id, plan, created_at) values (?, ?, now())', [accountId, 'pro']);
    endpoints.a = (await insertEndpoint(sql, accountId)).endpointId;
    endpoints.b = (await insertEndpoint(sql, accountId)).endpointId;
    const batch: NewEvent[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const shape = shapeOf(i);
      const body = Buffer.from(JSON.stringify({ i, note: shape.needle ? 'a Needle here' : 'hay' }));
      const receivedMs = startMs + i * SECOND_MS;
      const event: NewEvent = {
        // An id of its receive time, as ingest makes them (newId would give now's).
        id: `${firstIdAt('event', receivedMs).slice(0, -4)}${String(i).padStart(4, '0')}`, accountId, endpointId: endpoints[shape.endpoint], type: shape.type, method: 'POST', path: '', query: '', headers: {}, body,
        contentType: 'application/json', size: body.length, receivedAt: new Date(receivedMs), status: 'pending', dedupeKey: null,
      };
      batch.push(event);
      events.push({ ...shape, id: event.id, receivedAt: event.receivedAt });
    }
    await insertEvents(orm, batch);
    for (const event of events) {
      if (event.status !== 'pending') await sql('update delivery set status = ?, next_attempt_at = null, attempt_count = 1 where event_id = ?', [event.status, event.id]);
    }
    await sql('analyze event');
    await sql('analyze delivery');
  });
  afterAll(async () => {
    await orm?.close();
    await database?.drop();
  });

  /** Every page of a filter, following the cursors, `limit` events a page and `maxScanned` looked through. */
  async function allPages(filter: Omit<EventListFilter, 'accountId' | 'limit'>, limit: number, maxScanned: number) {
    const pages = [];
    let beforeId: string | undefined;
    do {
      const page = await listEvents(orm.em.fork(), { ...filter, accountId, limit, maxScanned, ...(beforeId ? { beforeId } : {}) });
      pages.push(page);
      beforeId = page.nextBeforeId ?? undefined;
    } while (beforeId !== undefined && pages.length <= EVENTS);
    return pages;
  }

  const window = { receivedFrom: new Date(startMs + 6 * SECOND_MS), receivedBefore: new Date(startMs + 31 * SECOND_MS) };
  type Filter = Omit<EventListFilter, 'accountId' | 'limit'>;
  type Listed = (typeof events)[number];
  // Filters are made when the test runs: the endpoints exist from beforeAll on.
  const filters: [string, () => Filter, (event: Listed) => boolean][] = [
    ['no filter', () => ({}), () => true],
    ['a status', () => ({ status: ['failed'] }), (event) => event.status === 'failed'],
    ['a status only one event has', () => ({ status: ['retrying'] }), (event) => event.status === 'retrying'],
    ['several statuses', () => ({ status: ['failed', 'retrying', 'pending'] }), (event) => event.status !== 'delivered'],
    ['a rare type', () => ({ type: 'rare.type' }), (event) => event.type === 'rare.type'],
    ['a type nothing has', () => ({ type: 'absent.type' }), () => false],
    ['an endpoint', () => ({ endpointIds: [endpoints.b] }), (event) => event.endpoint === 'b'],
    ['an endpoint and a type', () => ({ endpointIds: [endpoints.b], type: 'rare.type' }), (event) => event.endpoint === 'b' && event.type === 'rare.type'],
    ['an endpoint and a status', () => ({ endpointIds: [endpoints.a], status: ['failed'] }), (event) => event.endpoint === 'a' && event.status === 'failed'],
    ['an endpoint left out and a status', () => ({ excludeEndpointIds: [endpoints.a], status: ['delivered'] }), (event) => event.endpoint === 'b' && event.status === 'delivered'],
    ['a payload search', () => ({ text: 'needle' }), (event) => event.needle],
    ['a payload search and a status', () => ({ text: 'NEEDLE', status: ['delivered'] }), (event) => event.needle && event.status === 'delivered'],
    ['a time window and a status', () => ({ ...window, status: ['failed'] }), (event) => event.receivedAt >= window.receivedFrom && event.receivedAt < window.receivedBefore && event.status === 'failed'],
  ];

  it.each(filters)('%s: each page looks through at most its bound, and the cursors find every match once, newest first', async (_name, filter, matches) => {
    const pages = await allPages(filter(), 2, 5);
    const expected = events.filter(matches).map((event) => event.id).reverse();
    expect(pages.flatMap((page) => page.events.map((event) => event.id))).toEqual(expected);
    for (const page of pages) {
      expect(page.events.length).toBeLessThanOrEqual(2);
      expect(page.scanned).toBeLessThanOrEqual(5);
    }
    expect(pages.at(-1)!.nextBeforeId).toBeNull();
  });

  it('answers a sparse filter\'s page short, even empty, with a cursor on, and says it stopped at its bound', async () => {
    const [first] = await allPages({ status: ['retrying'] }, 2, 5);
    // Events 39 to 35 hold no retrying one: an empty page, and the cursor below the five looked through.
    expect(first).toMatchObject({ events: [], scanned: 5, truncated: true, nextBeforeId: events[35]!.id });
    const full = await listEvents(orm.em.fork(), { accountId, status: ['failed'], limit: 1, maxScanned: 40 });
    expect(full).toMatchObject({ truncated: false, nextBeforeId: full.events[0]!.id });
    const wide = await listEvents(orm.em.fork(), { accountId, status: ['retrying'], limit: 5, maxScanned: 100 });
    expect(wide).toMatchObject({ events: [expect.objectContaining({ id: events[17]!.id, status: 'retrying' })], scanned: EVENTS, truncated: false, nextBeforeId: null });
  });

  /** How many times the list's plan for `filter`, run, scanned a partition named like `relation`. */
  async function partitionScans(filter: Omit<EventListFilter, 'accountId'>, relation: RegExp): Promise<number> {
    const { sql: query, params } = eventListQuery({ ...filter, accountId });
    const [row] = await sql(`explain (analyze, format json) ${query}`, params);
    const nodes: any[] = [];
    const collect = (node: any) => { nodes.push(node); (node.Plans ?? []).forEach(collect); };
    collect(row['QUERY PLAN'][0].Plan);
    return nodes.filter((node) => relation.test(node['Relation Name'] ?? '')).reduce((sum, node) => sum + node['Actual Loops'], 0);
  }
  const ATTEMPT_LEAVES = /^attempt_r\d+/;
  const DONE_DELIVERY_LEAVES = /^delivery_(r[1-9]\d*_\d{8}|done_r0)$/;

  it('reads one partition of attempt, and one of the done deliveries, per listed event: the one its class and id name', async () => {
    const [{ retention_class: retentionClass }] = await sql('select retention_class from event where id = ?', [events[0]!.id]);
    expect(retentionClass).toBeGreaterThan(0); // a class of its own, beside class 0's table, which a probe by event id alone would read too
    // The page's 6 events (limit + 1): one scan each.
    expect(await partitionScans({ limit: 5 }, ATTEMPT_LEAVES)).toBe(6);
    expect(await partitionScans({ limit: 5 }, DONE_DELIVERY_LEAVES)).toBe(6);
  });

  it('checks a status only the queue gives in the queue\'s partition first: the history\'s deliveries only of the events that have one', async () => {
    // 40 events walked, one retrying: its summary and the walk's last event's are worked out, no other.
    expect(await partitionScans({ status: ['retrying'], limit: 2, maxScanned: EVENTS }, DONE_DELIVERY_LEAVES)).toBe(2);
  });
});
