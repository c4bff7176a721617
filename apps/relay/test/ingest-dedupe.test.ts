/**
 * Duplicates dropped at ingest (docs/sources.md, "Duplicates") against a real relay and
 * PostgreSQL: a request whose dedupe key (a header or a JSON field) the endpoint already
 * stored is answered 200 with the original event's id, and is stored and delivered once;
 * requests without a key, other endpoints and unverified requests are unaffected; a key
 * refused over the allowance, or removed with its event (retention), is stored again.
 */
import { sign as signGitHub } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { pruneExpiredEvents } from '@hook/db';
import { PLAN_LIMITS } from '@hook/core';
import { api, expectProblem, signUp, sqlRows, type TestRelay, useRelayWithReceiver } from '@hook/test/relay';
import type { Receiver } from '@hook/test/receiver';

let relay: TestRelay;
let receiver: Receiver;
let key: string;
useRelayWithReceiver((started) => ({ relay, receiver, key } = started));

async function create(body: Record<string, unknown>, as = key) {
  const created = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key: as, json: body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: response.status, body: await response.json() as any };
}

async function storedKeys(endpointId: string): Promise<(string | null)[]> {
  const rows = await sqlRows(relay, 'select dedupe_key from event where endpoint_id = ? order by id', [endpointId]);
  return rows.map((row) => row.dedupe_key);
}

