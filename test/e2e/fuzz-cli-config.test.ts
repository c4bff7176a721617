/**
 * `hook` with a malformed config file (issue 8, item 2): invalid JSON, invalid UTF-8, wrong
 * types at every level, a huge file, a directory or an unreadable path where the file should
 * be. Every command that reads the config must exit 1 or 2 with a clear message on stderr
 * (one JSON document with a code under --json), print nothing on stdout, and never show a
 * stack trace or "please report". Hand-picked cases plus fast-check's (FUZZ_RUNS / 5 runs).
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { HookUser, type HookRun } from '../support/cli.ts';

const GENERATED_RUNS = Math.max(1, Math.round(Number(process.env.FUZZ_RUNS ?? 50) / 5));
const users: HookUser[] = [];

afterAll(() => {
  for (const user of users) {
    try {
      chmodSync(user.configHome, 0o700);
    } catch {
      // already gone or never made
    }
    user.remove();
  }
});

/** How the bad config is put in place for a user. */
type Setup = (user: HookUser) => void;

function writeConfig(content: string | Buffer): Setup {
  return (user) => {
    mkdirSync(dirname(user.configPath), { recursive: true, mode: 0o700 });
    writeFileSync(user.configPath, content, { mode: 0o600 });
  };
}

const json = (value: unknown): Setup => writeConfig(JSON.stringify(value));
const DEEP = 10_000;

const CASES: Record<string, Setup> = {
  'empty file': writeConfig(''),
  'truncated JSON': writeConfig('{"profiles": {"default": {"api_key": "hk_'),
  'trailing garbage': writeConfig('{"profiles": {}} x'),
  'NUL bytes': writeConfig('\u0000\u0000{"profiles":{}}'),
  'invalid UTF-8': writeConfig(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d])),
  'UTF-16 with BOM': writeConfig(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"profiles":{}}', 'utf16le')])),
  'JSON with comments': writeConfig('// my keys\n{"profiles": {}}'),
  'null': json(null),
  'a number': json(42),
  'a string': json('profiles'),
  'an array': json([{ profiles: {} }]),
  'profiles null': json({ profiles: null }),
  'profiles an array': json({ profiles: [{ api_key: 'hk_x' }] }),
  'profiles a string': json({ profiles: 'default' }),
  'profile null': json({ profiles: { default: null } }),
  'profile a number': json({ profiles: { default: 7 } }),
  'profile a string': json({ profiles: { default: 'hk_x' } }),
  'api_key a number': json({ profiles: { default: { api_key: 12345, api_url: 'http://127.0.0.1:1' } } }),
  'api_key an object': json({ profiles: { default: { api_key: { value: 'hk_x' }, api_url: 'http://127.0.0.1:1' } } }),
  'api_url a number': json({ profiles: { default: { api_key: 'hk_x', api_url: 8080 } } }),
  'api_url an array': json({ profiles: { default: { api_key: 'hk_x', api_url: ['http://127.0.0.1:1'] } } }),
  'api_url not a URL': json({ profiles: { default: { api_key: 'hk_x', api_url: 'not a url' } } }),
  'api_url file:': json({ profiles: { default: { api_key: 'hk_x', api_url: 'file:///etc/passwd' } } }),
  'api_key with a newline': json({ profiles: { default: { api_key: 'hk_x\r\nX-Injected: 1', api_url: 'http://127.0.0.1:1' } } }),
  'api_key with a space': json({ profiles: { default: { api_key: 'hk_x ', api_url: 'http://127.0.0.1:1' } } }),
  'api_key with NUL': json({ profiles: { default: { api_key: 'hk_\u0000', api_url: 'http://127.0.0.1:1' } } }),
  '__proto__ profile': writeConfig('{"profiles": {"__proto__": {"api_key": "hk_x", "api_url": "http://127.0.0.1:1"}}}'),
  'deeply nested': writeConfig(`{"profiles": {"default": ${'['.repeat(DEEP)}${']'.repeat(DEEP)}}}`),
  'huge file (16 MiB)': writeConfig(`{"profiles": {"default": {"api_key": "hk_x", "api_url": "http://127.0.0.1:1"}}, "padding": "${'x'.repeat(16 * 1024 * 1024)}", "profiles2": ${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`),
  'a directory': (user) => mkdirSync(user.configPath, { recursive: true }),
  'hook/ is a file': (user) => {
    mkdirSync(user.configHome, { recursive: true });
    writeFileSync(join(user.configHome, 'hook'), 'not a directory');
  },
  'unreadable (mode 000; only refused when not root)': (user) => {
    writeConfig('{"profiles": {}}')(user);
    chmodSync(user.configPath, 0o000);
  },
};

/** Commands that read the config: one with --json, one in text, and one that writes it (so reads it first), in turn. */
const COMMANDS: Array<{ args: string[]; json: boolean }> = [
  { args: ['endpoints', 'list'], json: true },
  { args: ['whoami'], json: false },
  { args: ['login', '--api-key', 'hk_fuzz', '--api-url', 'http://127.0.0.1:1'], json: true },
];


