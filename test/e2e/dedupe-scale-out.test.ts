/**
 * Duplicates across relay processes (issue 19, item 4): 50 senders at once post the same
 * delivery id, alternately to two relay processes on one PostgreSQL. Exactly one event is
 * stored, every sender gets 200 with that event's id, the receiver gets it once and the
 * account's usage counts it once. Repeated for several delivery ids, with keyless events
 * mixed in (stored every time) and a JSON-field endpoint beside the header one.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '@hook/db/testing';
import { freshDatabase } from '../support/database.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startRelayProcess, stopRelayProcesses } from '../support/relay-process.ts';

const SENDERS = 50;
const ROUNDS = 4;
const children: ChildProcess[] = [];
let database: TestDatabase | undefined;
let receiver: Receiver | undefined;

afterAll(async () => {
  await stopRelayProcesses(children);
  await receiver?.close();
  await database?.drop();
});

async function rows(query: string, params: unknown[] = []): Promise<any[]> {
  const client = new pg.Client({ connectionString: database!.url });
  await client.connect();
  try {
    return (await client.query(query, params)).rows;
  } finally {
    await client.end();
  }
}

describe('dedupe across relay processes', () => {
  it('50 concurrent senders of one delivery id to two processes store exactly one event', { timeout: 90_000 }, async () => {
    database = await freshDatabase();
    receiver = await startReceiver();
    const relays = await Promise.all([0, 1].map(() => startRelayProcess(database!.url)));
    children.push(...relays.map((relay) => relay.child));
    const [first] = relays;
    const { api_key: key, account: { id: accountId } } = (await (await fetch(`${first!.baseUrl}/v1/accounts`, { method: 'POST' })).json()) as { api_key: string; account: { id: string } };
    const create = async (body: Record<string, unknown>) => (await (await fetch(`${first!.baseUrl}/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ destination: { type: 'url', url: receiver!.url }, ...body }),
    })).json()) as { id: string; url: string };
    const byHeader = await create({ name: 'github', dedupe: { header: 'x-github-delivery' } });
    const byField = await create({ name: 'stripe', dedupe: { json_field: 'id' } });

    const storedIds = new Set<string>();
    let keyless = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const endpoint = round % 2 === 0 ? byHeader : byField;
      const delivery = `delivery-${round}`;
      const path = new URL(endpoint.url).pathname;
      const answers = await Promise.all(Array.from({ length: SENDERS }, async (_, sender) => {
        const relay = relays[sender % 2]!;
        // every tenth sender sends an event with no key: stored each time
        const withKey = sender % 10 !== 9;
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (withKey && endpoint === byHeader) headers['x-github-delivery'] = delivery;
        const body = JSON.stringify(withKey && endpoint === byField ? { id: delivery, sender } : { sender, round });
        const response = await fetch(`${relay.baseUrl}${path}`, { method: 'POST', headers, body });
        return { withKey, status: response.status, body: await response.json() as { id: string; status: string } };
      }));
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      const keyed = answers.filter((answer) => answer.withKey);
      const originals = keyed.filter((answer) => answer.body.status === 'pending');
      expect(originals, `round ${round}`).toHaveLength(1);
      expect(new Set(keyed.map((answer) => answer.body.id))).toEqual(new Set([originals[0]!.body.id]));
      expect(keyed.filter((answer) => answer.body.status === 'duplicate')).toHaveLength(keyed.length - 1);
      storedIds.add(originals[0]!.body.id);
      for (const answer of answers.filter((a) => !a.withKey)) {
        expect(answer.body.status).toBe('pending');
        storedIds.add(answer.body.id);
        keyless++;
      }
    }
    expect(storedIds.size).toBe(ROUNDS + keyless);

    const events = await rows('select id, dedupe_key from event where account_id = $1', [accountId]);
    expect(new Set(events.map((event) => event.id))).toEqual(storedIds);
    expect(events.filter((event) => event.dedupe_key !== null).map((event) => event.dedupe_key).sort()).toEqual(Array.from({ length: ROUNDS }, (_, round) => `delivery-${round}`));
    const [usage] = await rows('select sum(events_accepted)::int as n from account_usage where account_id = $1', [accountId]);
    expect(usage.n).toBe(storedIds.size);

    // delivered once each: the receiver gets exactly the stored events
    await receiver.waitFor(storedIds.size, 30_000);
    // Every delivery recorded delivered, none held under a lease: no process has one it could send again.
    await expect.poll(async () => (await rows("select count(*)::int as n from delivery where account_id = $1 and (status <> 'delivered' or lease_id is not null)", [accountId]))[0].n, { timeout: 30_000 }).toBe(0);
    const delivered = receiver.requests.map((request) => request.headers['webhook-id']);
    expect(delivered).toHaveLength(storedIds.size);
    expect(new Set(delivered)).toEqual(storedIds);
  });
});
