/**
 * Which relay and key a run uses. Precedence, highest first: the flags (--api-url,
 * --api-key), the environment (HOOK_API_URL, HOOK_API_KEY), the profile in the config
 * file (--profile, default "default"), then the default URL. The endpoint `hook listen`
 * forwards by default comes from the profile only.
 */
import { DEFAULT_PROFILE, PROFILE_NAME_PATTERN, type ConfigStore, type DefaultEndpoint } from './config.ts';
import type { CliEnvironment } from './environment.ts';
import { INVALID_API_URL, MALFORMED_API_KEY, UsageError, UserError } from './errors.ts';

/** The relay `npm start` runs. */
export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

export type SettingSource = 'flag' | 'env' | 'profile' | 'default';

export interface GlobalFlags {
  apiUrl?: string;
  apiKey?: string;
  profile?: string;
}

export interface Settings {
  profile: string;
  apiUrl: string;
  apiUrlSource: SettingSource;
  apiKey: string | undefined;
  apiKeySource: SettingSource | undefined;
  /** The profile's default endpoint for `hook listen` (hook endpoints use), if any. */
  defaultEndpoint: DefaultEndpoint | undefined;
}

const SOURCE_NAMES: Record<SettingSource, string> = {
  flag: '--api-url',
  env: 'HOOK_API_URL',
  profile: 'the profile',
  default: 'the default',
};

/**
 * This machine's own addresses: the only hosts a bare `host:port` is taken as http:// for.
 * Anywhere else plain http would carry the API key across a network in clear text, so
 * the scheme has to be written out.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** How to give the URL again, where it came from: the flag, the variable or the profile. */
function urlFixFor(source: SettingSource, profile: string, url: string, configPath: string | undefined): string {
  if (source === 'flag') return `Pass --api-url ${url}`;
  if (source === 'env') return `Set HOOK_API_URL=${url}`;
  const profileFlag = profile === DEFAULT_PROFILE ? '' : ` --profile ${profile}`;
  return `Fix "api_url" of profile '${profile}' in ${configPath ?? 'the config file'} (${url}), or save it again with \`hook login --api-url ${url} --api-key hk_…${profileFlag}\``;
}

/**
 * The relay's base URL as the client wants it: http(s), no query or fragment, without the
 * trailing slashes and the trailing /v1 people copy from API examples (the client adds
 * /v1/… itself). A bare `host:port` is taken as http:// for loopback hosts only. Bad
 * input is a usage error when it came from the flag, else a user error naming its source.
 */
export function checkApiUrl(url: string, source: SettingSource, profile: string, configPath?: string): string {
  const from = `(from ${source === 'profile' ? `profile '${profile}'` : SOURCE_NAMES[source]})`;
  const fail = (detail: string, fix: string): never => {
    if (source === 'flag') throw new UsageError(detail, fix);
    throw new UserError(INVALID_API_URL, detail, fix);
  };
  const text = url.trim();
  let withScheme = text;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    const bare = URL.canParse(`http://${text}`) ? new URL(`http://${text}`) : undefined;
    if (bare === undefined || text === '') fail(`${JSON.stringify(url)} ${from} is not an http:// or https:// base URL`, `${urlFixFor(source, profile, 'https://hooks.example.com', configPath)} (or 127.0.0.1:8080 for a relay on this machine).`);
    if (!isLoopbackHost(bare!.hostname)) {
      fail(
        `${JSON.stringify(url)} ${from} has no scheme; only a relay on this machine (localhost, 127.x, [::1]) is taken as http:// without one`,
        `${urlFixFor(source, profile, `https://${text}`, configPath)} (add https://, or http:// for a relay without TLS).`,
      );
    }
    withScheme = `http://${text}`;
  }
  const parsed = URL.canParse(withScheme) ? new URL(withScheme) : undefined;
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.search || parsed.hash) {
    return fail(`${JSON.stringify(url)} ${from} is not an http:// or https:// base URL`, `${urlFixFor(source, profile, 'https://hooks.example.com', configPath)} (or 127.0.0.1:8080 for a relay on this machine).`);
  }
  const path = parsed.pathname.replace(/\/+$/, '').replace(/\/v1$/i, '').replace(/\/+$/, '');
  return `${parsed.protocol}//${parsed.username ? `${parsed.username}${parsed.password ? `:${parsed.password}` : ''}@` : ''}${parsed.host}${path}`;
}

/** Keys travel in an Authorization header, which cannot carry a line break, NUL or other control character (a paste gone wrong). */
export function checkApiKey(key: string | undefined, source: SettingSource | undefined, profile: string): string | undefined {
  if (key === undefined || !/[^\x21-\x7e]/.test(key)) return key;
  const from = source === 'profile' ? `profile '${profile}'` : source === 'flag' ? '--api-key' : 'HOOK_API_KEY';
  const detail = `The API key from ${from} contains a space, line break, NUL or other character an HTTP header cannot carry`;
  if (source === 'flag') throw new UsageError(detail, MALFORMED_API_KEY.fix);
  throw new UserError(MALFORMED_API_KEY, detail);
}

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME_PATTERN.test(name)) {
    throw new UsageError(`'${name}' is not a valid profile name`, 'Use letters, digits, dots, dashes and underscores (at most 64), starting with a letter or digit.');
  }
  return name;
}

export function resolveSettings(flags: GlobalFlags, env: CliEnvironment, store: ConfigStore): Settings {
  const profileName = checkProfileName(flags.profile ?? DEFAULT_PROFILE);
  const profile = store.profile(profileName) ?? {};
  const [apiUrl, apiUrlSource]: [string, SettingSource] =
    flags.apiUrl !== undefined ? [flags.apiUrl, 'flag']
      : env.apiUrl !== undefined ? [env.apiUrl, 'env']
        : profile.api_url !== undefined ? [profile.api_url, 'profile']
          : [DEFAULT_API_URL, 'default'];
  const [apiKey, apiKeySource]: [string | undefined, SettingSource | undefined] =
    flags.apiKey !== undefined ? [flags.apiKey, 'flag']
      : env.apiKey !== undefined ? [env.apiKey, 'env']
        : profile.api_key !== undefined ? [profile.api_key, 'profile']
          : [undefined, undefined];
  return { profile: profileName, apiUrl: checkApiUrl(apiUrl, apiUrlSource, profileName, store.path), apiUrlSource, apiKey: checkApiKey(apiKey, apiKeySource, profileName), apiKeySource, defaultEndpoint: profile.default_endpoint };
}
