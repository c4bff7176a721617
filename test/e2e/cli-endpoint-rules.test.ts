/**
 * `hook endpoints create` and `update` set (and `update` clears) an endpoint's
 * transformation and filter (real relay, real `hook` binary).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
const user = new HookUser();

beforeAll(async () => {
  relay = await startTestRelay();
  await user.json(['signup', '--api-url', relay.baseUrl]);
  await user.json(['endpoints', 'create', 'orders']);
});

afterAll(async () => {
  await relay?.close();
  user.remove();
});

describe('hook endpoints update: transformation and filter', () => {
  it('sets them from files and inline JSON, shows them, and clears them', async () => {
    const code = "addHandler('transform', (request) => { delete request.body.secret; return request; });\n";
    const codeFile = join(user.home, 't.js');
    const filterFile = join(user.home, 'f.json');
    writeFileSync(codeFile, code);
    writeFileSync(filterFile, '{"body":{"type":{"$startsWith":"order."}}}');

    const set = await user.json(['endpoints', 'update', 'orders', '--transformation-file', codeFile, '--filter-file', filterFile]);
    expect(set).toMatchObject({ transformation: { code }, filter: { body: { type: { $startsWith: 'order.' } } } });

    const inline = await user.json(['endpoints', 'update', 'orders', '--filter', '{"headers":{"x-env":"prod"}}']);
    expect(inline.filter).toEqual({ headers: { 'x-env': 'prod' } });
    expect(inline.transformation).toEqual({ code });

    const shown = await user.run(['endpoints', 'get', 'orders']);
    expect(shown.stdout).toMatch(/Transformation:\s+\d+ bytes of JavaScript/);
    expect(shown.stdout).toContain('{"headers":{"x-env":"prod"}}');

    const cleared = await user.json(['endpoints', 'update', 'orders', '--clear-transformation', '--clear-filter']);
    expect(cleared).toMatchObject({ transformation: null, filter: null });
  });

  it('refuses code that does not compile (exit 1, the line named) and a filter that is not JSON (exit 2)', async () => {
    const bad = join(user.home, 'bad.js');
    writeFileSync(bad, "addHandler('transform', (request) => {\n  return request;\n");
    const refused = await user.run(['endpoints', 'update', 'orders', '--transformation-file', bad, '--json']);
    expect(refused.code).toBe(1);
    const problem = JSON.parse(refused.stderr.trim());
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors[0]).toMatchObject({ field: 'body.transformation.code', message: expect.stringMatching(/^line \d+: /) });

    const notJson = await user.run(['endpoints', 'update', 'orders', '--filter', '{body:']);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain('--filter is not valid JSON');

    const badOperator = await user.run(['endpoints', 'update', 'orders', '--filter', '{"body":{"a":{"$regex":"x"}}}', '--json']);
    expect(badOperator.code).toBe(1);
    expect(JSON.parse(badOperator.stderr.trim()).errors[0].field).toBe('body.filter.body.a.$regex');
  });
});

describe('hook endpoints create: transformation and filter', () => {
  it('creates an endpoint with both set from the start', async () => {
    const code = "addHandler('transform', (request) => request);\n";
    const codeFile = join(user.home, 'create.js');
    writeFileSync(codeFile, code);
    const created = await user.json(['endpoints', 'create', 'with-rules', '--transformation-file', codeFile, '--filter', '{"body":{"type":"order.created"}}']);
    expect(created).toMatchObject({ name: 'with-rules', transformation: { code }, filter: { body: { type: 'order.created' } } });
    const missing = await user.run(['endpoints', 'create', 'no-file', '--transformation-file', join(user.home, 'absent.js')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Cannot read --transformation-file');
  });
});
