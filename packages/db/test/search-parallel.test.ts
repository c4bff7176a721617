/**
 * A payload search (`GET /v1/events?q=`, listEvents with `text`) under a parallel plan, which
 * PostgreSQL picks once `event` is large (2 M rows in issue 29's measurement). The test
 * forces parallel plans on a small table instead (debug_parallel_query, force_parallel_mode
 * before PostgreSQL 16): a function a worker cannot run (hook_body_text, whose exception
 * block is a subtransaction) then fails the search, as it did at size.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@hook/core';
import { createOrm, insertEvents, listEvents, type NewEvent, type Orm } from '../src/index.ts';
import type { TestDatabase } from '../src/testing.ts';
import { freshDatabase } from '@hook/test/database';
import { insertEndpoint } from './rows.ts';

let database: TestDatabase;
let orm: Orm;
const accountId = newId('account');
let endpointId: string;

async function sql(text: string, params: unknown[] = []): Promise<any[]> {
  return orm.em.fork().getConnection().execute(text, params);
}

function event(body: Buffer): NewEvent {
  return {
    id: newId('event'), accountId, endpointId, type: null, method: 'POST', path: '', query: '', headers: {}, body,
    contentType: 'application/json', size: body.length, receivedAt: new Date(), status: 'pending', dedupeKey: null,
  };
}

beforeAll(async () => {
  database = await freshDatabase();
  orm = await createOrm({ databaseUrl: database.url });
  await sql('insert into account (id, plan, created_at) values (?, ?, now())', [accountId, 'pro']);
  endpointId = (await insertEndpoint(sql, accountId)).endpointId;
});
afterAll(async () => {
  await orm.close();
  await database.drop();
});

describe('payload search under a parallel plan', () => {
  it('finds text in UTF-8 and in other bytes instead of failing in a parallel worker', async () => {
    const text = event(Buffer.from('{"note":"the Needle is here"}'));
    const binary = event(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('needle in bytes')]));
    const other = event(Buffer.from('{"note":"nothing"}'));
    await insertEvents(orm, [text, binary, other]);
    const [{ version }] = await sql('select current_setting(\'server_version_num\')::int as version');
    const found = await orm.em.fork().transactional(async (em) => {
      await em.execute(version >= 160000 ? 'set local debug_parallel_query = on' : 'set local force_parallel_mode = on');
      await em.execute('set local parallel_setup_cost = 0');
      await em.execute('set local parallel_tuple_cost = 0');
      return listEvents(em, { accountId, text: 'needle', maxScanned: 1000, limit: 10 });
    });
    expect(found.events.map((listed) => listed.id).sort()).toEqual([text.id, binary.id].sort());
  });
});
