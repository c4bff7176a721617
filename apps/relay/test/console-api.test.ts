/**
 * What the web console reads beyond the v1 basics: payload search (`q`), time filters
 * and a plan that stays an index walk at 100,000 events, and usage per day.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { EVENT_LIST_WINDOW, firstIdAt, newId } from '@hook/core';
import { eventListQuery } from '@hook/db';
import { api, createEndpoint, sendEvent, signUp, sqlRows, startTestRelay, type ApiResponse, type TestRelay } from '@hook/test/relay';
import { writeEventHistory, type EventHistory } from '@hook/test/event-history';
import { historyIndex, historyRelation } from '@hook/test/history-plan';

const HISTORY_EVENTS = 100_000;
const STEP_MS = 1000;
/** The one event of the history that is retrying, and the one of its own type: far back, so a filter for either is sparse. */
const RETRYING_G = 40_000;
const RARE_TYPE_G = 30_000;
const SMALL_ENDPOINT_EVENTS = 2_000;

let relay: TestRelay;
let client: pg.Client;
let owner: { key: string; accountId: string };
let history: EventHistory;
/** The other account, with a small endpoint beside its busy one (for the endpoint plan). */
let other: { accountId: string; smallEndpointId: string };

beforeAll(async () => {
  relay = await startTestRelay();
  client = new pg.Client({ connectionString: relay.database.url });
  await client.connect();
  owner = await signUp(relay.baseUrl);
  const endpoint = await createEndpoint(relay.baseUrl, owner.key);
  history = {
    accountId: owner.accountId, endpointId: endpoint.id, destinationId: `dst_${endpoint.id.slice(3)}`,
    count: HISTORY_EVENTS, startMs: Date.now() - (HISTORY_EVENTS + 60) * STEP_MS, stepMs: STEP_MS, tag: 1,
  };
  // Another account busier lately, as on any shared relay: its events are the newest, so
  // a walk of the primary key would step over all of them; the plan must use the account's index.
  const otherAccount = await signUp(relay.baseUrl);
  const otherEndpoint = await createEndpoint(relay.baseUrl, otherAccount.key);
  const smallEndpoint = await createEndpoint(relay.baseUrl, otherAccount.key, { name: 'small' });
  other = { accountId: otherAccount.accountId, smallEndpointId: smallEndpoint.id };
  await writeEventHistory(client, { ...history, accountId: other.accountId, endpointId: smallEndpoint.id, destinationId: `dst_${smallEndpoint.id.slice(3)}`, count: SMALL_ENDPOINT_EVENTS, stepMs: HISTORY_EVENTS * STEP_MS / SMALL_ENDPOINT_EVENTS, tag: 3 });
  await writeEventHistory(client, { ...history, accountId: other.accountId, endpointId: otherEndpoint.id, destinationId: `dst_${otherEndpoint.id.slice(3)}`, startMs: history.startMs + HISTORY_EVENTS * STEP_MS, stepMs: 0.5, tag: 2 });
  await writeEventHistory(client, history);
  const eventAt = `(select id from event where account_id = $1 and received_at = $2)`;
  await client.query(`update delivery set status = 'retrying', next_attempt_at = now() + interval '1 hour' where event_id = ${eventAt}`, [history.accountId, new Date(receivedAt(RETRYING_G))]);
  await client.query(`update event set type = 'invoice.refunded' where id = ${eventAt}`, [history.accountId, new Date(receivedAt(RARE_TYPE_G))]);
}, 120_000);
afterAll(async () => {
  await client?.end();
  await relay?.close();
});

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function planNodes(node: any): any[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

async function plan(filter: Parameters<typeof eventListQuery>[0]): Promise<any[]> {
  const { sql, params } = eventListQuery(filter);
  const [row] = await relay.orm.em.fork().getConnection().execute(`explain (format json) ${sql}`, params);
  return planNodes(row!['QUERY PLAN'][0].Plan);
}

const receivedAt = (g: number) => new Date(history.startMs + g * STEP_MS).toISOString();

describe('event list at 100,000 events', () => {
  it('plans the first page and a status filter as a backward walk of event_account_idx (no sort, no sequential scan), each listed event\'s last attempt a probe of attempt_event_idx, and a time range within that index', async () => {
    const summaryOf = (nodes: any[]) => nodes.map((node) => `${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''}`).join(' > ');
    // Partitions that hold rows: one the planner knows is empty may be read by a sequential scan of nothing.
    const occupied = new Set((await relay.orm.em.fork().getConnection().execute(
      'select distinct tableoid::regclass::text as name from event union select distinct tableoid::regclass::text from attempt')).map((row: any) => row.name as string));
    const seqScanOf = (nodes: any[], relation: 'event' | 'attempt') => nodes.some((node) => node['Node Type'] === 'Seq Scan' && historyRelation(relation).test(node['Relation Name']) && occupied.has(node['Relation Name']));
    const seqScanOfEvents = (nodes: any[]) => seqScanOf(nodes, 'event');
    // the history is partitioned (docs/retention.md#partitions): plans name a partition's copy of each index
    // The one sort allowed is of one event's few attempts, to pick its last (last_attempt).
    const sortsOfAttempts = (nodes: any[]) => nodes.filter((node) => node['Node Type'] === 'Sort' && [node.Plans?.[0], ...(node.Plans?.[0]?.Plans ?? [])].some((child: any) => historyIndex('attempt', 'event_idx').test(child?.['Index Name'])));
    for (const filter of [
      { accountId: history.accountId, limit: 51 },
      { accountId: history.accountId, limit: 51, status: ['failed' as const], excludeEndpointIds: [newId('endpoint')] },
    ]) {
      const nodes = await plan(filter);
      const summary = summaryOf(nodes);
      expect(nodes[0]['Node Type'], summary).toBe('Limit');
      expect(nodes.some((node) => historyIndex('event', 'account_idx').test(node['Index Name']) && node['Scan Direction'] === 'Backward'), summary).toBe(true);
      expect(nodes.filter((node) => node['Node Type'] === 'Sort').length - sortsOfAttempts(nodes).length, summary).toBe(0);
      expect(seqScanOfEvents(nodes) || seqScanOf(nodes, 'attempt'), summary).toBe(false);
      expect(nodes.some((node) => historyIndex('attempt', 'event_idx').test(node['Index Name']) && String(node['Index Cond']).includes('e.id')), summary).toBe(true);
    }
    // A time range bounds the index by id (ids begin with their receive time): the planner
    // may walk it backward or, for a range it expects to be small, read just that range
    // (a bitmap scan) and sort those rows; never the account's whole history or the table.
    const ranged = await plan({ accountId: history.accountId, limit: 51, receivedFrom: new Date(receivedAt(500)), receivedBefore: new Date(receivedAt(600)) });
    const summary = summaryOf(ranged);
    const rangeScan = ranged.find((node) => historyIndex('event', 'account_idx').test(node['Index Name']));
    expect(rangeScan, summary).toBeDefined();
    expect(String(rangeScan['Index Cond']), summary).toMatch(/id >/);
    expect(seqScanOfEvents(ranged), summary).toBe(false);
  });

  it('plans a type as a backward walk of event_account_type_idx, and one endpoint, beside a filter no index serves, as a bounded walk of event_endpoint_idx', async () => {
    const summaryOf = (nodes: any[]) => nodes.map((node) => `${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''}`).join(' > ');
    // Partitions that hold rows: one the planner knows is empty may be read by a sequential scan of nothing.
    const occupied = new Set((await sqlRows(relay, 'select distinct tableoid::regclass::text as name from event')).map((row: any) => row.name as string));
    const walks = (nodes: any[], index: RegExp) => nodes.some((node) => index.test(node['Index Name']) && occupied.has(node['Relation Name']) && node['Scan Direction'] === 'Backward');
    const seqScanOfEvents = (nodes: any[]) => nodes.some((node) => node['Node Type'] === 'Seq Scan' && occupied.has(node['Relation Name']));
    // The walk's own Limit (EVENT_LIST_WINDOW) above the index: a page that finds nothing stops there.
    const bounded = (nodes: any[], index: RegExp) => nodes.slice(1).some((node) => node['Node Type'] === 'Limit' && planNodes(node).some((below) => index.test(below['Index Name'])));
    const absent = await plan({ accountId: history.accountId, type: 'absent.type', limit: 20 });
    expect(absent.some((node) => historyIndex('event', 'account_type_idx').test(node['Index Name']) && occupied.has(node['Relation Name'])), summaryOf(absent)).toBe(true);
    expect(seqScanOfEvents(absent), summaryOf(absent)).toBe(false);
    // A type every event has: either index walks it.
    const common = await plan({ accountId: history.accountId, type: 'invoice.paid', limit: 20 });
    expect(walks(common, historyIndex('event', 'account_type_idx')) || walks(common, historyIndex('event', 'account_idx')), summaryOf(common)).toBe(true);
    expect(seqScanOfEvents(common), summaryOf(common)).toBe(false);
    for (const filter of [{ status: ['retrying' as const] }, { type: 'absent.type' }]) {
      const nodes = await plan({ accountId: other.accountId, endpointIds: [other.smallEndpointId], ...filter, limit: 20 });
      expect(walks(nodes, historyIndex('event', 'endpoint_idx')), summaryOf(nodes)).toBe(true);
      expect(bounded(nodes, historyIndex('event', 'endpoint_idx')), summaryOf(nodes)).toBe(true);
    }
    const status = await plan({ accountId: history.accountId, status: ['retrying'], limit: 20 });
    expect(bounded(status, historyIndex('event', 'account_idx')), summaryOf(status)).toBe(true);
  });

  it(`answers a sparse filter page by page, each looking through at most ${EVENT_LIST_WINDOW.toLocaleString('en')} events, short pages carrying next_cursor until the one match and the end`, async () => {
    async function allPages(query: string): Promise<any[]> {
      const pages: any[] = [];
      let cursor: string | null = null;
      do {
        const page: ApiResponse = await api(relay.baseUrl, 'GET', `/v1/events?${query}&limit=5${cursor ? `&cursor=${cursor}` : ''}`, { key: owner.key });
        expect(page.status).toBe(200);
        pages.push(page.body);
        cursor = page.body.next_cursor;
      } while (cursor !== null && pages.length <= HISTORY_EVENTS / EVENT_LIST_WINDOW + 1);
      return pages;
    }
    const found = (pages: any[]) => pages.flatMap((page) => page.data.map((event: any) => [event.received_at, event.status, event.type]));
    const retrying = await allPages('status=retrying');
    expect(retrying[0]).toEqual({ data: [], next_cursor: expect.any(String) });
    expect(found(retrying)).toEqual([[receivedAt(RETRYING_G), 'retrying', 'invoice.paid']]);
    // 100,000 events, EVENT_LIST_WINDOW a page; the last looks below the oldest and finds the end.
    expect(retrying).toHaveLength(HISTORY_EVENTS / EVENT_LIST_WINDOW + 1);
    expect(retrying.at(-1).next_cursor).toBeNull();

    // A type alone is an index walk: found at once, however far back.
    const rare = await api(relay.baseUrl, 'GET', '/v1/events?type=invoice.refunded', { key: owner.key });
    expect(rare.body).toMatchObject({ data: [{ received_at: receivedAt(RARE_TYPE_G) }], next_cursor: null });
    // Beside an endpoint, the endpoint's events are walked and the type checked on each.
    const rareOfEndpoint = await allPages(`endpoint_id=${history.endpointId}&type=invoice.refunded`);
    expect(rareOfEndpoint[0]).toEqual({ data: [], next_cursor: expect.any(String) });
    expect(found(rareOfEndpoint)).toEqual([[receivedAt(RARE_TYPE_G), 'delivered', 'invoice.refunded']]);
  });

  it('shows each listed event\'s last attempt: its answer, or null before any', async () => {
    const page = await api(relay.baseUrl, 'GET', `/v1/events?until=${receivedAt(500)}&limit=5`, { key: owner.key });
    // Events 499 to 495: g % 5 is 4 (pending, never attempted), 3 (failed with a 500), then delivered.
    expect(page.body.data.map((event: any) => [event.status, event.last_attempt && event.last_attempt.response_status, event.last_attempt?.started_at])).toEqual([
      ['pending', null, undefined], ['failed', 500, receivedAt(498)], ['delivered', 200, receivedAt(497)], ['delivered', 200, receivedAt(496)], ['delivered', 200, receivedAt(495)],
    ]);
    expect(page.body.data[1].last_attempt).toEqual({ destination_id: history.destinationId, started_at: receivedAt(498), response_status: 500, error_class: null });
  });

  it('filters by since (inclusive) and until (exclusive) with keyset pages', async () => {
    const first = await api(relay.baseUrl, 'GET', `/v1/events?since=${receivedAt(500)}&until=${receivedAt(510)}&limit=6`, { key: owner.key });
    expect(first.status).toBe(200);
    expect(first.body.data.map((event: any) => event.received_at)).toEqual([509, 508, 507, 506, 505, 504].map(receivedAt));
    const second = await api(relay.baseUrl, 'GET', `/v1/events?since=${receivedAt(500)}&until=${receivedAt(510)}&limit=6&cursor=${first.body.next_cursor}`, { key: owner.key });
    expect(second.body.data.map((event: any) => event.received_at)).toEqual([503, 502, 501, 500].map(receivedAt));
    expect(second.body.next_cursor).toBeNull();
    expect(first.body.search_scanned).toBeUndefined();
  });

  it(`searches payloads case-insensitively within the newest ${EVENT_LIST_WINDOW.toLocaleString('en')} events, says when it stopped there, and continues below with the cursor`, async () => {
    const recent = await api(relay.baseUrl, 'GET', '/v1/events?q=SEQ-99990%22', { key: owner.key });
    expect(recent.status).toBe(200);
    expect(recent.body.data.map((event: any) => event.received_at)).toEqual([receivedAt(99_990)]);
    expect(recent.body).toMatchObject({ search_scanned: EVENT_LIST_WINDOW, search_truncated: true });

    // An event in the second window from the newest: the first page stops above it, the next finds it.
    const older = HISTORY_EVENTS - EVENT_LIST_WINDOW * 1.5;
    const old = await api(relay.baseUrl, 'GET', `/v1/events?q=%22seq-${older}%22`, { key: owner.key });
    expect(old.body).toMatchObject({ data: [], search_scanned: EVENT_LIST_WINDOW, search_truncated: true, next_cursor: expect.any(String) });
    const below = await api(relay.baseUrl, 'GET', `/v1/events?q=%22seq-${older}%22&cursor=${old.body.next_cursor}`, { key: owner.key });
    expect(below.body.data.map((event: any) => event.received_at)).toEqual([receivedAt(older)]);

    // Many matches: a full page, its cursor at the last match; the other filters apply before the bound.
    const failed = await api(relay.baseUrl, 'GET', '/v1/events?q=invoice.paid&status=failed&limit=3', { key: owner.key });
    expect(failed.body.data.map((event: any) => [event.received_at, event.status])).toEqual([99_998, 99_993, 99_988].map((g) => [receivedAt(g), 'failed']));
    expect(failed.body.search_truncated).toBe(false);
    const ranged = await api(relay.baseUrl, 'GET', `/v1/events?q=seq-12&since=${receivedAt(100)}&until=${receivedAt(130)}`, { key: owner.key });
    expect(ranged.body).toMatchObject({ search_scanned: 30, search_truncated: false, next_cursor: null });
    expect(ranged.body.data.map((event: any) => event.received_at)).toEqual([129, 128, 127, 126, 125, 124, 123, 122, 121, 120].map(receivedAt));
  });
});

describe('payload search over any bytes', () => {
  it('finds text in JSON, binary and invalid UTF-8 bodies alike, never failing on them', async () => {
    const account = await signUp(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, account.key);
    const octets = { 'content-type': 'application/octet-stream' };
    const json = await sendEvent(endpoint.url, '{"note":"Needle in JSON"}');
    const binary = await sendEvent(endpoint.url, Buffer.concat([Buffer.from([0x00, 0xff, 0xfe, 0x01]), Buffer.from('needle'), Buffer.from([0x00, 0x80])]), octets);
    const invalid = await sendEvent(endpoint.url, Buffer.concat([Buffer.from([0xc3, 0x28]), Buffer.from(' NEEDLE '), Buffer.from([0xe2, 0x82])]), octets);
    await sendEvent(endpoint.url, Buffer.from([0x00, 0x01, 0x02, 0xff]), octets);
    await sendEvent(endpoint.url, '{"note":"haystack only"}');

    const found = await api(relay.baseUrl, 'GET', '/v1/events?q=needle', { key: account.key });
    expect(found.status).toBe(200);
    expect(found.body.data.map((event: any) => event.id)).toEqual([invalid, binary, json]);
    expect(found.body).toMatchObject({ search_scanned: 5, search_truncated: false, next_cursor: null });
    expect((await api(relay.baseUrl, 'GET', '/v1/events?q=%00%FF', { key: account.key })).status).toBe(200);
    const none = await api(relay.baseUrl, 'GET', '/v1/events?q=absent', { key: account.key });
    expect(none.body).toMatchObject({ data: [], search_scanned: 5, search_truncated: false });
  });
});

describe('usage per day', () => {
  it('counts events received per UTC day and their deliveries by outcome, oldest day first, empty days included', async () => {
    const account = await signUp(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, account.key);
    const destinationId = `dst_${endpoint.id.slice(3)}`;
    const day = 24 * 60 * 60 * 1000;
    const todayStart = Math.floor(Date.now() / day) * day;
    let made = 0;
    const insert = async (atMs: number, statuses: string[]) => {
      // An id of that time (newId keeps ids increasing, so it would not go back in time).
      const id = `${firstIdAt('event', atMs).slice(0, -4)}${String(++made).padStart(4, '0')}`;
      await sqlRows(relay, `insert into event (id, account_id, endpoint_id, method, path, query, headers, body, size, received_at, delivery_count)
                            values (?, ?, ?, 'POST', '', '', '{}', '\\x7b7d', 2, ?, ?)`, [id, account.accountId, endpoint.id, new Date(atMs), statuses.length]);
      for (const [index, status] of statuses.entries()) {
        await sqlRows(relay, 'insert into delivery (event_id, destination_id, account_id, endpoint_id, status) values (?, ?, ?, ?, ?)',
          [id, index === 0 ? destinationId : `dst_${newId('destination').slice(4)}`, account.accountId, endpoint.id, status]);
      }
    };
    await insert(todayStart + 1000, ['delivered']);
    await insert(todayStart + 2000, ['failed', 'delivered']);
    await insert(todayStart - 1, ['pending']); // the last millisecond of yesterday
    await insert(todayStart - day + 5000, ['delivered']);
    await insert(todayStart - day + 6000, ['retrying']);
    await insert(todayStart - 3 * day, ['delivered', 'filtered']);
    await insert(todayStart - 9 * day, ['failed']); // before the window

    const usage = await api(relay.baseUrl, 'GET', '/v1/account/usage/daily?days=5', { key: account.key });
    expect(usage.status).toBe(200);
    const date = (offset: number) => new Date(todayStart - offset * day).toISOString().slice(0, 10);
    expect(usage.body.days).toEqual([
      { date: date(4), events: 0, deliveries: 0, delivered: 0, failed: 0 },
      { date: date(3), events: 1, deliveries: 1, delivered: 1, failed: 0 },
      { date: date(2), events: 0, deliveries: 0, delivered: 0, failed: 0 },
      { date: date(1), events: 3, deliveries: 3, delivered: 1, failed: 0 },
      { date: date(0), events: 2, deliveries: 3, delivered: 2, failed: 1 },
    ]);
    expect((await api(relay.baseUrl, 'GET', '/v1/account/usage/daily', { key: account.key })).body.days).toHaveLength(30);
    expect((await api(relay.baseUrl, 'GET', '/v1/account/usage/daily?days=91', { key: account.key })).status).toBe(400);
  });
});