function problemsWith(run: HookRun, jsonMode: boolean): string[] {
  const problems: string[] = [];
  if (run.code !== 1 && run.code !== 2) problems.push(`exit code ${run.code} (signal ${run.signal})`);
  if (run.stdout !== '') problems.push(`stdout is not empty: ${run.stdout.slice(0, 200)}`);
  if (run.stderr.trim() === '') problems.push('nothing on stderr');
  if (/\n\s+at .+[:(]\d+:\d+\)?/.test(run.stderr) || /please report/i.test(run.stderr)) problems.push(`a stack trace or bug report on stderr: ${run.stderr.slice(0, 400)}`);
  if (run.stderr.length > 4000) problems.push(`stderr is ${run.stderr.length} characters: the message echoes the file`);
  if (jsonMode) {
    try {
      const error = JSON.parse(run.stderr);
      if (typeof error.code !== 'string' || typeof error.detail !== 'string') problems.push(`JSON error lacks code/detail: ${run.stderr.slice(0, 200)}`);
    } catch {
      problems.push(`--json error on stderr is not one JSON document: ${run.stderr.slice(0, 200)}`);
    }
  }
  return problems;
}

/** Puts the config in place for a fresh user per command, runs each command, and returns what was wrong with each run (an empty list when all is well). */
async function tryConfig(setup: Setup, commands = COMMANDS.slice(0, 2)): Promise<Array<{ command: string; problems: string[]; stderr: string }>> {
  return Promise.all(commands.map(async (command) => {
    const user = new HookUser();
    users.push(user);
    setup(user);
    const args = command.json ? [...command.args, '--json'] : command.args;
    const run = await user.run(args, { env: { HOOK_API_URL: '', HOOK_API_KEY: '' }, timeoutMs: 30_000 });
    return { command: `hook ${args.join(' ')}`, problems: problemsWith(run, command.json), stderr: run.stderr.slice(0, 300) };
  }));
}

// Each hand-picked config is its own test, with two runs of hook at once; every third config also with `hook login`, which writes the file.
describe('hand-picked malformed configs: exit 1 or 2, a clear message on stderr, nothing on stdout, no stack', { timeout: 60_000 }, () => {
  test.for(Object.entries(CASES).map(([name, setup], index) => ({ name, setup, commands: index % 3 === 0 ? COMMANDS : COMMANDS.slice(0, 2) })))('$name', async ({ setup, commands }) => {
    const runs = await tryConfig(setup, commands);
    expect(runs).toHaveLength(commands.length);
    for (const run of runs) expect(run.problems, `${run.command}\n    stderr: ${run.stderr}`).toEqual([]);
  });
});

test('generated configs of the wrong shape: the same rules', { timeout: 180_000 }, async () => {
  // Always broken somewhere: a profile that is not an object, or a key/url that is not a string, or not JSON at all.
  const notString = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }));
  const badProfile = fc.oneof(
    notString.filter((value) => value === null || typeof value !== 'object' || Array.isArray(value)),
    fc.record({ api_key: notString, api_url: fc.oneof(fc.constant('http://127.0.0.1:1'), notString) }),
    fc.record({ api_key: fc.constant('hk_fuzz'), api_url: fc.oneof(notString, fc.string({ unit: 'binary', maxLength: 30 })) }),
  );
  const config = fc.oneof(
    fc.record({ profiles: fc.dictionary(fc.constantFrom('default', 'other'), badProfile, { minKeys: 1, maxKeys: 2 }).map((profiles) => ({ default: profiles.default ?? profiles.other, ...profiles })) }, { requiredKeys: ['profiles'] }).map((value) => JSON.stringify(value)),
    fc.jsonValue({ maxDepth: 3 }).filter((value) => value === null || typeof value !== 'object' || Array.isArray(value)).map((value) => JSON.stringify(value)),
    fc.string({ unit: 'binary', maxLength: 200 }).filter((text) => { try { JSON.parse(text); return false; } catch { return true; } }),
    fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
  );
  let runs = 0;
  // The property itself asserts, so a failing config makes fast-check shrink it to a smallest counterexample.
  await fc.assert(
    fc.asyncProperty(config, fc.constantFrom(...COMMANDS.slice(0, 2)), async (content, command) => {
      runs += 1;
      const [run] = await tryConfig(writeConfig(content), [command]);
      expect(run!.problems, `${run!.command} with config ${JSON.stringify(content).slice(0, 160)}\n    stderr: ${run!.stderr}`).toEqual([]);
    }),
    { numRuns: GENERATED_RUNS },
  );
  console.log(`fuzz-cli-config: ${runs} generated configs, ${runs} runs of hook`);
  expect(runs).toBeGreaterThanOrEqual(GENERATED_RUNS);
});
