/**
 * Every setting of the relay, declared once: read from the environment by the entry
 * point only (libraries and buildApp take a RelayConfig). docs/configuration.md lists
 * the same variables.
 */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface RelayConfig {
  /** HOOK_DATABASE_URL: PostgreSQL URL; unset runs an embedded PostgreSQL under dataDir. */
  databaseUrl: string | undefined;
  /** HOOK_DATA_DIR: where the embedded PostgreSQL keeps its files. Default `.hook` in the working directory. */
  dataDir: string;
  /** HOOK_HOST: interface to listen on. Default 127.0.0.1; 0.0.0.0 to accept outside connections. */
  host: string;
  /** HOOK_PORT: TCP port; 0 picks a free one. Default 8080. */
  port: number;
  /** HOOK_PUBLIC_URL: base URL clients reach the relay at, used in endpoint URLs. Unset: each request's own scheme and Host. */
  publicUrl: string | undefined;
  /** HOOK_MAX_PAYLOAD: largest ingest body in bytes (suffixes kb/kib, mb/mib, gb/gib are all powers of 1024). Default 10 MiB. */
  maxPayloadBytes: number;
  /** HOOK_LOG_LEVEL: fatal, error, warn, info, debug, trace or silent. Default info. */
  logLevel: LogLevel;
}

/** A setting that is present but unusable: the relay refuses to start and says which and why. */
export class ConfigError extends Error {
  constructor(variable: string, value: string, expected: string) {
    super(`${variable}=${JSON.stringify(value)} is not valid: expected ${expected}.`);
    this.name = 'ConfigError';
  }
}

export const DEFAULT_PORT = 8080;
export const DEFAULT_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, kib: 1024, mb: 1024 ** 2, mib: 1024 ** 2, gb: 1024 ** 3, gib: 1024 ** 3 };

/** Parses `10485760`, `512kb` or `10mb` into bytes. */
export function parseByteSize(variable: string, value: string): number {
  const match = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(value);
  const unit = match ? SIZE_UNITS[match[2]!.toLowerCase()] : undefined;
  if (!match || unit === undefined || Number(match[1]) <= 0) throw new ConfigError(variable, value, 'a positive size in bytes, e.g. 10485760 or 10mb');
  return Number(match[1]) * unit;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new ConfigError('HOOK_PORT', value, 'an integer from 0 to 65535');
  return port;
}

function parseUrl(variable: string, value: string, protocols: string[]): string {
  try {
    const url = new URL(value);
    if (protocols.includes(url.protocol)) return value.replace(/\/+$/, '');
  } catch {
    // reported below
  }
  throw new ConfigError(variable, value, `a URL starting with ${protocols.join(' or ')}//`);
}

/** Reads the relay's settings from an environment (normally `process.env`). */
export function loadConfig(env: Record<string, string | undefined>): RelayConfig {
  const set = (name: string): string | undefined => (env[name]?.trim() ? env[name]!.trim() : undefined);
  const logLevel = set('HOOK_LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) throw new ConfigError('HOOK_LOG_LEVEL', logLevel, LOG_LEVELS.join(', '));
  const databaseUrl = set('HOOK_DATABASE_URL');
  const publicUrl = set('HOOK_PUBLIC_URL');
  const maxPayload = set('HOOK_MAX_PAYLOAD');
  const port = set('HOOK_PORT');
  return {
    databaseUrl: databaseUrl && parseUrl('HOOK_DATABASE_URL', databaseUrl, ['postgres:', 'postgresql:']),
    dataDir: set('HOOK_DATA_DIR') ?? '.hook',
    host: set('HOOK_HOST') ?? '127.0.0.1',
    port: port === undefined ? DEFAULT_PORT : parsePort(port),
    publicUrl: publicUrl && parseUrl('HOOK_PUBLIC_URL', publicUrl, ['http:', 'https:']),
    maxPayloadBytes: maxPayload === undefined ? DEFAULT_MAX_PAYLOAD_BYTES : parseByteSize('HOOK_MAX_PAYLOAD', maxPayload),
    logLevel: logLevel as LogLevel,
  };
}
