/**
 * How `hook` fails: errors on stderr (never stdout), as text with a fix line or, with
 * --json, as one problem JSON document; exit 1 for failures, 2 for usage errors. And
 * how it helps: every command's --help, with examples.
 */
import { readFileSync, existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/hook-process.ts';
import { HookUser, type HookRun } from '../support/cli.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
const user = new HookUser();
const stranger = new HookUser();

beforeAll(async () => {
  relay = await startTestRelay();
  await user.json(['signup', '--api-url', relay.baseUrl]);
  await user.json(['endpoints', 'create', 'known']);
});

afterAll(async () => {
  await relay?.close();
  user.remove();
  stranger.remove();
});

/** A failed --json run: nothing on stdout, one problem document on stderr. */
function problemOf(result: HookRun): any {
  expect(result.stdout).toBe('');
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  const problem = JSON.parse(lines[0]!);
  for (const field of ['type', 'title', 'detail', 'code', 'fix']) expect(typeof problem[field]).toBe('string');
  return problem;
}

describe('failures exit 1 with the error on stderr', () => {
  it('an unknown endpoint name or id', async () => {
    const byName = await user.run(['endpoints', 'get', 'missing']);
    expect(byName.code).toBe(1);
    expect(byName.stdout).toBe('');
    expect(byName.stderr).toContain("Error: No endpoint named 'missing' in this account");
    expect(byName.stderr).toContain('Fix: Run `hook endpoints list`');

    const byId = await user.run(['send', 'ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', '--json']);
    expect(byId.code).toBe(1);
    expect(problemOf(byId)).toMatchObject({ code: 'endpoint_not_found', detail: "No endpoint 'ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY' in this account" });

    for (const args of [['events', 'list', '--endpoint', 'missing'], ['endpoints', 'delete', 'ep_nonsense'], ['events', 'replay', '--endpoint', 'missing']]) {
      const result = await user.run([...args, '--json']);
      expect(result.code, args.join(' ')).toBe(1);
      expect(problemOf(result).code).toBe('endpoint_not_found');
    }
  });

  it('an unknown event: the relay\'s own problem document, whole', async () => {
    const result = await user.run(['events', 'get', 'evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', '--json']);
    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 404, code: 'event_not_found', type: 'urn:hook:error:event_not_found', request_id: expect.stringMatching(/^req_/) });
  });

  it('a bad API key, and login refuses to save it', async () => {
    const whoami = await user.run(['whoami', '--api-key', 'hk_bad']);
    expect(whoami.code).toBe(1);
    expect(whoami.stderr).toContain('The API key is malformed, unknown or revoked (invalid_api_key)');
    expect(whoami.stderr).toMatch(/^Request id: req_/m);

    const login = await stranger.run(['login', '--api-key', 'hk_bad', '--api-url', relay.baseUrl, '--json']);
    expect(login.code).toBe(1);
    expect(problemOf(login)).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(existsSync(stranger.configPath)).toBe(false);
  });

  it('a relay that is down: a clear message naming the URL', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const text = await user.run(['endpoints', 'list', '--api-url', url]);
    expect(text.code).toBe(1);
    expect(text.stdout).toBe('');
    expect(text.stderr).toContain(`Error: Cannot reach the Hook relay at ${url} (connection refused: nothing is listening there)`);
    expect(text.stderr).toContain('Fix: Check that the relay is running');
    expect(text.stderr).not.toMatch(/^\s+at /m); // not a bug report: no stack

    const json = await stranger.run(['signup', '--api-url', url, '--json']);
    expect(json.code).toBe(1);
    expect(problemOf(json)).toMatchObject({ code: 'relay_unreachable', url });
  });

  it('no API key anywhere', async () => {
    const result = await stranger.run(['endpoints', 'list', '--api-url', relay.baseUrl]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Error: No API key for profile 'default'");
    expect(result.stderr).toContain('Fix: Run `hook signup`');
  });

  it('an unreadable --data file', async () => {
    const result = await user.run(['send', 'known', '--data', '@/no/such/file.json', '--json']);
    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ code: 'input_unreadable', detail: 'Cannot read /no/such/file.json: no such file' });
  });

  it('a relay problem with field errors lists each field', async () => {
    const result = await user.run(['endpoints', 'create', ' ']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('(validation_failed)');
    expect(result.stderr).toContain('  body.name: must not be only spaces');
  });
});

