/**
 * Where `hook` keeps keys and which one it uses: the config file (location, modes),
 * profiles, and precedence (flags > HOOK_API_URL/HOOK_API_KEY > profile > default).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser, runHook } from '../support/cli.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { closedPort } from '../support/receiver.ts';

let relay: TestRelay;
const users: HookUser[] = [];

function newUser(): HookUser {
  const user = new HookUser();
  users.push(user);
  return user;
}

beforeAll(async () => {
  relay = await startTestRelay();
});

afterAll(async () => {
  await relay?.close();
  for (const user of users) user.remove();
});


describe('the config file', () => {
  it('lives in $XDG_CONFIG_HOME/hook/config.json, the file 0600 and its directory 0700', async () => {
    const user = newUser();
    await user.json(['signup', '--api-url', relay.baseUrl]);
    expect(statSync(user.configPath).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(user.configPath)).mode & 0o777).toBe(0o700);
  });

  it('falls back to ~/.config/hook/config.json without XDG_CONFIG_HOME', async () => {
    const user = newUser();
    const result = await runHook(['signup', '--api-url', relay.baseUrl, '--json'], { env: { HOME: user.home } });
    expect(result.code).toBe(0);
    const path = join(user.home, '.config', 'hook', 'config.json');
    expect(JSON.parse(readFileSync(path, 'utf8')).profiles.default.api_key).toBe(JSON.parse(result.stdout).api_key);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('tightens a file others could read when it writes it, and warns about it before', async () => {
    const owner = newUser();
    const signup = await owner.json(['signup', '--api-url', relay.baseUrl]);
    const user = newUser();
    mkdirSync(dirname(user.configPath), { recursive: true, mode: 0o755 });
    writeFileSync(user.configPath, JSON.stringify({ profiles: { default: { api_url: relay.baseUrl, api_key: signup.api_key } } }), { mode: 0o644 });
    chmodSync(user.configPath, 0o644);

    const whoami = await user.run(['whoami', '--json']);
    expect(whoami.code).toBe(0);
    expect(whoami.stderr).toContain(`Warning: ${user.configPath} holds API keys but others can read it (mode 0644); run: chmod 600 ${user.configPath}`);

    await user.json(['login', '--api-key', signup.api_key, '--api-url', relay.baseUrl]);
    expect(statSync(user.configPath).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(user.configPath)).mode & 0o777).toBe(0o700);
    expect((await user.run(['whoami'])).stderr).toBe('');
  });

  it('reports a broken file with its path, exit 1', async () => {
    const user = newUser();
    mkdirSync(dirname(user.configPath), { recursive: true });
    writeFileSync(user.configPath, '{"profiles": ', { mode: 0o600 });
    const result = await user.run(['whoami', '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr)).toMatchObject({ code: 'config_invalid', detail: expect.stringContaining(`${user.configPath} is not valid JSON`) });
  });

  it('keeps fields it does not know when it rewrites the file', async () => {
    const user = newUser();
    mkdirSync(dirname(user.configPath), { recursive: true });
    writeFileSync(user.configPath, JSON.stringify({ profiles: { other: { api_url: 'https://elsewhere.example' } }, telemetry: false }), { mode: 0o600 });
    await user.json(['signup', '--api-url', relay.baseUrl]);
    const file = JSON.parse(readFileSync(user.configPath, 'utf8'));
    expect(file.telemetry).toBe(false);
    expect(file.profiles.other).toEqual({ api_url: 'https://elsewhere.example' });
    expect(file.profiles.default.api_url).toBe(relay.baseUrl);
  });
});

describe('profiles', () => {
  it('keeps accounts apart; logout removes one profile only', async () => {
    const user = newUser();
    const a = await user.json(['signup', '--api-url', relay.baseUrl, '--profile', 'a']);
    const b = await user.json(['signup', '--api-url', relay.baseUrl, '--profile', 'b']);
    expect(a.account.id).not.toBe(b.account.id);
    expect((await user.json(['whoami', '--profile', 'a'])).account.id).toBe(a.account.id);
    expect((await user.json(['whoami', '--profile', 'b'])).account.id).toBe(b.account.id);
    expect((await user.run(['whoami'])).code).toBe(1); // the default profile was never set up

    await user.json(['endpoints', 'create', 'only-in-a', '--profile', 'a']);
    expect((await user.json(['endpoints', 'list', '--profile', 'b'])).data).toEqual([]);

    expect(await user.json(['logout', '--profile', 'a'])).toEqual({ profile: 'a', removed: true });
    expect(await user.json(['logout', '--profile', 'a'])).toEqual({ profile: 'a', removed: false });
    const loggedOut = await user.run(['whoami', '--profile', 'a', '--json']);
    expect(loggedOut.code).toBe(1);
    expect(JSON.parse(loggedOut.stderr).code).toBe('not_logged_in');
    expect((await user.json(['whoami', '--profile', 'b'])).account.id).toBe(b.account.id);
    expect(Object.keys(JSON.parse(readFileSync(user.configPath, 'utf8')).profiles)).toEqual(['b']);
  });

  it('signup will not overwrite a saved key without --force', async () => {
    const user = newUser();
    const first = await user.json(['signup', '--api-url', relay.baseUrl]);
    const again = await user.run(['signup', '--api-url', relay.baseUrl]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("Error: Profile 'default' already has an API key");
    expect(JSON.parse(readFileSync(user.configPath, 'utf8')).profiles.default.api_key).toBe(first.api_key);
    const forced = await user.json(['signup', '--api-url', relay.baseUrl, '--force']);
    expect(JSON.parse(readFileSync(user.configPath, 'utf8')).profiles.default.api_key).toBe(forced.api_key);
  });

  it('login saves a working key with the relay URL; it needs a key to save', async () => {
    const owner = newUser();
    const signup = await owner.json(['signup', '--api-url', relay.baseUrl]);
    const user = newUser();
    const login = await user.json(['login', '--api-key', signup.api_key, '--api-url', relay.baseUrl, '--profile', 'work']);
    expect(login).toEqual({ account: signup.account, api_url: relay.baseUrl, profile: 'work' });
    expect(JSON.parse(readFileSync(user.configPath, 'utf8')).profiles.work).toEqual({ api_url: relay.baseUrl, api_key: signup.api_key });

    const keyless = await newUser().run(['login', '--api-url', relay.baseUrl]);
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain('hook login needs the key to save');
  });
});

describe('precedence: flags, then environment, then profile, then default', () => {
  let user: HookUser;
  let saved: any;
  let other: any;

  beforeAll(async () => {
    user = newUser();
    saved = await user.json(['signup', '--api-url', relay.baseUrl]);
    other = await newUser().json(['signup', '--api-url', relay.baseUrl]);
  });

  it('HOOK_API_KEY overrides the profile\'s key; --api-key overrides both', async () => {
    const fromEnv = await user.json(['whoami'], { env: { HOOK_API_KEY: other.api_key } });
    expect(fromEnv).toMatchObject({ account: { id: other.account.id }, api_key_source: 'env' });
    const fromFlag = await user.json(['whoami', '--api-key', saved.api_key], { env: { HOOK_API_KEY: other.api_key } });
    expect(fromFlag).toMatchObject({ account: { id: saved.account.id }, api_key_source: 'flag' });
  });

  it('HOOK_API_URL overrides the profile\'s URL; --api-url overrides both', async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    const viaEnv = await user.run(['whoami', '--json'], { env: { HOOK_API_URL: down } });
    expect(viaEnv.code).toBe(1);
    expect(JSON.parse(viaEnv.stderr)).toMatchObject({ code: 'relay_unreachable', url: down });
    const viaFlag = await user.json(['whoami', '--api-url', relay.baseUrl], { env: { HOOK_API_URL: down } });
    expect(viaFlag).toMatchObject({ api_url: relay.baseUrl, api_url_source: 'flag' });
    const viaProfile = await user.json(['whoami'], { env: { HOOK_API_URL: '' } });
    expect(viaProfile).toMatchObject({ api_url: relay.baseUrl, api_url_source: 'profile' });
  });

  it('works from the environment alone, with no config file at all', async () => {
    const bare = newUser();
    const result = await bare.json(['whoami'], { env: { HOOK_API_URL: relay.baseUrl, HOOK_API_KEY: saved.api_key } });
    expect(result).toMatchObject({ account: { id: saved.account.id }, api_url_source: 'env', api_key_source: 'env' });
    expect(existsSync(bare.configPath)).toBe(false);
  });
});