describe('duplicates', () => {
  it('a header key: the repeat is answered with the original id, stored and delivered once', async () => {
    const endpoint = await create({ name: 'github', destination: { type: 'url', url: `${receiver.url}/gh` }, dedupe: { header: 'X-GitHub-Delivery' } });
    expect(endpoint.dedupe).toEqual({ header: 'x-github-delivery' });
    const first = await post(endpoint.url, '{"n":1}', { 'x-github-delivery': 'd-1' });
    expect(first).toEqual({ status: 200, body: { id: expect.stringMatching(/^evt_/), status: 'pending' } });
    const again = await post(endpoint.url, '{"n":1,"retry":true}', { 'X-GitHub-Delivery': 'd-1' });
    expect(again).toEqual({ status: 200, body: { id: first.body.id, status: 'duplicate' } });
    const other = await post(endpoint.url, '{"n":2}', { 'x-github-delivery': 'd-2' });
    expect(other.body.status).toBe('pending');
    const keyless = [await post(endpoint.url, '{"n":3}'), await post(endpoint.url, '{"n":3}', { 'x-github-delivery': '  ' })];
    expect(keyless.map((answer) => answer.body.status)).toEqual(['pending', 'pending']);

    expect(await storedKeys(endpoint.id)).toEqual(['d-1', 'd-2', null, null]);
    const [usage] = await sqlRows(relay, 'select sum(events_accepted)::int as n from account_usage u join endpoint e on e.account_id = u.account_id where e.id = ?', [endpoint.id]);
    expect(usage.n).toBeGreaterThanOrEqual(4);
    const delivered = await receiver.waitFor(4);
    expect(delivered.filter((request) => request.url.endsWith('/gh')).map((request) => request.body.toString()).sort()).toEqual(['{"n":1}', '{"n":2}', '{"n":3}', '{"n":3}']);
    const shown = await api(relay.baseUrl, 'GET', `/v1/events/${first.body.id}`, { key });
    expect(shown.body.dedupe_key).toBe('d-1');
    // the same key on another endpoint is another event
    const neighbour = await create({ name: 'github 2', dedupe: { header: 'x-github-delivery' } });
    expect((await post(neighbour.url, '{}', { 'x-github-delivery': 'd-1' })).body.status).toBe('pending');
    // operators see duplicates apart from accepted events
    const metrics = await (await fetch(`${relay.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^hook_ingest_requests_total\{outcome="duplicate"\} [1-9]/m);
  });

  it('a JSON field key (Stripe\'s id, or a dotted path); a body without it is stored as usual', async () => {
    const stripe = await create({ name: 'stripe', dedupe: { json_field: 'id' } });
    const event = JSON.stringify({ id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy', object: 'event', type: 'customer.created' });
    const first = await post(stripe.url, event);
    const again = await post(stripe.url, event);
    expect(again.body).toEqual({ id: first.body.id, status: 'duplicate' });
    const nested = await create({ name: 'nested', dedupe: { json_field: 'data.delivery' } });
    const a = await post(nested.url, '{"data":{"delivery":42}}');
    expect((await post(nested.url, '{"data":{"delivery":42},"other":1}')).body).toEqual({ id: a.body.id, status: 'duplicate' });
    expect((await post(nested.url, '{"data":{"delivery":"42 "}}')).body.status).toBe('pending');
    for (const body of ['{"data":{}}', '{"data":{"delivery":{"x":1}}}', 'not json', '[{"data":{"delivery":42}}]']) {
      expect((await post(nested.url, body)).body.status, body).toBe('pending');
    }
    expect(await storedKeys(nested.id)).toEqual(['42', '42 ', null, null, null, null]);
  });

  it('a long key is kept by its digest; a duplicate of it is still found', async () => {
    const endpoint = await create({ name: 'long', dedupe: { header: 'idempotency-key' } });
    const long = 'k'.repeat(5000);
    const first = await post(endpoint.url, '{}', { 'idempotency-key': long });
    expect((await post(endpoint.url, '{}', { 'idempotency-key': long })).body).toEqual({ id: first.body.id, status: 'duplicate' });
    expect((await storedKeys(endpoint.id))[0]).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('a custom response answers a duplicate with the original id', async () => {
    const endpoint = await create({ name: 'answered', dedupe: { header: 'webhook-id' }, response: { status: 202, body: 'got {{event_id}}' } });
    const first = await fetch(endpoint.url, { method: 'POST', headers: { 'webhook-id': 'msg_1' }, body: 'x' });
    const again = await fetch(endpoint.url, { method: 'POST', headers: { 'webhook-id': 'msg_1' }, body: 'x' });
    expect(again.status).toBe(202);
    expect(await again.text()).toBe(await first.text());
  });

  it('with verification: only a verified request claims a key; a forged one cannot block the genuine one', async () => {
    const secret = 'It\'s a Secret to Everybody';
    const endpoint = await create({ name: 'verified', verification: { provider: 'github', secret, mode: 'flag' }, dedupe: { header: 'x-github-delivery' } });
    const body = '{"zen":"Keep it logically awesome."}';
    const forged = await post(endpoint.url, body, { 'x-github-delivery': 'g-1', 'x-hub-signature-256': 'sha256=00' });
    const genuine = await post(endpoint.url, body, { 'x-github-delivery': 'g-1', 'x-hub-signature-256': await signGitHub(secret, body) });
    expect(genuine.body.status).toBe('pending');
    expect(genuine.body.id).not.toBe(forged.body.id);
    const retried = await post(endpoint.url, body, { 'x-github-delivery': 'g-1', 'x-hub-signature-256': await signGitHub(secret, body) });
    expect(retried.body).toEqual({ id: genuine.body.id, status: 'duplicate' });
    expect(await storedKeys(endpoint.id)).toEqual([null, 'g-1']);
  });

  it('turned off, every request is stored; turned on, keys stored before it count only from then', async () => {
    const endpoint = await create({ name: 'toggled' });
    expect(endpoint.dedupe).toBeNull();
    await post(endpoint.url, '{}', { 'idempotency-key': 'x' });
    expect((await post(endpoint.url, '{}', { 'idempotency-key': 'x' })).body.status).toBe('pending');
    const on = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { dedupe: { header: 'Idempotency-Key' } } });
    expect(on.body.dedupe).toEqual({ header: 'idempotency-key' });
    const first = await post(endpoint.url, '{}', { 'idempotency-key': 'x' });
    expect(first.body.status).toBe('pending');
    expect((await post(endpoint.url, '{}', { 'idempotency-key': 'x' })).body).toEqual({ id: first.body.id, status: 'duplicate' });
    const off = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { dedupe: null } });
    expect(off.body.dedupe).toBeNull();
    expect((await post(endpoint.url, '{}', { 'idempotency-key': 'x' })).body.status).toBe('pending');
  });

  it('bad settings are 400s naming the field', async () => {
    for (const dedupe of [{ header: 'bad header' }, { json_field: 'a..b' }, { header: 'a', json_field: 'b' }, {}, { header: '' }, { json_field: 'x'.repeat(101) }]) {
      const answer = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'bad', dedupe } });
      const problem = expectProblem(answer, 400, 'validation_failed');
      expect(JSON.stringify(problem.errors), JSON.stringify(dedupe)).toContain('dedupe');
    }
  });

  it('over the allowance nothing is stored and no key held: the sender\'s retry is stored once there is room; a duplicate at the limit still gets 200', async () => {
    const free = await signUp(relay.baseUrl, { plan: 'free' });
    const endpoint = await create({ name: 'full', dedupe: { header: 'x-delivery' } }, free.key);
    const limit = PLAN_LIMITS.free.eventsPerMonth!;
    const setAccepted = (n: number) => sqlRows(relay, `
      insert into account_usage (account_id, month, events_accepted) values (?, date_trunc('month', now() at time zone 'UTC')::date, ?)
      on conflict (account_id, month) do update set events_accepted = excluded.events_accepted`, [free.accountId, n]);
    await setAccepted(limit);
    const refused = await fetch(endpoint.url, { method: 'POST', headers: { 'x-delivery': 'q-1' }, body: '{}' });
    expect(refused.status).toBe(429);
    expect(await sqlRows(relay, 'select * from event where endpoint_id = ?', [endpoint.id])).toEqual([]);
    await setAccepted(limit - 1);
    const stored = await post(endpoint.url, '{}', { 'x-delivery': 'q-1' });
    expect(stored.body.status).toBe('pending');
    // a duplicate is not counted: the account is exactly at its allowance, and the retry still gets 200
    expect((await post(endpoint.url, '{}', { 'x-delivery': 'q-1' })).body).toEqual({ id: stored.body.id, status: 'duplicate' });
    const [usage] = await sqlRows(relay, `select events_accepted::int as n from account_usage where account_id = ? and month = date_trunc('month', now() at time zone 'UTC')::date`, [free.accountId]);
    expect(usage.n).toBe(limit);
  });

  it('the key lives as long as its event: once retention removes the event, the key is stored again', async () => {
    const endpoint = await create({ name: 'kept', dedupe: { header: 'x-delivery' } });
    const first = await post(endpoint.url, '{}', { 'x-delivery': 'r-1' });
    await pruneExpiredEvents(relay.orm, { now: new Date(Date.now() + 400 * 86_400_000), pauseMs: 0 });
    expect(await sqlRows(relay, 'select * from event where id = ?', [first.body.id])).toEqual([]);
    const again = await post(endpoint.url, '{}', { 'x-delivery': 'r-1' });
    expect(again.body.status).toBe('pending');
    expect(again.body.id).not.toBe(first.body.id);
  });

  it('many copies at once, in one batch and across batches, store exactly one event', async () => {
    const endpoint = await create({ name: 'burst', dedupe: { header: 'x-delivery' } });
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => post(endpoint.url, `{"copy":${i}}`, { 'x-delivery': `b-${i % 4}` })));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const stored = answers.filter((answer) => answer.body.status === 'pending').map((answer) => answer.body.id);
    expect(stored).toHaveLength(4);
    expect(new Set(answers.map((answer) => answer.body.id))).toEqual(new Set(stored));
    expect((await storedKeys(endpoint.id)).sort()).toEqual(['b-0', 'b-1', 'b-2', 'b-3']);
  });
});
