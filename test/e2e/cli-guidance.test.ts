/**
 * What `hook` tells a person on a bad day, against a real relay: relay errors with fixes
 * in `hook` words (never REST routes) that say where a refused key came from; relay URLs
 * taken as people write them; a version that is the package's, in JSON too; unknown
 * commands refused whatever their flags; messages that read as sentences.
 */
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser, type HookRun } from '../support/cli.ts';
import { freePort, startHook, stopAllHookProcesses } from '../support/hook-process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';

/** A route of the HTTP API in a sentence: what no fix shown by hook may name. */
const HTTP_ROUTE = /\b(?:GET|POST|PUT|PATCH|DELETE)\s+\/|\/v1\b/;
const CLI_VERSION: string = JSON.parse(readFileSync(new URL('../../apps/cli/package.json', import.meta.url), 'utf8')).version;

let relay: TestRelay;
let receiver: Receiver;
const user = new HookUser();
const users: HookUser[] = [user];
let apiKey: string;

function newUser(): HookUser {
  const created = new HookUser();
  users.push(created);
  return created;
}

beforeAll(async () => {
  relay = await startTestRelay({ allowPrivateDestinations: true });
  receiver = await startReceiver(() => ({ status: 500, body: 'not today' }));
  apiKey = (await user.json(['signup', '--api-url', relay.baseUrl])).api_key;
});

afterAll(async () => {
  await stopAllHookProcesses();
  await receiver?.close();
  await relay?.close();
  for (const each of users) each.remove();
});

/** A failed --json run: nothing on stdout, one problem document on stderr. */
function problemOf(result: HookRun): any {
  expect(result.stdout).toBe('');
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  const problem = JSON.parse(lines[0]!);
  for (const field of ['code', 'detail', 'fix']) expect(typeof problem[field]).toBe('string');
  return problem;
}

/** The `Fix:` line of a failed text run. */
function fixLine(result: HookRun): string {
  return /^Fix: (.*)$/m.exec(result.stderr)?.[1] ?? '';
}

