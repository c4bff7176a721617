import { isAbsolute } from 'node:path';

/**
 * Every environment variable the CLI reads, declared once. Only the entry point
 * (main.ts) calls `readEnvironment(process.env)`; everything else takes the result.
 */
export interface CliEnvironment {
  /** HOOK_API_URL: the relay's base URL (http or https); overrides the profile's, not --api-url. */
  apiUrl: string | undefined;
  /** HOOK_API_KEY: an API key (hk_…); overrides the profile's, not --api-key. */
  apiKey: string | undefined;
  /** XDG_CONFIG_HOME: an absolute directory; the config lives in `<it>/hook/config.json`. A relative value is ignored (XDG Base Directory spec). */
  xdgConfigHome: string | undefined;
  /** HOME: the config falls back to `$HOME/.config/hook/config.json`. */
  home: string;
}

/** Unset and empty both mean "not given". */
function given(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export function readEnvironment(env: NodeJS.ProcessEnv, homeDirectory: string): CliEnvironment {
  const xdg = given(env.XDG_CONFIG_HOME);
  return {
    apiUrl: given(env.HOOK_API_URL),
    apiKey: given(env.HOOK_API_KEY),
    xdgConfigHome: xdg !== undefined && isAbsolute(xdg) ? xdg : undefined,
    home: given(env.HOME) ?? homeDirectory,
  };
}
