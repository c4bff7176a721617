/**
 * `hook transform test` with the real binary against a real relay: a transformation run
 * on a stored event and on a request file, human and --json output, exit 1 with the
 * line when the code fails, exit 2 for a bad command line.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { createEndpoint, sendEvent, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
const user = new HookUser();
let eventId: string;
const file = (name: string, text: string) => {
  const path = join(user.home, name);
  writeFileSync(path, text);
  return path;
};

beforeAll(async () => {
  relay = await startTestRelay();
  const signup = await user.json(['signup', '--api-url', relay.baseUrl]);
  const endpoint = await createEndpoint(relay.baseUrl, signup.api_key, { name: 'shop' });
  eventId = await sendEvent(endpoint.url, JSON.stringify({ order: 7, card: '4242' }), { 'content-type': 'application/json', 'x-shop-token': 'abc' });
});

afterAll(async () => {
  await relay?.close();
  user.remove();
});

const RENAME = `addHandler('transform', (request, context) => {
  console.log('event', context.event_id);
  const { card, ...body } = request.body;
  context.setType('order.paid');
  return { ...request, headers: { 'x-token': request.headers['x-shop-token'] }, body };
});
`;

describe('hook transform test', () => {
  it('runs the code on a stored event: --json gives the result, the human view shows it', async () => {
    const code = file('rename.js', RENAME);
    const result = await user.json(['transform', 'test', '--file', code, '--event', eventId]);
    expect(result).toEqual({
      ok: true,
      request: { method: 'POST', path: '', query: '', headers: { 'x-token': 'abc' }, body: { order: 7 } },
      type: 'order.paid',
      logs: [{ level: 'log', message: `event ${eventId}` }],
    });
    const text = await user.run(['transform', 'test', '--file', code, '--event', eventId]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Type:\s+order\.paid/);
    expect(text.stdout).toMatch(/x-token:\s+abc/);
    expect(text.stdout).toContain('"order": 7');
    expect(text.stdout).toContain(`[log] event ${eventId}`);
  });

  it('runs the code on a request file', async () => {
    const code = file('form.js', `addHandler('transform', (request) => ({ ...request, body: Object.fromEntries(request.body.split('&').map((pair) => pair.split('='))) }));`);
    const request = file('request.json', JSON.stringify({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=2' }));
    const result = await user.json(['transform', 'test', '--file', code, '--request', request]);
    expect(result.ok).toBe(true);
    expect(result.request.body).toEqual({ a: '1', b: '2' });
  });

  it('exits 1 with the error and its line when the transformation fails', async () => {
    const code = file('broken.js', `addHandler('transform', (request) => {\n  console.log('before');\n  return request.body.missing.field;\n});\n`);
    const text = await user.run(['transform', 'test', '--file', code, '--event', eventId]);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain("The transformation failed at line 3: TypeError: cannot read property 'field' of undefined");
    expect(text.stdout).toContain('[log] before');
    const json = await user.run(['transform', 'test', '--file', code, '--event', eventId, '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { line: 3 } });
    expect(JSON.parse(json.stderr)).toMatchObject({ code: 'transform_test_failed' });
  });

  it('exits 2 without --event or --request, or with both', async () => {
    const code = file('ok.js', RENAME);
    expect((await user.run(['transform', 'test', '--file', code])).code).toBe(2);
    expect((await user.run(['transform', 'test', '--file', code, '--event', eventId, '--request', code])).code).toBe(2);
  });
});