describe('usage errors exit 2', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['an unknown command', ['endpoint', 'list'], /'hook endpoint' is not a command/],
    ['an unknown subcommand', ['endpoints', 'lst'], /'hook endpoints lst' is not a command/],
    ['an unknown option', ['endpoints', 'list', '--colour'], /Unknown option '--colour'/],
    ['a missing argument', ['endpoints', 'create'], /Missing required argument 'name'/],
    ['too many arguments', ['endpoints', 'get', 'a', 'b'], /Too many arguments/],
    ['a bad --limit', ['events', 'list', '--limit', '500'], /The value '500' of --limit is invalid: it must be a whole number from 1 to 100/],
    ['a bad --status', ['events', 'list', '--status', 'lost'], /The value 'lost' of --status is invalid: it must be one of pending, delivered, retrying, failed/],
    ['a bad --since', ['events', 'replay', '--all', '--since', 'yesterday'], /must be an ISO 8601 time/],
    ['a bad header', ['send', 'known', '-H', 'no colon here'], /The value 'no colon here' of --header is invalid: it must be a header written as 'Name: value'/],
    ['a bad --api-url', ['endpoints', 'list', '--api-url', 'ftp://hooks.example.com'], /is not an http:\/\/ or https:\/\/ base URL/],
    ['a bad profile name', ['whoami', '--profile', '../etc'], /not a valid profile name/],
    ['conflicting options', ['endpoints', 'update', 'known', '--pause', '--resume'], /cannot be used with/],
    ['nothing to change', ['endpoints', 'update', 'known'], /Nothing to change/],
    ['replay without a target', ['events', 'replay'], /Say which events to replay/],
    ['a body with GET', ['send', 'known', '-X', 'GET', '--data', '{}'], /--data cannot go with GET/],
    ['a noun without its verb', ['events'], /'hook events' needs a command: list, get, replay/],
  ];

  it.each(cases)('%s', async (_name, args, message) => {
    const text = await user.run(args);
    expect(text.code).toBe(2);
    expect(text.stdout).toBe('');
    expect(text.stderr).toMatch(/^Error: /m);
    expect(text.stderr.replace(/\n/g, ' ')).toMatch(message);
    expect(text.stderr).toContain('Fix: ');

    const json = await user.run([...args, '--json']);
    expect(json.code).toBe(2);
    const problem = problemOf(json);
    expect(problem.code).toBe('usage_error');
    expect(problem.detail).toMatch(message);
  });
});

describe('help', () => {
  /** Commands listed under "Commands:" in a help text, without `help` itself. */
  function commandsIn(help: string): string[] {
    const section = help.split('\nCommands:\n')[1]!.split('\n\n')[0]!;
    return section.split('\n').map((line) => /^ {2}(\S+)/.exec(line)?.[1]).filter((name): name is string => name !== undefined && name !== 'help');
  }

  it('every command has complete help with examples, exit 0, on stdout', async () => {
    const root = await user.run(['--help']);
    expect(root.code).toBe(0);
    expect(root.stderr).toBe('');
    expect(root.stdout).toContain('Usage: hook [options] [command]');
    expect(root.stdout).toContain('Examples:');
    const paths: string[][] = [];
    for (const name of commandsIn(root.stdout)) {
      if (name === 'endpoints' || name === 'events') {
        const group = await user.run([name, '--help']);
        expect(group.code).toBe(0);
        for (const verb of commandsIn(group.stdout)) paths.push([name, verb]);
      } else {
        paths.push([name]);
      }
    }
    expect(paths.map((path) => path.join(' '))).toEqual(expect.arrayContaining([
      'signup', 'login', 'logout', 'whoami', 'send',
      'endpoints create', 'endpoints list', 'endpoints get', 'endpoints update', 'endpoints delete', 'endpoints secret', 'endpoints rotate-secret',
      'events list', 'events get', 'events replay',
    ]));
    for (const path of paths) {
      const help = await user.run([...path, '--help']);
      expect(help.code, path.join(' ')).toBe(0);
      expect(help.stdout).toContain(`Usage: hook ${path.join(' ')}`);
      expect(help.stdout, path.join(' ')).toMatch(/\nExamples:\n {2}\$ hook /);
      expect(help.stdout).toContain('Global Options:');
      expect(help.stdout).toContain('--json');
    }
  });

  it('--version prints the version', async () => {
    const result = await user.run(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(JSON.parse(readFileSync(new URL('../../apps/cli/package.json', import.meta.url), 'utf8')).version);
  });
});
