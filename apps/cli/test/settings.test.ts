import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigStore, configPath } from '../src/config.ts';
import type { CliEnvironment } from '../src/environment.ts';
import { readEnvironment } from '../src/environment.ts';
import { UsageError, UserError } from '../src/errors.ts';
import { checkApiUrl, DEFAULT_API_URL, resolveSettings } from '../src/settings.ts';

const directory = mkdtempSync(join(tmpdir(), 'hook-settings-'));
const store = new ConfigStore(join(directory, 'hook', 'config.json'));
store.saveProfile('default', { api_url: 'http://profile.example', api_key: 'hk_profile' });
store.saveProfile('urlless', { api_key: 'hk_urlless' });

afterAll(() => rmSync(directory, { recursive: true, force: true }));

const noEnv: CliEnvironment = { apiUrl: undefined, apiKey: undefined, xdgConfigHome: undefined, home: directory };

describe('resolveSettings', () => {
  it('takes flags over the environment over the profile', () => {
    const env = { ...noEnv, apiUrl: 'http://env.example', apiKey: 'hk_env' };
    expect(resolveSettings({ apiUrl: 'http://flag.example/', apiKey: 'hk_flag' }, env, store)).toEqual({
      profile: 'default', apiUrl: 'http://flag.example', apiUrlSource: 'flag', apiKey: 'hk_flag', apiKeySource: 'flag',
    });
    expect(resolveSettings({}, env, store)).toMatchObject({ apiUrl: 'http://env.example', apiUrlSource: 'env', apiKey: 'hk_env', apiKeySource: 'env' });
    expect(resolveSettings({}, noEnv, store)).toMatchObject({ apiUrl: 'http://profile.example', apiUrlSource: 'profile', apiKey: 'hk_profile', apiKeySource: 'profile' });
  });

  it('falls back to the local relay, and to no key', () => {
    expect(resolveSettings({ profile: 'urlless' }, noEnv, store)).toMatchObject({ apiUrl: DEFAULT_API_URL, apiUrlSource: 'default', apiKey: 'hk_urlless' });
    expect(DEFAULT_API_URL).toBe('http://127.0.0.1:8080');
    expect(resolveSettings({ profile: 'nobody' }, noEnv, store)).toMatchObject({ profile: 'nobody', apiKey: undefined, apiKeySource: undefined });
  });

  it('calls a bad URL from a flag a usage error, from elsewhere a user error', () => {
    expect(() => resolveSettings({ apiUrl: 'ftp://x' }, noEnv, store)).toThrow(UsageError);
    const fromEnv = (() => {
      try {
        resolveSettings({}, { ...noEnv, apiUrl: 'nonsense' }, store);
      } catch (error) {
        return error;
      }
    })();
    expect(fromEnv).toBeInstanceOf(UserError);
    expect(fromEnv).not.toBeInstanceOf(UsageError);
    expect((fromEnv as UserError).message).toContain('(from HOOK_API_URL)');
  });

  it('normalises the URL: no trailing /v1 or slashes; a bare host:port is http:// on this machine only', () => {
    const cases: Array<[string, string]> = [
      ['http://127.0.0.1:8080/v1', 'http://127.0.0.1:8080'],
      ['http://127.0.0.1:8080/v1/', 'http://127.0.0.1:8080'],
      ['https://hooks.example.com//', 'https://hooks.example.com'],
      ['https://example.com/hook/v1', 'https://example.com/hook'],
      ['127.0.0.1:8080', 'http://127.0.0.1:8080'],
      ['localhost:8080/v1', 'http://localhost:8080'],
      ['[::1]:8080', 'http://[::1]:8080'],
      ['127.1.2.3', 'http://127.1.2.3'],
    ];
    for (const [given, used] of cases) expect(checkApiUrl(given, 'flag', 'default'), given).toBe(used);
    expect(() => checkApiUrl('hooks.example.com:8080', 'flag', 'default')).toThrow(/has no scheme/);
    expect(() => checkApiUrl('10.0.0.5:8080', 'flag', 'default')).toThrow(UsageError);
    expect(() => checkApiUrl('hooks.example.com', 'env', 'default')).toThrow(UserError);
    try {
      checkApiUrl('hooks.example.com:8080', 'env', 'default');
    } catch (error) {
      expect((error as UserError).fix).toContain('HOOK_API_URL=https://hooks.example.com:8080');
    }
  });

  it('refuses profile names that are not safe words', () => {
    for (const name of ['', '../x', 'a b', '-x', 'x'.repeat(65)]) expect(() => resolveSettings({ profile: name }, noEnv, store)).toThrow(UsageError);
    for (const name of ['prod', 'team.ci', 'A_1-b']) expect(resolveSettings({ profile: name }, noEnv, store).profile).toBe(name);
  });
});

describe('readEnvironment and configPath', () => {
  it('treats empty variables as unset and ignores a relative XDG_CONFIG_HOME', () => {
    expect(readEnvironment({ HOOK_API_URL: '', HOOK_API_KEY: ' hk_x ', XDG_CONFIG_HOME: 'relative/dir', HOME: '/home/me' }, '/fallback')).toEqual({
      apiUrl: undefined, apiKey: 'hk_x', xdgConfigHome: undefined, home: '/home/me',
    });
    expect(readEnvironment({}, '/fallback').home).toBe('/fallback');
  });

  it('puts the file under XDG_CONFIG_HOME, else ~/.config', () => {
    expect(configPath({ xdgConfigHome: '/xdg', home: '/home/me' })).toBe('/xdg/hook/config.json');
    expect(configPath({ xdgConfigHome: undefined, home: '/home/me' })).toBe('/home/me/.config/hook/config.json');
  });
});
