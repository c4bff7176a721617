/**
 * AttemptRecorder's group commit across accounts. On a distributed PostgreSQL
 * (docs/scaling.md) a flush is one statement per account, each routed to its shard, so a
 * result that fails its statement fails only its own account's, and no other result is
 * recorded twice when that account's results are retried one by one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@hook/core';
import { AttemptRecorder, claimDue, createOrm, EventWriter, type ClaimedDelivery, type NewEvent, type Orm, type RecordInput } from '../src/index.ts';
import type { TestDatabase } from '../src/testing.ts';
import { freshDatabase } from '@hook/test/database';
import { insertEndpoint } from './rows.ts';

let database: TestDatabase;
let orm: Orm;
const accounts = [newId('account'), newId('account')];
const endpoints: string[] = [];

async function sql(text: string, params: unknown[] = []): Promise<any[]> {
  return orm.em.fork().getConnection().execute(text, params);
}

beforeAll(async () => {
  database = await freshDatabase();
  orm = await createOrm({ databaseUrl: database.url, poolMax: 20 });
  for (const accountId of accounts) {
    await sql('insert into account (id, plan, created_at) values (?, ?, now())', [accountId, 'pro']);
    endpoints.push((await insertEndpoint(sql, accountId)).endpointId);
  }
});
afterAll(async () => {
  await orm.close();
  await database.drop();
});

function newEvent(account: number): NewEvent {
  return {
    id: newId('event'), accountId: accounts[account]!, endpointId: endpoints[account]!, type: null, method: 'POST', path: '', query: '', headers: {}, body: Buffer.from('e'),
    contentType: null, size: 1, receivedAt: new Date(Date.now() - 1000), status: 'pending',
  };
}

function delivered(delivery: ClaimedDelivery, responseStatus = 200): RecordInput {
  return {
    delivery,
    attempt: { id: newId('attempt'), startedAt: new Date(), durationMs: 5, responseStatus, responseBody: null, error: null, failureKind: null },
    next: { status: 'delivered', autoAttempts: delivery.autoAttempts + 1, nextAttemptAt: null },
    health: 'ok',
  };
}

describe('AttemptRecorder', () => {
  it("distributed: records a flush of several accounts' results per account; a bad result fails alone and no other is recorded twice", async () => {
    const writer = new EventWriter(orm);
    const events = [newEvent(0), ...Array.from({ length: 3 }, () => newEvent(0)), ...Array.from({ length: 3 }, () => newEvent(1)), newEvent(0)];
    await Promise.all(events.map((event) => writer.write(event)));
    const claimed = new Map((await claimDue(orm, { limit: 100, leaseMs: 60_000, perDestinationLimit: 100 })).map((delivery) => [delivery.id, delivery]));
    expect(claimed.size).toBe(events.length);
    const inputs = events.map((event) => delivered(claimed.get(event.id)!));
    // the last one's status is out of the column's range: its statement fails
    inputs[inputs.length - 1] = delivered(claimed.get(events.at(-1)!.id)!, 2 ** 40);

    const recorder = new AttemptRecorder(orm, { distributed: true });
    // the first is recorded at once; the rest queue meanwhile and share the next flush
    const results = await Promise.allSettled(inputs.map((input) => recorder.record(input)));
    expect(results.map((result) => result.status)).toEqual([...Array(events.length - 1).fill('fulfilled'), 'rejected']);
    expect(results.slice(0, -1).map((result) => (result as PromiseFulfilledResult<unknown>).value)).toEqual(Array(events.length - 1).fill({ held: true, eventStatus: 'delivered' }));
    const attempts = await sql('select event_id, count(*)::int as n from attempt where event_id = any(?) group by event_id order by event_id', [`{${events.map((e) => e.id).join(',')}}`]);
    expect(attempts).toEqual(events.slice(0, -1).map((event) => ({ event_id: event.id, n: 1 })).sort((a, b) => (a.event_id < b.event_id ? -1 : 1)));
  });
});
