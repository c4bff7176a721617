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

/** An http(s) base URL without a trailing slash; a usage error when it came from a flag. */
export function checkApiUrl(url: string, source: SettingSource, profile: string): string {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:') && !parsed.search && !parsed.hash) return url.replace(/\/+$/, '');
  const detail = `${JSON.stringify(url)} (from ${source === 'profile' ? `profile '${profile}'` : SOURCE_NAMES[source]}) is not an http:// or https:// base URL`;
  if (source === 'flag') throw new UsageError(detail, INVALID_API_URL.fix);
  throw new UserError(INVALID_API_URL, detail);
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
  return { profile: profileName, apiUrl: checkApiUrl(apiUrl, apiUrlSource, profileName), apiUrlSource, apiKey: checkApiKey(apiKey, apiKeySource, profileName), apiKeySource, defaultEndpoint: profile.default_endpoint };
}
