/**
 * `hook endpoints create/update --dedupe-header|--dedupe-field|--no-dedupe` (docs/sources.md,
 * Duplicates): the real `hook` binary against a real relay. A duplicate is answered with the
 * original event's id and leaves one event in `hook events list`; `hook endpoints get` and
 * `hook events get` show the setting and the key; conflicting flags are usage errors (exit 2).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
const user = new HookUser();

beforeAll(async () => {
  relay = await startTestRelay();
  await user.json(['signup', '--api-url', relay.baseUrl]);
});

afterAll(async () => {
  await relay?.close();
  user.remove();
});

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: { id: string; status: string } }> {
  const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: answer.status, body: await answer.json() as { id: string; status: string } };
}

describe('hook endpoints --dedupe-…', () => {
  it('--dedupe-header on create: a redelivery is answered with the original id, one event is listed; both gets show it', async () => {
    const created = await user.json(['endpoints', 'create', 'github', '--dedupe-header', 'X-GitHub-Delivery']);
    expect(created.dedupe).toEqual({ header: 'x-github-delivery' });
    expect((await user.run(['endpoints', 'get', 'github'])).stdout).toMatch(/Dedupe:\s+header x-github-delivery\n/);

    const delivery = { 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' };
    const first = await post(created.url, '{"zen":"Design for failure."}', delivery);
    expect(first).toEqual({ status: 200, body: { id: expect.stringMatching(/^evt_/), status: 'pending' } });
    const again = await post(created.url, '{"zen":"Design for failure."}', delivery);
    expect(again).toEqual({ status: 200, body: { id: first.body.id, status: 'duplicate' } });

    const listed = await user.json(['events', 'list', '--endpoint', 'github']);
    expect(listed.data.map((event: { id: string }) => event.id)).toEqual([first.body.id]);
    expect(listed.data[0].dedupe_key).toBe(delivery['x-github-delivery']);
    expect((await user.json(['events', 'get', first.body.id])).dedupe_key).toBe(delivery['x-github-delivery']);
    expect((await user.run(['events', 'get', first.body.id])).stdout).toMatch(/Dedupe key:\s+72d3162e-cc78-11e3-81ab-4c9367dc0958\n/);
  });

  it('--dedupe-field on update (hook send twice); --no-dedupe stores every request again; on again, a key still held is a duplicate', async () => {
    await user.json(['endpoints', 'create', 'stripe']);
    expect((await user.run(['endpoints', 'get', 'stripe'])).stdout).toMatch(/Dedupe:\s+off\n/);
    const updated = await user.json(['endpoints', 'update', 'stripe', '--dedupe-field', 'data.object.id']);
    expect(updated.dedupe).toEqual({ json_field: 'data.object.id' });
    expect((await user.run(['endpoints', 'get', 'stripe'])).stdout).toMatch(/Dedupe:\s+JSON field data\.object\.id\n/);

    const body = '{"id":"evt_1","data":{"object":{"id":"in_1"}}}';
    const sent = await user.json(['send', 'stripe', '--data', body]);
    expect(sent.status).toBe('pending');
    const resent = await user.json(['send', 'stripe', '--data', body]);
    expect(resent).toEqual({ id: sent.id, status: 'duplicate', endpoint_id: updated.id });
    expect((await user.json(['events', 'list', '--endpoint', 'stripe'])).data.map((event: { id: string }) => event.id)).toEqual([sent.id]);

    const cleared = await user.json(['endpoints', 'update', 'stripe', '--no-dedupe']);
    expect(cleared.dedupe).toBeNull();
    expect((await user.run(['endpoints', 'get', 'stripe'])).stdout).toMatch(/Dedupe:\s+off\n/);
    const stored = await user.json(['send', 'stripe', '--data', body]);
    expect(stored.status).toBe('pending');
    expect(stored.id).not.toBe(sent.id);
    expect((await user.json(['events', 'get', stored.id])).dedupe_key).toBeNull();
    expect((await user.run(['events', 'get', stored.id])).stdout).not.toContain('Dedupe key');

    // Keys claimed while it was on stay with their events: turned on again, the first copy's key still holds.
    await user.json(['endpoints', 'update', 'stripe', '--dedupe-field', 'data.object.id']);
    expect(await user.json(['send', 'stripe', '--data', body])).toEqual({ id: sent.id, status: 'duplicate', endpoint_id: updated.id });
  });

  it('conflicting or malformed flags are usage errors (exit 2) on stderr, naming the fix; nothing is changed', async () => {
    await user.json(['endpoints', 'create', 'shopify', '--dedupe-header', 'X-Shopify-Event-Id']);
    const cases: Array<[string[], string]> = [
      [['endpoints', 'update', 'shopify', '--dedupe-header', 'X-Shopify-Webhook-Id', '--dedupe-field', 'id'], '--dedupe-header and --dedupe-field can\'t be used together'],
      [['endpoints', 'create', 'both', '--dedupe-header', 'Idempotency-Key', '--dedupe-field', 'id'], 'give --dedupe-header <name> for a header'],
      [['endpoints', 'update', 'shopify', '--no-dedupe', '--dedupe-header', 'X-Shopify-Webhook-Id'], '--no-dedupe can\'t be used with --dedupe-header'],
      [['endpoints', 'update', 'shopify', '--no-dedupe', '--dedupe-field', 'id'], 'Either turn dedupe off with --no-dedupe'],
      [['endpoints', 'update', 'shopify', '--dedupe-header', 'X-Shopify-Webhook-Id: 1'], 'must be a header name'],
      [['endpoints', 'update', 'shopify', '--dedupe-field', '$.id'], 'e.g. id or data.object.id'],
    ];
    for (const [args, message] of cases) {
      const result = await user.run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(message);
      expect(result.stdout, args.join(' ')).toBe('');
    }
    expect((await user.json(['endpoints', 'get', 'shopify'])).dedupe).toEqual({ header: 'x-shopify-event-id' });
    expect((await user.run(['endpoints', 'get', 'both'])).code).toBe(1);
  });
});
