/**
 * The config file, `$XDG_CONFIG_HOME/hook/config.json` (else `~/.config/hook/…`): named
 * profiles, each an API URL and key and the endpoint `hook listen` uses by default. It
 * holds secrets, so the directory is 0700 and the file 0600, written whole to a temporary
 * file and renamed into place so a crash never leaves half a file.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CONFIG_INVALID, UserError } from './errors.ts';

export interface Profile {
  api_url?: string;
  api_key?: string;
  /** The endpoint `hook listen` forwards without --endpoint: set by the first `hook endpoints create`, changed by `hook endpoints use`. The name is for messages. */
  default_endpoint?: DefaultEndpoint;
}

export interface DefaultEndpoint {
  id: string;
  name: string;
}

export interface ConfigFile {
  profiles: Record<string, Profile>;
  /** Fields a newer CLI wrote are kept as they are. */
  [other: string]: unknown;
}

export const DEFAULT_PROFILE = 'default';

/** Profile names: safe in a file and on a command line. */
export const PROFILE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const DIRECTORY_MODE = 0o700;
const FILE_MODE = 0o600;

/** Where the config file lives for this environment. */
export function configPath(locations: { xdgConfigHome: string | undefined; home: string }): string {
  return join(locations.xdgConfigHome ?? join(locations.home, '.config'), 'hook', 'config.json');
}

export class ConfigStore {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  /** The whole file; an empty config when there is none yet. */
  read(): ConfigFile {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
      throw new UserError(CONFIG_INVALID, `Cannot read ${this.path}: ${(error as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new UserError(CONFIG_INVALID, `${this.path} is not valid JSON: ${(error as Error).message}`, `Fix ${this.path} by hand or delete it, then log in again.`);
    }
    const file = parsed as Partial<ConfigFile> | null;
    if (!file || typeof file !== 'object' || Array.isArray(file) || (file.profiles !== undefined && (typeof file.profiles !== 'object' || file.profiles === null))) {
      throw new UserError(CONFIG_INVALID, `${this.path} does not hold a Hook config ({"profiles": {…}})`, `Fix ${this.path} by hand or delete it, then log in again.`);
    }
    for (const [name, profile] of Object.entries(file.profiles ?? {})) {
      const fields = profile as Record<string, unknown> | null;
      if (!fields || typeof fields !== 'object' || Array.isArray(fields) || ['api_url', 'api_key'].some((field) => fields[field] !== undefined && typeof fields[field] !== 'string')) {
        throw new UserError(CONFIG_INVALID, `Profile '${name}' in ${this.path} is not {"api_url": "…", "api_key": "…"} with text values`, `Fix ${this.path} by hand or delete it, then log in again.`);
      }
      const chosen = fields.default_endpoint as Record<string, unknown> | null | undefined;
      if (chosen !== undefined && (!chosen || typeof chosen !== 'object' || typeof chosen.id !== 'string' || typeof chosen.name !== 'string')) {
        throw new UserError(CONFIG_INVALID, `Profile '${name}' in ${this.path} has a default_endpoint that is not {"id": "ep_…", "name": "…"}`, `Remove "default_endpoint" from profile '${name}' in ${this.path}, then choose the endpoint again with \`hook endpoints use <endpoint>\`.`);
      }
    }
    return { ...file, profiles: { ...file.profiles } };
  }

  profile(name: string): Profile | undefined {
    return this.read().profiles[name];
  }

  /** The file's permission bits when others than its owner may read it, else undefined. */
  looseMode(): number | undefined {
    try {
      const mode = statSync(this.path).mode & 0o777;
      return mode & 0o077 ? mode : undefined;
    } catch {
      return undefined;
    }
  }

  saveProfile(name: string, profile: Profile): void {
    const file = this.read();
    file.profiles[name] = profile;
    this.write(file);
  }

  /** Sets (or with null, clears) the profile's default endpoint, keeping its other fields; creates the profile if need be. */
  setDefaultEndpoint(name: string, endpoint: DefaultEndpoint | null): void {
    const file = this.read();
    const { default_endpoint: _previous, ...rest } = file.profiles[name] ?? {};
    file.profiles[name] = endpoint === null ? rest : { ...rest, default_endpoint: { id: endpoint.id, name: endpoint.name } };
    this.write(file);
  }

  /** Removes a profile; false when there was none. */
  removeProfile(name: string): boolean {
    const file = this.read();
    if (!(name in file.profiles)) return false;
    delete file.profiles[name];
    this.write(file);
    return true;
  }

  private write(file: ConfigFile): void {
    const directory = dirname(this.path);
    mkdirSync(directory, { recursive: true, mode: DIRECTORY_MODE });
    // mkdir leaves an existing directory's mode alone; this one is ours and holds keys.
    chmodSync(directory, DIRECTORY_MODE);
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: FILE_MODE });
    chmodSync(temporary, FILE_MODE); // the umask may have narrowed it further; never wider
    renameSync(temporary, this.path);
  }
}