describe('relay errors say what to do with hook', () => {
  it('an unknown event: list your events with hook, not GET /v1/events', async () => {
    const text = await user.run(['events', 'get', 'evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY']);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain("No event 'evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY' in this account (event_not_found)");
    expect(fixLine(text)).toContain('`hook events list`');
    expect(text.stderr).not.toMatch(HTTP_ROUTE);

    const json = problemOf(await user.run(['events', 'get', 'evt_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', '--json']));
    expect(json).toMatchObject({ code: 'event_not_found', status: 404, request_id: expect.stringMatching(/^req_/) });
    expect(json.fix).toContain('`hook events list`');
    expect(json.fix).not.toMatch(HTTP_ROUTE);
  });

  it('no notification URL: the command that sets one exists (hook notifications set)', async () => {
    const result = await user.run(['notifications', 'get']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('(notifications_not_configured)');
    expect(fixLine(result)).toContain('`hook notifications set <url>`');
    expect(result.stderr).not.toContain('hook account notifications');
    expect(result.stderr).not.toMatch(HTTP_ROUTE);
  });

  it('deleting the only destination: the commands to run instead, with the real ids', async () => {
    const endpoint = await user.json(['endpoints', 'create', 'only-one', '--destination', receiver.url]);
    const destination = endpoint.destinations[0].id as string;
    const result = await user.run(['destinations', 'delete', destination]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('(last_destination)');
    const fix = fixLine(result);
    expect(fix).toContain(`\`hook destinations add ${endpoint.id} --url https://…\``);
    expect(fix).toContain(`\`hook destinations update ${destination} --url https://…\``);
    expect(fix).toContain(`\`hook endpoints delete ${endpoint.id}\``);
    expect(result.stderr).not.toMatch(HTTP_ROUTE);
  });

  it('the plan\'s endpoints used up: delete one with hook endpoints delete, or upgrade with hook account plan; no line names an HTTP route', async () => {
    const owner = newUser();
    await owner.json(['signup', '--api-url', relay.baseUrl]);
    for (const name of ['a', 'b', 'c']) await owner.json(['endpoints', 'create', name]);
    const result = await owner.run(['endpoints', 'create', 'd', '--json']);
    expect(result.code).toBe(1);
    const problem = problemOf(result);
    expect(problem.code).toBe('plan_limit_reached');
    expect(problem.fix).toContain('`hook account plan pro`');
    expect(problem.fix).toContain('`hook endpoints delete <endpoint>`');
    expect(problem.fix).not.toMatch(HTTP_ROUTE);
    expect(problem.detail).not.toMatch(HTTP_ROUTE);
    const text = await owner.run(['endpoints', 'create', 'd']);
    expect(text.stderr.split('\n')[0]).toContain('The free plan allows 3 endpoints');
    expect(text.stderr).not.toMatch(HTTP_ROUTE);
  });

  it('a bad HOOK_API_KEY: says the key came from the environment, and to unset it or log in', async () => {
    const text = await user.run(['endpoints', 'list'], { env: { HOOK_API_KEY: 'hk_revokedorwrong' } });
    expect(text.code).toBe(1);
    expect(text.stderr).toContain('(invalid_api_key)');
    const fix = fixLine(text);
    expect(fix).toMatch(/^The key hk_revoke\w*… came from the environment variable HOOK_API_KEY/);
    expect(fix).toContain('`unset HOOK_API_KEY`');
    expect(fix).toContain("profile 'default'");
    expect(fix).toContain('`hook login --api-key hk_…`');
    expect(text.stderr).not.toMatch(HTTP_ROUTE);

    const json = problemOf(await user.run(['endpoints', 'list', '--json'], { env: { HOOK_API_KEY: 'hk_revokedorwrong' } }));
    expect(json).toMatchObject({ code: 'invalid_api_key', status: 401, api_key_source: 'env', fix: expect.stringContaining('HOOK_API_KEY') });
  });

  it('a bad --api-key, and a bad key saved in the profile: each names its source', async () => {
    const flag = problemOf(await user.run(['whoami', '--api-key', 'hk_wrong', '--json']));
    expect(flag).toMatchObject({ code: 'invalid_api_key', api_key_source: 'flag' });
    expect(flag.fix).toContain('came from --api-key');
    expect(flag.fix).not.toContain('HOOK_API_KEY');

    const stale = newUser();
    mkdirSync(dirname(stale.configPath), { recursive: true });
    writeFileSync(stale.configPath, JSON.stringify({ profiles: { work: { api_url: relay.baseUrl, api_key: 'hk_stalestalestale' } } }), { mode: 0o600 });
    const text = await stale.run(['whoami', '--profile', 'work']);
    expect(text.code).toBe(1);
    const fix = fixLine(text);
    expect(fix).toContain(`saved in profile 'work' (${stale.configPath})`);
    expect(fix).toContain('`hook login --api-key hk_… --profile work`');
  });
});

describe('relay URLs as people write them', () => {
  it('a relay that does not answer: the fix names where its URL came from', async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    const fromEnv = problemOf(await user.run(['endpoints', 'list', '--json'], { env: { HOOK_API_URL: down } }));
    expect(fromEnv).toMatchObject({ code: 'relay_unreachable', url: down });
    expect(fromEnv.fix).toContain("HOOK_API_URL, which overrides the profile, points at it (unset it to use profile 'default')");

    const saved = newUser();
    mkdirSync(dirname(saved.configPath), { recursive: true });
    writeFileSync(saved.configPath, JSON.stringify({ profiles: { default: { api_url: down, api_key: apiKey } } }), { mode: 0o600 });
    const fromProfile = problemOf(await saved.run(['endpoints', 'list', '--json']));
    expect(fromProfile.fix).toContain(`the URL saved in profile 'default' (${saved.configPath}) points at it`);
  });

  const port = (): string => new URL(relay.baseUrl).port;

  it('--api-url with a trailing /v1 (and slashes) reaches the relay', async () => {
    for (const url of [`${relay.baseUrl}/v1`, `${relay.baseUrl}/v1/`, `${relay.baseUrl}//`]) {
      const whoami = await user.json(['whoami', '--api-url', url]);
      expect(whoami, url).toMatchObject({ api_url: relay.baseUrl, api_url_source: 'flag' });
    }
  });

  it('a bare host:port is http:// for this machine: in --api-url, HOOK_API_URL and the profile', async () => {
    expect(await user.json(['whoami', '--api-url', `127.0.0.1:${port()}`])).toMatchObject({ api_url: relay.baseUrl });
    expect(await user.json(['whoami', '--api-url', `localhost:${port()}`])).toMatchObject({ api_url: `http://localhost:${port()}` });
    expect(await user.json(['whoami'], { env: { HOOK_API_URL: `127.0.0.1:${port()}/v1/` } })).toMatchObject({ api_url: relay.baseUrl, api_url_source: 'env' });

    const saved = newUser();
    mkdirSync(dirname(saved.configPath), { recursive: true });
    writeFileSync(saved.configPath, JSON.stringify({ profiles: { default: { api_url: `127.0.0.1:${port()}/v1`, api_key: apiKey } } }), { mode: 0o600 });
    expect(await saved.json(['whoami'])).toMatchObject({ api_url: relay.baseUrl, api_url_source: 'profile' });
  });

  it('hook signup saves the URL it used, normalised', async () => {
    const fresh = newUser();
    await fresh.json(['signup', '--api-url', `127.0.0.1:${port()}/v1`]);
    expect(JSON.parse(readFileSync(fresh.configPath, 'utf8')).profiles.default.api_url).toBe(relay.baseUrl);
  });

  it('a bare host elsewhere is refused with the https:// to add: a usage error from the flag, invalid_api_url from the environment', async () => {
    const flag = await user.run(['whoami', '--api-url', 'hooks.example.com:8080']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('"hooks.example.com:8080" (from --api-url) has no scheme');
    expect(fixLine(flag)).toContain('--api-url https://hooks.example.com:8080');

    const env = problemOf(await user.run(['whoami', '--json'], { env: { HOOK_API_URL: '10.1.2.3:8080' } }));
    expect(env.code).toBe('invalid_api_url');
    expect(env.detail).toContain('(from HOOK_API_URL)');
    expect(env.fix).toContain('HOOK_API_URL=https://10.1.2.3:8080');
  });
});

describe('hook --version', () => {
  it('prints the package\'s version, a real one', async () => {
    expect(CLI_VERSION).toMatch(/^\d+\.\d+\.\d+/);
    expect(CLI_VERSION).not.toBe('0.0.0');
    for (const flag of ['--version', '-V']) {
      const result = await user.run([flag]);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(`${CLI_VERSION}\n`);
    }
  });

  it('with --json: one JSON document with the version and the Node running it', async () => {
    for (const args of [['-V', '--json'], ['--json', '--version']]) {
      const result = await user.run(args);
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toEqual({ version: CLI_VERSION, node: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    }
  });
});

describe('an unknown command exits 2, whatever its flags', () => {
  // Names no command will ever have: other commands arrive over time.
  const cases: Array<[string[], string, string]> = [
    [['frobnicate', '--help'], "'hook frobnicate' is not a command", 'Run `hook --help` to see the commands.'],
    [['events', 'frobnicate', '--help'], "'hook events frobnicate' is not a command", 'Run `hook events --help` to see the commands.'],
    [['events', 'frobnicate', '--endpoint', 'x', '-h'], "'hook events frobnicate' is not a command", 'Run `hook events --help`'],
    [['help', 'frobnicate'], "'hook frobnicate' is not a command", 'Run `hook --help`'],
    [['--profile', 'x', 'evnets', '--help'], "'hook evnets' is not a command", 'Did you mean `hook events`?'],
    [['endpoints', 'lst', '--help'], "'hook endpoints lst' is not a command", 'Did you mean `hook endpoints list`?'],
  ];

  it.each(cases)('hook %j', async (args, detail, fix) => {
    const text = await user.run(args);
    expect(text.code).toBe(2);
    expect(text.stdout).toBe('');
    expect(text.stderr).toContain(`Error: ${detail}`);
    expect(fixLine(text)).toContain(fix);

    const json = problemOf(await user.run([...args, '--json']));
    expect(json).toMatchObject({ code: 'usage_error', detail });
    expect(json.fix).toContain(fix);
  });
});

describe('wording', () => {
  it('a bad value reads as a sentence naming the option or argument', async () => {
    const limit = await user.run(['events', 'list', '--limit', '0']);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toContain("Error: The value '0' of --limit is invalid: it must be a whole number from 1 to 100.");
    expect(fixLine(limit)).toBe('Run `hook events list --help` to see its arguments and options.');

    const destination = await user.run(['destinations', 'delete', 'foo']);
    expect(destination.code).toBe(2);
    expect(destination.stderr).toContain("Error: The destination 'foo' is invalid: it must be a destination id (dst_…)");

    const role = await user.run(['members', 'role', 'mem_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'boss', '--json']);
    expect(problemOf(role).detail).toBe("The role 'boss' is invalid: it must be one of admin, member.");
  });

  it('help shows no empty default, and hook --help has a listen example', async () => {
    for (const args of [['send', '--help'], ['account', 'update', '--help']]) {
      const help = await user.run(args);
      expect(help.code).toBe(0);
      expect(help.stdout, args.join(' ')).not.toContain('default: []');
    }
    const root = await user.run(['--help']);
    expect(root.stdout).toMatch(/^ {2}\$ hook listen 3000$/m);
  });

  it('a failed replay names the event in its fix', async () => {
    const endpoint = await user.json(['endpoints', 'create', 'failing', '--destination', receiver.url]);
    const sent = await user.json(['send', endpoint.id]);
    const result = await user.run(['events', 'replay', sent.id]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('answered 500');
    expect(fixLine(result)).toBe(`See the attempts with \`hook events get ${sent.id}\`, fix the destination, then run \`hook events replay ${sent.id}\` again.`);
    expect(result.stderr).not.toContain('<id>');
  });

  it('a relay that shuts down is said once, not twice ("shutting down: relay shutting down")', async () => {
    const leaving = await startTestRelay();
    let closed = false;
    try {
      const watcher = newUser();
      await watcher.json(['signup', '--api-url', leaving.baseUrl]);
      const tail = startHook(watcher, ['events', 'tail']);
      await tail.waitForStderr((line) => line.includes('Connected.'));
      await leaving.close();
      closed = true;
      await expect.poll(() => tail.transcript(), { timeout: 15_000 }).toContain('the relay is shutting down');
      expect(tail.transcript()).not.toMatch(/shutting down\W+relay shutting down/);
      await tail.stop();
    } finally {
      if (!closed) await leaving.close();
    }
  });
});
