import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eraseAccount } from '@hook/db';
import { api, createEndpoint, expectProblem, sendEvent, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';
import { startReceiver, type Receiver } from '@hook/test/receiver';

let relay: TestRelay;
let receiver: Receiver;
beforeAll(async () => {
  relay = await startTestRelay({ allowPrivateDestinations: true }, { workerPollMs: 50 });
  // /slow holds its answer, so a delivery is in flight while its account is deleted; /fail answers 500 (attempts, retries).
  receiver = await startReceiver((request) => (request.url.includes('/slow/') ? { status: 200, delayMs: 1500 } : { status: request.url.endsWith('/fail') ? 500 : 200 }));
});
afterAll(async () => {
  await relay?.close();
  await receiver?.close();
});

/** Tables the app keeps rows in, and how to find an account's rows in each (a condition on `$account` and `$keys`). */
async function accountColumns(): Promise<Map<string, string>> {
  const rows: { table_name: string; column_name: string }[] = await sqlRows(
    relay,
    `select c.table_name, c.column_name from information_schema.columns c
     join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
     where c.table_schema = 'public' and t.table_type = 'BASE TABLE'`,
  );
  const tables = new Map<string, string[]>();
  for (const row of rows) tables.set(row.table_name, [...(tables.get(row.table_name) ?? []), row.column_name]);
  const keyed = new Map<string, string>();
  for (const [table, columns] of tables) {
    if (columns.includes('account_id')) keyed.set(table, 'account_id = $account');
    else if (table === 'account') keyed.set(table, 'id = $account');
    // Counters keyed by what they limit: an API key's or the account's (its id in the key).
    else if (table === 'rate_limit_counter') keyed.set(table, 'exists (select 1 from unnest($keys::text[]) k where position(k in key) > 0)');
    // A new table with no account_id must say here how its rows are found (and the erasure must remove them).
    else expect(table, `table ${table} has no account_id: how is it erased?`).toMatch(/^hook_migrations$/);
  }
  return keyed;
}

/** API key ids of each account, remembered while it has them: some rows are found by key. */
const keyIdsOf = new Map<string, string[]>();

/** Rows per table that belong to the account. */
async function rowsOf(accountId: string): Promise<Record<string, number>> {
  const current: { id: string }[] = await sqlRows(relay, 'select id from api_key where account_id = ?', [accountId]);
  const keyIds = [...new Set([...(keyIdsOf.get(accountId) ?? []), ...current.map((row) => row.id)])];
  keyIdsOf.set(accountId, keyIds);
  const counts: Record<string, number> = {};
  for (const [table, condition] of await accountColumns()) {
    const where = condition.replace('$account', '?').replace('$keys', '?');
    const params = condition.includes('$account') ? [accountId] : [`{${[...keyIds, accountId].join(',')}}`];
    const [row] = await sqlRows(relay, `select count(*)::int as n from ${table} where ${where}`, params);
    counts[table] = row.n;
  }
  return counts;
}

/** An account with a bit of everything: endpoints and destinations of both kinds, events, attempts, members, keys, a console session, notifications, plan history. */
async function populatedAccount() {
  const { key, accountId } = await signUp(relay.baseUrl, { plan: 'pro' });
  const failing = await createEndpoint(relay.baseUrl, key, { name: 'failing', destination: { type: 'url', url: `${receiver.url}/fail` }, dedupe: { json_field: 'n' } });
  const held = await createEndpoint(relay.baseUrl, key, { name: 'held', destination: { type: 'cli' } });
  expect((await api(relay.baseUrl, 'POST', `/v1/endpoints/${held.id}/destinations`, { key, json: { destination: { type: 'url', url: `${receiver.url}/ok` } } })).status).toBe(201);
  const gone = await createEndpoint(relay.baseUrl, key, { name: 'gone' });
  expect((await api(relay.baseUrl, 'DELETE', `/v1/endpoints/${gone.id}`, { key })).status).toBe(204);
  const member = await api(relay.baseUrl, 'POST', '/v1/members', { key, json: { email: `dev-${accountId}@example.com`, role: 'member' } });
  expect(member.status).toBe(201);
  expect((await api(relay.baseUrl, 'POST', '/v1/api-keys', { key, json: { name: 'ci' } })).status).toBe(201);
  const signIn = await fetch(`${relay.baseUrl}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: key }) });
  expect(signIn.status).toBe(204);
  expect((await api(relay.baseUrl, 'PUT', '/v1/account/notifications', { key, json: { url: `${receiver.url}/notifications` } })).status).toBe(200);
  for (let i = 0; i < 3; i++) {
    await sendEvent(failing.url, JSON.stringify({ n: i }));
    await sendEvent(held.url, JSON.stringify({ n: i }));
  }
  return { key, accountId, failing, held };
}

describe('DELETE /v1/account', () => {
  it('needs an admin and the account id as confirmation', async () => {
    const { key, accountId } = await signUp(relay.baseUrl);
    const missing = expectProblem(await api(relay.baseUrl, 'DELETE', '/v1/account', { key }), 400, 'confirmation_required');
    expect(missing.detail).toContain(`?confirm=${accountId}`);
    expect(missing.errors).toEqual([{ field: 'query.confirm', message: `must be ${accountId}` }]);
    const other = await signUp(relay.baseUrl);
    const wrong = expectProblem(await api(relay.baseUrl, 'DELETE', `/v1/account?confirm=${other.accountId}`, { key }), 400, 'confirmation_required');
    expect(wrong.detail).toContain(`'${other.accountId}', not this account's id`);
    const member = await api(relay.baseUrl, 'POST', '/v1/members', { key, json: { email: 'm@example.com', role: 'member' } });
    expectProblem(await api(relay.baseUrl, 'DELETE', `/v1/account?confirm=${accountId}`, { key: member.body.api_key }), 403, 'admin_required');
    // Nothing was erased by the refusals.
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key })).status).toBe(200);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key: other.key })).status).toBe(200);
  });

  it('erases every row of the account, and only of that account', async () => {
    const doomed = await populatedAccount();
    const kept = await populatedAccount();
    // Every URL delivery has had its first attempt (3 failed, 3 delivered, and the plan.changed
    // notification if the notifier got to it after its URL was set) and the outbox is empty;
    // the failed ones' retries are due 30 s later, so both accounts' rows stay still while we compare.
    for (const { accountId } of [doomed, kept]) {
      await expect.poll(async () => (await sqlRows(
        relay,
        `select (select count(*)::int from notification_outbox where account_id = ?) as outbox,
                (select count(*)::int from delivery l join destination d on d.id = l.destination_id
                 where l.account_id = ? and d.type = 'url' and l.status = 'pending') as waiting,
                (select count(*)::int from attempt where account_id = ?) >= 6 as attempted`,
        [accountId, accountId, accountId],
      ))[0], { timeout: 10_000 }).toEqual({ outbox: 0, waiting: 0, attempted: true });
    }
    const before = await rowsOf(doomed.accountId);
    for (const table of ['account', 'api_key', 'member', 'endpoint', 'destination', 'event', 'delivery', 'attempt', 'plan_change', 'account_usage', 'console_session', 'rate_limit_counter']) {
      expect(before[table], `${table} before`).toBeGreaterThan(0);
    }
    const keptBefore = await rowsOf(kept.accountId);

    const response = await api(relay.baseUrl, 'DELETE', `/v1/account?confirm=${doomed.accountId}`, { key: doomed.key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: doomed.accountId,
      deleted: true,
      erased: { endpoints: 3, destinations: 4, events: before.event, api_keys: 3, members: 2 },
    });

    const after = await rowsOf(doomed.accountId);
    expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([]);
    // Rows found by other ids than the account's: none of its events, endpoints or keys is left anywhere.
    expect(await sqlRows(relay, 'select id from endpoint where id in (?, ?)', [doomed.failing.id, doomed.held.id])).toEqual([]);
    expect(await sqlRows(relay, `select event_id from delivery where endpoint_id in (?, ?)`, [doomed.failing.id, doomed.held.id])).toEqual([]);
    expect(await sqlRows(relay, `select id from event where endpoint_id in (?, ?)`, [doomed.failing.id, doomed.held.id])).toEqual([]);
    expect(await rowsOf(kept.accountId)).toEqual(keptBefore);

    expectProblem(await api(relay.baseUrl, 'GET', '/v1/account', { key: doomed.key }), 401, 'invalid_api_key');
    const ingest = await fetch(doomed.held.url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(ingest.status).toBe(404);
    expect(((await ingest.json()) as { code: string }).code).toBe('ingest_not_found');
    expect((await fetch(kept.held.url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(200);
    expect((await api(relay.baseUrl, 'GET', '/v1/account', { key: kept.key })).status).toBe(200);
  });

  it('lets a delivery in flight finish first, so its attempt is erased too', async () => {
    const { key, accountId } = await signUp(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'slow', destination: { type: 'url', url: `${receiver.url}/slow/${accountId}` } });
    const seen = receiver.requests.length;
    await sendEvent(endpoint.url, '{"slow":true}');
    await expect.poll(() => receiver.requests.slice(seen).some((request) => request.url.includes(accountId)), { timeout: 10_000 }).toBe(true);

    const response = await api(relay.baseUrl, 'DELETE', `/v1/account?confirm=${accountId}`, { key });
    expect(response.status).toBe(200);
    expect(response.body.erased.events).toBe(1);
    // The receiver has answered by now; whatever the worker recorded went with the account.
    await relay.app.delivery.recorder.drain();
    expect(Object.entries(await rowsOf(accountId)).filter(([, n]) => n > 0)).toEqual([]);
  });

  it('ingest running through the deletion, here and on another relay process, gets 200 or 404, never an error, and leaves nothing', async () => {
    const other = await startTestRelay({}, { sharing: relay });
    try {
      const { key, accountId } = await signUp(relay.baseUrl);
      const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'busy', destination: { type: 'cli' } });
      const path = new URL(endpoint.url).pathname;
      // Both processes have the endpoint cached before the deletion starts.
      for (const base of [relay.baseUrl, other.baseUrl]) await sendEvent(`${base}${path}`, '{"warm":true}');
      const statuses: number[] = [];
      let deleting = true;
      const senders = [relay.baseUrl, other.baseUrl].map(async (base) => {
        while (deleting) {
          const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"during":true}' });
          statuses.push(response.status);
          await response.arrayBuffer();
        }
      });
      const deleted = await api(relay.baseUrl, 'DELETE', `/v1/account?confirm=${accountId}`, { key });
      deleting = false;
      await Promise.all(senders);
      expect(deleted.status).toBe(200);
      expect(statuses.length).toBeGreaterThan(10);
      expect([...new Set(statuses)].sort()).toEqual(expect.arrayContaining([404]));
      expect(statuses.filter((status) => status !== 200 && status !== 404)).toEqual([]);
      for (const base of [relay.baseUrl, other.baseUrl]) expect((await fetch(`${base}${path}`, { method: 'POST', body: '{}' })).status).toBe(404);
      expect(Object.entries(await rowsOf(accountId)).filter(([, n]) => n > 0)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('removes a large history in batches', async () => {
    const { key, accountId } = await signUp(relay.baseUrl);
    const endpoint = await createEndpoint(relay.baseUrl, key, { name: 'many', destination: { type: 'cli' } });
    for (let i = 0; i < 7; i++) await sendEvent(endpoint.url, JSON.stringify({ i }));
    const erased = await eraseAccount(relay.orm, accountId, { batchSize: 2, pauseMs: 0 });
    expect(erased).toMatchObject({ events: 7, endpoints: 1, apiKeys: 1, members: 1 });
    expect(Object.entries(await rowsOf(accountId)).filter(([, n]) => n > 0)).toEqual([]);
    // Erasing again finds nothing: the account is gone.
    expect(await eraseAccount(relay.orm, accountId)).toBeNull();
  });
});
