import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@hook/core';
import { createOrm, EventWriter, insertEvents, retentionClassSql, type NewEvent, type Orm } from '../src/index.ts';
import type { TestDatabase } from '../src/testing.ts';
import { freshDatabase } from '@hook/test/database';
import { insertEndpoint } from './rows.ts';

let database: TestDatabase;
let orm: Orm;
const accountId = newId('account');
const endpointId = newId('endpoint');
const otherAccountId = newId('account');
const otherEndpointId = newId('endpoint');

beforeAll(async () => {
  database = await freshDatabase();
  orm = await createOrm({ databaseUrl: database.url });
  const connection = orm.em.getConnection();
  const now = new Date();
  for (const [account, endpoint] of [[accountId, endpointId], [otherAccountId, otherEndpointId]] as const) {
    await connection.execute('insert into account (id, plan, created_at) values (?, ?, ?)', [account, 'free', now]);
    await insertEndpoint((text, params) => connection.execute(text, params), account, [{ type: 'cli' }], { id: endpoint });
  }
});
afterAll(async () => {
  await orm.close();
  await database.drop();
});

function event(body: string, overrides: Partial<NewEvent> = {}): NewEvent {
  const receivedAt = new Date();
  return {
    id: newId('event'), accountId, endpointId, type: null, method: 'POST', path: '', query: '',
    headers: { 'content-type': 'text/plain' }, body: Buffer.from(body), contentType: 'text/plain',
    size: Buffer.byteLength(body), receivedAt, status: 'pending', ...overrides,
  };
}

async function storedCount(): Promise<number> {
  const rows = await orm.em.fork().getConnection().execute('select count(*)::int as n from event');
  return rows[0]!.n;
}

