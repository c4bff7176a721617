import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { HookApiError, HookNetworkError } from '@hook/client/errors';
import { ENDPOINT_NOT_FOUND, UsageError, UserError } from '../src/errors.ts';
import { Output } from '../src/output/index.ts';

function capture(json: boolean) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = { stdout: '', stderr: '' };
  stdout.on('data', (chunk: Buffer) => (text.stdout += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (text.stderr += chunk.toString()));
  return { out: new Output({ stdout, stderr }, { json }), text };
}

describe('Output.failure', () => {
  it('reports a bug with its stack and a request to report it, exit 1', () => {
    const { out, text } = capture(false);
    expect(out.failure(new TypeError('cannot read properties of undefined'))).toBe(1);
    expect(text.stdout).toBe('');
    const plain = text.stderr.replace(/\x1b\[[0-9;]*m/g, ''); // the test runner may set FORCE_COLOR
    expect(plain).toMatch(/^Error: cannot read properties of undefined\n {4}at /);
    expect(plain).toContain('Fix: This is a bug in the hook CLI; please report it');
  });

  it('gives every failure as one problem line on stderr in JSON mode, with the right exit code', () => {
    const problem = { type: 'urn:hook:error:invalid_api_key', title: 'Invalid API key', status: 401, detail: 'unknown', code: 'invalid_api_key', fix: 'Check the key', request_id: 'req_1' };
    const cases: Array<[unknown, number, string]> = [
      [new UsageError('bad flag'), 2, 'usage_error'],
      [new UserError(ENDPOINT_NOT_FOUND, 'No endpoint named x'), 1, 'endpoint_not_found'],
      [new HookApiError(problem), 1, 'invalid_api_key'],
      [new HookNetworkError('http://127.0.0.1:9', 'refused', 'connection refused'), 1, 'relay_unreachable'],
      [new Error('boom'), 1, 'cli_bug'],
    ];
    for (const [error, exitCode, code] of cases) {
      const { out, text } = capture(true);
      expect(out.failure(error)).toBe(exitCode);
      expect(text.stdout).toBe('');
      expect(text.stderr.endsWith('\n')).toBe(true);
      expect(text.stderr.trim().split('\n')).toHaveLength(1);
      expect(JSON.parse(text.stderr)).toMatchObject({ code, fix: expect.any(String), detail: expect.any(String) });
    }
    // The relay's problem document, whole, but with its fix in `hook` words, naming where the key came from.
    const { out, text } = capture(true);
    out.failure(new HookApiError(problem), { profile: 'default', configPath: '/c.json', apiKey: { prefix: 'hk_abcd', source: 'env' } });
    const shown = JSON.parse(text.stderr);
    expect(shown).toEqual({ ...problem, fix: expect.stringContaining('HOOK_API_KEY'), api_key_source: 'env' });
    expect(shown.fix).toContain('`hook login --api-key hk_…`');
  });
});

describe('Output.result', () => {
  it('prints one JSON document in JSON mode, and refuses a second result', async () => {
    const { out, text } = capture(true);
    await out.result({ a: 1 }, [{ kind: 'text', text: 'for people' }]);
    expect(JSON.parse(text.stdout)).toEqual({ a: 1 });
    await expect(out.result({ b: 2 }, [])).rejects.toThrow(/called twice/);
    out.hint('a hint for people');
    expect(text.stderr).toBe('');
  });

  it('prints the view as plain text when stdout is not a terminal', async () => {
    const { out, text } = capture(false);
    await out.result({ a: 1 }, [{ kind: 'fields', rows: [['Id', 'ep_1']] }]);
    expect(text.stdout).toBe('Id:  ep_1\n');
  });
});