describe('EventWriter', () => {
  it('shares INSERTs and commits between concurrent writes, losing none', async () => {
    const writer = new EventWriter(orm, { maxConcurrentBatches: 2 });
    const before = await storedCount();
    await Promise.all(Array.from({ length: 300 }, (_, i) => writer.write(event(`e${i}`))));
    expect(await storedCount()).toBe(before + 300);
    expect(writer.stats.events).toBe(300);
    expect(writer.stats.batches).toBeLessThan(300 / 5);
  });

  it('a batch of any size stores exactly its events, bodies and headers in their places (statements bind bodies padded to a few sizes)', async () => {
    for (const size of [3, 5, 9, 17]) {
      const batch = Array.from({ length: size }, (_, i) => event(`size ${size} #${i}`, { headers: { 'x-n': String(i) } }));
      const outcomes = await insertEvents(orm, batch);
      expect(outcomes.every((outcome) => outcome.stored)).toBe(true);
      const rows: { id: string; body: Buffer; headers: Record<string, string> }[] = await orm.em.fork().getConnection()
        .execute('select id, body, headers from event where id = any(?::text[]) order by id', [`{${batch.map((e) => e.id).join(',')}}`]);
      expect(rows.map((row) => [row.id, row.body.toString(), row.headers['x-n']]))
        .toEqual(batch.map((e, i) => [e.id, `size ${size} #${i}`, String(i)]));
    }
  });

  it('writes a lone event at once, in its own statement', async () => {
    const writer = new EventWriter(orm);
    await writer.write(event('alone'));
    expect(writer.stats).toEqual({ batches: 1, events: 1 });
  });

  it('fails only the bad event of a batch; its neighbours are stored', async () => {
    const writer = new EventWriter(orm, { maxConcurrentBatches: 1 });
    const good = Array.from({ length: 5 }, (_, i) => event(`good${i}`));
    const taken = event('taken');
    await writer.write(taken);
    const bad = event('bad', { id: taken.id }); // an id already stored: the primary key refuses it
    const results = await Promise.allSettled([writer.write(event('first')), ...good.slice(0, 2).map((e) => writer.write(e)), writer.write(bad), ...good.slice(2).map((e) => writer.write(e))]);
    expect(results.filter((result) => result.status === 'rejected')).toHaveLength(1);
    expect(results[3]!.status).toBe('rejected');
    const ids = good.map((e) => e.id);
    const rows = await orm.em.fork().getConnection().execute('select id from event where id in (?, ?, ?, ?, ?)', ids);
    expect(rows).toHaveLength(5);
  });

  it("writes a flush of several accounts' events as one INSERT", async () => {
    const writer = new EventWriter(orm, { maxConcurrentBatches: 1 });
    // the first write's flush is in flight while the rest queue, so they share the next flush
    const events = [event('first'), event('ours'), event('theirs', { accountId: otherAccountId, endpointId: otherEndpointId }), event('ours too')];
    await Promise.all(events.map((e) => writer.write(e)));
    expect(writer.stats).toEqual({ batches: 2, events: 4 });
    const rows = await orm.em.fork().getConnection().execute('select account_id from event where id = any(?) order by id', [`{${events.map((e) => e.id).join(',')}}`]);
    expect(rows.map((row) => row.account_id)).toEqual(events.map((e) => e.accountId));
  });

  it("distributed: writes a flush of several accounts' events as one INSERT per account; a bad event fails alone and no other is stored twice", async () => {
    const writer = new EventWriter(orm, { maxConcurrentBatches: 1, distributed: true });
    const taken = event('taken again');
    await writer.write(taken);
    const ours = Array.from({ length: 3 }, (_, i) => event(`ours${i}`));
    const theirs = Array.from({ length: 3 }, (_, i) => event(`theirs${i}`, { accountId: otherAccountId, endpointId: otherEndpointId }));
    const before = writer.stats.batches;
    // the first write's flush is in flight while the rest queue, so they share the next flush
    const writes = [writer.write(event('first')), ...ours.map((e) => writer.write(e)), ...theirs.map((e) => writer.write(e)), writer.write(event('bad', { id: taken.id }))];
    const results = await Promise.allSettled(writes);
    expect(results.map((result) => result.status)).toEqual([...Array(7).fill('fulfilled'), 'rejected']);
    // statements committed: the first's, the other account's, and our 3 good events' each alone (our group failed, so each was retried alone)
    expect(writer.stats.batches - before).toBe(1 + 1 + 3);
    const ids = [...ours, ...theirs].map((e) => e.id);
    const rows = await orm.em.fork().getConnection().execute('select id, account_id from event where id = any(?) order by id', [`{${ids.join(',')}}`]);
    expect(rows.map((row) => row.id)).toEqual([...ids].sort());
  });

  // Batches of one account take turns on its usage row (metering), so the event flowing
  // past the stall belongs to another account.
  it('starts another INSERT beside one that stalls, so a stall does not hold other accounts', async () => {
    const writer = new EventWriter(orm, { stallMs: 20 });
    const stuck = event('stuck');
    // Another transaction inserts the same id and holds it uncommitted: the writer's
    // INSERT waits on the primary key until that transaction ends.
    const blocker = orm.em.fork();
    await blocker.begin();
    await blocker.getConnection().execute(
      // in the partition the writer stores the account's events in (its retention class)
      `insert into event (id, account_id, endpoint_id, method, path, query, headers, body, size, received_at, retention_class)
       select ?, ?, ?, 'POST', '', '', '{}', '\\x', 0, now(), ${retentionClassSql('a')} from account a where a.id = ?`,
      [stuck.id, accountId, endpointId, accountId], 'run', blocker.getTransactionContext(),
    );
    const stuckWrite = writer.write(stuck);
    let stuckSettled = false;
    void stuckWrite.then(() => (stuckSettled = true), () => (stuckSettled = true));
    await new Promise((resolve) => setTimeout(resolve, 60));
    await writer.write(event('flows past the stall', { accountId: otherAccountId, endpointId: otherEndpointId }));
    expect(stuckSettled).toBe(false);
    await blocker.rollback();
    await stuckWrite;
    expect(writer.stats.batches).toBe(2);
  });

  it('drain waits for everything queued', async () => {
    const writer = new EventWriter(orm, { maxConcurrentBatches: 1 });
    const before = await storedCount();
    const writes = Array.from({ length: 50 }, (_, i) => writer.write(event(`d${i}`)));
    await writer.drain();
    expect(await storedCount()).toBe(before + 50);
    await Promise.all(writes);
  });
});
