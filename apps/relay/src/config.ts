/**
 * Every setting of the relay, declared once: read from the environment by the entry
 * point only (libraries and buildApp take a RelayConfig). docs/configuration.md lists
 * the same variables.
 */
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { DEFAULT_RETRY_SCHEDULE_TEXT, parseDuration, parseRetrySchedule, parseSecretKey, SECRET_KEY_BYTES } from '@hook/core';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface RelayConfig {
  /** HOOK_DATABASE_URL: PostgreSQL URL; unset runs an embedded PostgreSQL under dataDir. */
  databaseUrl: string | undefined;
  /**
   * HOOK_DATABASE_READ_URL: PostgreSQL URLs (comma-separated) of streaming replicas of HOOK_DATABASE_URL. Reads that
   * tolerate a little lag (event lists and search, usage) go to them; everything else to the primary. Default none.
   */
  databaseReadUrls: string[];
  /** HOOK_DATABASE_READ_MAX_LAG_MS: a replica further behind the primary than this, in ms, is skipped. Default 5000. */
  databaseReadMaxLagMs: number;
  /**
   * HOOK_DATABASE_DISTRIBUTED: `citus` when HOOK_DATABASE_URL is a PostgreSQL distributed by account (docs/scaling.md):
   * ingest and result recording then send one statement per account of each group commit, each routed to that
   * account's shard. `off` (the default): one statement carries several accounts' events or results, which costs less
   * on one PostgreSQL.
   */
  databaseDistributed: 'citus' | null;
  /** HOOK_DATA_DIR: where the embedded PostgreSQL keeps its files. Default `.hook` in the working directory. */
  dataDir: string;
  /**
   * HOOK_SECRET_KEY: 32 random bytes, base64 or hex, that endpoint signing secrets are encrypted
   * under (AES-256-GCM). Required with HOOK_DATABASE_URL; unset with the embedded database, the
   * relay uses `<dataDir>/secret.key`, generating it on first start (see secret-key-file.ts).
   */
  secretKey: Buffer | undefined;
  /** HOOK_HOST: interface to listen on. Default 127.0.0.1; 0.0.0.0 to accept outside connections. */
  host: string;
  /** HOOK_PORT: TCP port; 0 picks a free one. Default 8080. */
  port: number;
  /**
   * HOOK_TRUST_PROXY: which peers' X-Forwarded-For / -Proto / -Host headers to believe, as Fastify's
   * trustProxy: false (none, the default), true (any), a hop count, or a list of proxy addresses and CIDRs.
   */
  trustProxy: TrustProxy;
  /** HOOK_PUBLIC_URL: base URL clients reach the relay at, used in endpoint URLs. Unset: each request's own scheme and Host. */
  publicUrl: string | undefined;
  /**
   * HOOK_INGEST_URL: base URL senders reach ingest URLs at, on a host name of its own (docs/deployment.md,
   * "Ingest on its own host"). Endpoint URLs are built from it; that host serves only ingest (and health),
   * and ingest is refused on every other host but custom domains. Unset: ingest shares HOOK_PUBLIC_URL.
   */
  ingestUrl: string | undefined;
  /** HOOK_MAX_PAYLOAD: largest ingest body in bytes (suffixes kb/kib, mb/mib, gb/gib are all powers of 1024). Default 10 MiB. */
  maxPayloadBytes: number;
  /** HOOK_LOG_LEVEL: fatal, error, warn, info, debug, trace or silent. Default info. */
  logLevel: LogLevel;
  /** HOOK_RETRY_SCHEDULE: waits before each automatic retry, in ms (its length is the number of retries). Default 30s,2m,8m,32m,2h8m,8h32m. */
  retryScheduleMs: number[];
  /** HOOK_DELIVERY_TIMEOUT: how long one delivery attempt may take, in ms. Default 15s. */
  deliveryTimeoutMs: number;
  /** HOOK_DELIVERY_CONCURRENCY: most deliveries in flight in this process. Default 256. */
  deliveryConcurrency: number;
  /** HOOK_ROLE: all (API and delivery), api (no delivery worker) or worker (delivery and /healthz only). Default all. */
  role: RelayRole;
  /** HOOK_ALLOW_PRIVATE_DESTINATIONS: allow deliveries to private, loopback and link-local addresses. Default true only with the embedded database. */
  allowPrivateDestinations: boolean;
  /** HOOK_SIGNUP_RATE_LIMIT: most accounts one client address may create with POST /v1/accounts per hour; 0 turns the limit off. Default 20. */
  signupsPerAddressPerHour: number;
  /** HOOK_PLAYGROUND_RATE_LIMIT: most playground sessions (temporary accounts) one client address may start per hour; 0 turns the limit off. Default 10. */
  playgroundSessionsPerAddressPerHour: number;
  /** HOOK_RETENTION_INTERVAL: time between two passes removing events past their retention, in ms (run by processes with role all or worker, and once at start). Default 1h. */
  retentionIntervalMs: number;
  /**
   * HOOK_API_RATE_LIMIT: API requests each API key may make per minute. `plan` (the default) takes each
   * account's plan figure (free 1200, pro 12000, enterprise 60000); a number applies to every plan; 0 turns the limit off.
   */
  apiRateLimit: ApiRateLimit;
  /** HOOK_TRANSFORM_TIMEOUT: CPU time one run of an endpoint's transformation may take, in ms. Default 100ms. */
  transformTimeoutMs: number;
  /** HOOK_TRANSFORM_MEMORY: memory one transformation sandbox may use, in bytes (suffixes as HOOK_MAX_PAYLOAD). Default 16 MiB. */
  transformMemoryBytes: number;
  /**
   * HOOK_TRANSFORM_THREADS: worker threads that run transformations (and filters over large
   * bodies), off the event loop. Default: one fewer than the machine's cores, at least 1, so
   * ingest and delivery always keep a core.
   */
  transformThreads: number;
  /** HOOK_METRICS: serve Prometheus metrics at GET /metrics (on or off). Default on. */
  metrics: boolean;
  /** HOOK_METRICS_TOKEN: when set, GET /metrics needs `Authorization: Bearer <token>`. Default unset (no auth). */
  metricsToken: string | null;
  /**
   * HOOK_MCP_ALLOWED_ORIGINS: origins of web pages (`https://app.example.com`) allowed to call /mcp from a
   * browser, normalized; a request with any other Origin header is refused (403 mcp_origin_refused). Requests
   * without Origin (MCP clients that are not browsers) are not affected. Default none.
   */
  mcpAllowedOrigins: string[];
  /**
   * HOOK_DNS_SERVERS: the DNS servers (`address` or `address:port`, comma-separated) the relay asks for the TXT
   * records that verify custom domains. Default: the system's resolvers (/etc/resolv.conf).
   */
  dnsServers: string[] | null;
  /**
   * OTEL_*: OpenTelemetry tracing, spans exported over OTLP/HTTP (docs/deployment.md#tracing; TracingConfig lists
   * each variable). Null, tracing off, unless OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is
   * set; off again with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
   */
  tracing: TracingConfig | null;
  /**
   * HOOK_SMTP_URL: the SMTP server alert emails go through (docs/alerts.md#email): `smtp://user:pass@host:587`
   * (STARTTLS when the server offers it) or `smtps://user:pass@host:465` (TLS from the start); user and password
   * percent-encoded. Unset: the relay sends no email, and accounts cannot set email alerts.
   */
  smtpUrl: string | null;
  /** HOOK_ALERT_EMAIL_FROM: the From of alert emails, `alerts@example.com` or `Hook alerts <alerts@example.com>`. Required with HOOK_SMTP_URL. */
  alertEmailFrom: string | null;
}

/** The OpenTelemetry variables the relay honours (the standard names and meanings), read when tracing is on. */
export interface TracingConfig {
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces` appended: where spans are sent. */
  url: string;
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf (the default) or http/json. */
  protocol: OtlpProtocol;
  /** OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS (which wins for a name it repeats): `name=value,…`, values percent-decoded. */
  headers: Record<string, string>;
  /** OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT: how long one export request may take, in ms. Default 10000. */
  exportTimeoutMs: number;
  /** OTEL_SERVICE_NAME, else service.name in OTEL_RESOURCE_ATTRIBUTES: the resource's service.name. Default hook-relay. */
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES: more resource attributes, `key=value,…`, values percent-decoded. */
  resourceAttributes: Record<string, string>;
  /** OTEL_TRACES_SAMPLER: which traces are recorded. Default parentbased_always_on. */
  sampler: TraceSampler;
  /** OTEL_TRACES_SAMPLER_ARG: the fraction of traces the *traceidratio samplers record, 0 to 1. Default 1. */
  samplerRatio: number;
  /** OTEL_BSP_SCHEDULE_DELAY: time between two exports of finished spans, in ms. Default 5000. */
  scheduleDelayMs: number;
  /** OTEL_BSP_MAX_QUEUE_SIZE: most finished spans waiting for export; past it new ones are dropped. Default 2048. */
  maxQueueSize: number;
  /** OTEL_BSP_MAX_EXPORT_BATCH_SIZE: most spans in one export request. Default 512. */
  maxExportBatchSize: number;
}

export type OtlpProtocol = 'http/protobuf' | 'http/json';
export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

/** Requests per API key per minute: the caller's plan's figure, or one number for every plan (0: no limit). */
export type ApiRateLimit = 'plan' | number;

/** Fastify's `trustProxy`: false, true, how many proxy hops to believe, or the proxies' addresses and CIDRs. */
export type TrustProxy = boolean | number | string[];

export type RelayRole = 'all' | 'api' | 'worker';
const ROLES: readonly RelayRole[] = ['all', 'api', 'worker'];

/** A setting that is present but unusable: the relay refuses to start and says which and why. */
export class ConfigError extends Error {
  constructor(variable: string, value: string, expected: string) {
    super(`${variable}=${JSON.stringify(value)} is not valid: expected ${expected}.`);
    this.name = 'ConfigError';
  }

  /** A setting that must be present (in this configuration) and is not. */
  static missing(variable: string, why: string): ConfigError {
    const error = new ConfigError(variable, '', '');
    error.message = `${variable} is not set: ${why}.`;
    return error;
  }
}

export const DEFAULT_PORT = 8080;
export const DEFAULT_DELIVERY_TIMEOUT_MS = 15_000;
export const DEFAULT_DELIVERY_CONCURRENCY = 256;
export const DEFAULT_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
export const DEFAULT_SIGNUPS_PER_ADDRESS_PER_HOUR = 20;
export const DEFAULT_PLAYGROUND_SESSIONS_PER_ADDRESS_PER_HOUR = 10;
export const DEFAULT_RETENTION_INTERVAL_MS = 60 * 60 * 1000;
export const DEFAULT_TRANSFORM_TIMEOUT_MS = 100;
export const DEFAULT_TRANSFORM_MEMORY_BYTES = 16 * 1024 * 1024;
export const DEFAULT_DATABASE_READ_MAX_LAG_MS = 5000;

/** One fewer transformation thread than the machine has cores, at least 1 (1 on a 2-core machine). */
export function defaultTransformThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

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

/**
 * HOOK_INGEST_URL: a URL whose host name differs from HOOK_PUBLIC_URL's. Ports do not
 * count: browsers send a host's cookies to all its ports, so the console's cookie would
 * reach tenant content on another port of the same host.
 */
function parseIngestUrl(value: string, publicUrl: string | undefined): string {
  const url = parseUrl('HOOK_INGEST_URL', value, ['http:', 'https:']);
  if (publicUrl !== undefined && URL.canParse(publicUrl) && new URL(publicUrl).hostname === new URL(url).hostname) {
    throw new ConfigError('HOOK_INGEST_URL', value, `a host name other than HOOK_PUBLIC_URL's (${new URL(publicUrl).hostname}): a port of the same host shares its cookies`);
  }
  return url;
}

function parseBoolean(variable: string, value: string): boolean {
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw new ConfigError(variable, value, 'true or false');
}

/** `true`, `false`, a hop count (`1`) or comma-separated proxy addresses and CIDRs (`10.0.0.0/8, 127.0.0.1`). */
export function parseTrustProxy(value: string): TrustProxy {
  if (/^(true|yes)$/i.test(value)) return true;
  if (/^(false|no)$/i.test(value)) return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops <= 100) return hops === 0 ? false : hops;
  }
  const proxies = value.split(',').map((part) => part.trim());
  const valid = proxies.every((proxy) => {
    const [address, prefix, ...rest] = proxy.split('/');
    const family = isIP(address ?? '');
    if (family === 0 || rest.length > 0) return false;
    return prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
  });
  if (!valid) throw new ConfigError('HOOK_TRUST_PROXY', value, 'true, false, a number of proxy hops, or comma-separated proxy addresses and CIDRs such as 10.0.0.0/8,127.0.0.1');
  return proxies;
}

/**
 * Comma-separated web origins (`https://app.example.com, http://localhost:3000`), each
 * normalized as browsers send it in `Origin` (lower-case scheme and host, no default port).
 * A path, query or credentials would never match an Origin header, so they are refused.
 */
function parseOriginList(variable: string, value: string): string[] {
  const origins: string[] = [];
  for (const entry of value.split(',').map((part) => part.trim()).filter(Boolean)) {
    let origin: string | undefined;
    try {
      const url = new URL(entry);
      const bare = url.pathname === '/' && !entry.includes('?') && !entry.includes('#') && !url.username && !url.password;
      if ((url.protocol === 'http:' || url.protocol === 'https:') && bare) origin = url.origin;
    } catch {
      // reported below
    }
    if (!origin) throw new ConfigError(variable, value, `comma-separated origins (scheme://host[:port], no path), such as https://app.example.com,http://localhost:3000 ("${entry}" is not one)`);
    origins.push(origin);
  }
  return origins;
}

/**
 * Comma-separated DNS servers, each an IP address with an optional port (`127.0.0.1:5353`,
 * `[2001:db8::53]:53`, `9.9.9.9`), in the form node:dns `Resolver.setServers` takes.
 */
export function parseDnsServers(value: string): string[] {
  const servers = value.split(',').map((part) => part.trim()).filter(Boolean);
  const valid = servers.length > 0 && servers.every((server) => {
    const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(server) ?? /^([^:]+)(?::(\d+))?$/.exec(server) ?? [server, server, undefined];
    const [, address, port] = match;
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return false;
    // A bare IPv6 address has colons of its own, so it takes a port only in brackets.
    return isIP(address ?? '') !== 0 && (server.startsWith('[') || isIP(address!) === 4 || port === undefined);
  });
  if (!valid) throw new ConfigError('HOOK_DNS_SERVERS', value, 'comma-separated DNS server addresses with optional ports, such as 127.0.0.1:5353,9.9.9.9 or [2001:db8::53]:53');
  return servers;
}

/**
 * HOOK_DATABASE_READ_URL: comma-separated PostgreSQL URLs, none of them the primary's
 * own (a replica is another server; percent-encode a comma inside a password as %2C).
 */
function parseReadUrls(value: string | undefined, databaseUrl: string | undefined): string[] {
  if (value === undefined) return [];
  if (databaseUrl === undefined) {
    throw ConfigError.missing('HOOK_DATABASE_URL', 'HOOK_DATABASE_READ_URL names read replicas, which stream from a primary you run (the embedded database has none). Set HOOK_DATABASE_URL to the primary, or unset HOOK_DATABASE_READ_URL');
  }
  const urls = value.split(',').map((part) => part.trim()).filter(Boolean);
  return urls.map((url, index) => {
    // The value is not echoed: replica URLs carry passwords.
    const entry = urls.length > 1 ? ` (URL ${index + 1} of ${urls.length} is not)` : '';
    if (!URL.canParse(url) || !['postgres:', 'postgresql:'].includes(new URL(url).protocol)) {
      throw new ConfigError('HOOK_DATABASE_READ_URL', '(not shown)', `comma-separated URLs starting with postgres:// or postgresql://, such as postgres://hook:secret@replica-1:5432/hook,postgres://hook:secret@replica-2:5432/hook${entry}`);
    }
    if (url.replace(/\/+$/, '') === databaseUrl.replace(/\/+$/, '')) {
      throw new ConfigError('HOOK_DATABASE_READ_URL', '(not shown)', `the URLs of streaming replicas, not HOOK_DATABASE_URL's own primary${entry}`);
    }
    return url.replace(/\/+$/, '');
  });
}

/**
 * HOOK_SMTP_URL: smtp:// or smtps:// with a host. The value is not echoed: it holds the
 * SMTP password.
 */
function parseSmtpUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  if (!url || !['smtp:', 'smtps:'].includes(url.protocol) || url.hostname === '') {
    throw new ConfigError('HOOK_SMTP_URL', '(not shown)', 'a URL such as smtp://user:password@smtp.example.com:587 (STARTTLS) or smtps://user:password@smtp.example.com:465 (TLS), with user and password percent-encoded');
  }
  return value;
}

/** HOOK_ALERT_EMAIL_FROM: `address` or `Display name <address>`. */
function parseEmailFrom(value: string): string {
  const address = /<([^<>]+)>\s*$/.exec(value)?.[1] ?? value;
  if (!/^[^\s@<>",]+@[^\s@<>",]+\.[^\s@<>",]+$/.test(address)) {
    throw new ConfigError('HOOK_ALERT_EMAIL_FROM', value, 'an email address such as alerts@example.com, or a name and address such as Hook alerts <alerts@example.com>');
  }
  return value;
}

/** Reads the relay's settings from an environment (normally `process.env`). */
export function loadConfig(env: Record<string, string | undefined>): RelayConfig {
  const set = (name: string): string | undefined => (env[name]?.trim() ? env[name]!.trim() : undefined);
  const logLevel = set('HOOK_LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) throw new ConfigError('HOOK_LOG_LEVEL', logLevel, LOG_LEVELS.join(', '));
  const databaseUrl = set('HOOK_DATABASE_URL');
  const secretKeyText = set('HOOK_SECRET_KEY');
  let secretKey: Buffer | undefined;
  if (secretKeyText !== undefined) {
    try {
      secretKey = parseSecretKey(secretKeyText);
    } catch {
      // The value itself stays out of the message: it is a secret.
      throw new ConfigError('HOOK_SECRET_KEY', `<${secretKeyText.length} characters>`, `${SECRET_KEY_BYTES} random bytes as base64 (44 characters) or hex (64 characters); generate one with: openssl rand -base64 32`);
    }
  } else if (databaseUrl !== undefined) {
    parseUrl('HOOK_DATABASE_URL', databaseUrl, ['postgres:', 'postgresql:']); // an unusable URL is the first thing to fix
    throw ConfigError.missing('HOOK_SECRET_KEY', 'with HOOK_DATABASE_URL the relay needs a key to encrypt endpoint signing secrets at rest. ' +
      'Generate one with `openssl rand -base64 32`, keep it with your other production secrets (losing it means replacing every endpoint secret), ' +
      'and give the same value to every relay process on this database');
  }
  const publicUrl = set('HOOK_PUBLIC_URL');
  const ingestUrl = set('HOOK_INGEST_URL');
  const maxPayload = set('HOOK_MAX_PAYLOAD');
  const port = set('HOOK_PORT');
  const role = set('HOOK_ROLE') ?? 'all';
  if (!ROLES.includes(role as RelayRole)) throw new ConfigError('HOOK_ROLE', role, ROLES.join(', '));
  const scheduleText = set('HOOK_RETRY_SCHEDULE') ?? DEFAULT_RETRY_SCHEDULE_TEXT;
  let retryScheduleMs: number[];
  try {
    retryScheduleMs = parseRetrySchedule(scheduleText);
  } catch (error) {
    throw new ConfigError('HOOK_RETRY_SCHEDULE', scheduleText, `comma-separated durations such as 30s,2m,2h8m (${(error as Error).message})`);
  }
  const timeoutText = set('HOOK_DELIVERY_TIMEOUT');
  const deliveryTimeoutMs = timeoutText === undefined ? DEFAULT_DELIVERY_TIMEOUT_MS : parseDuration(timeoutText);
  if (deliveryTimeoutMs === null || deliveryTimeoutMs <= 0) throw new ConfigError('HOOK_DELIVERY_TIMEOUT', timeoutText!, 'a duration such as 15s or 500ms');
  const concurrencyText = set('HOOK_DELIVERY_CONCURRENCY');
  const deliveryConcurrency = concurrencyText === undefined ? DEFAULT_DELIVERY_CONCURRENCY : Number(concurrencyText);
  if (!Number.isInteger(deliveryConcurrency) || deliveryConcurrency < 1 || deliveryConcurrency > 10_000) {
    throw new ConfigError('HOOK_DELIVERY_CONCURRENCY', concurrencyText!, 'a whole number from 1 to 10000');
  }
  const allowPrivate = set('HOOK_ALLOW_PRIVATE_DESTINATIONS');
  const signupLimitText = set('HOOK_SIGNUP_RATE_LIMIT');
  const signupsPerAddressPerHour = signupLimitText === undefined ? DEFAULT_SIGNUPS_PER_ADDRESS_PER_HOUR : Number(signupLimitText);
  if (!/^\d+$/.test(signupLimitText ?? '0') || signupsPerAddressPerHour > 1_000_000) {
    throw new ConfigError('HOOK_SIGNUP_RATE_LIMIT', signupLimitText!, 'a whole number of accounts per hour from 0 (no limit) to 1000000');
  }
  const playgroundLimitText = set('HOOK_PLAYGROUND_RATE_LIMIT');
  const playgroundSessionsPerAddressPerHour = playgroundLimitText === undefined ? DEFAULT_PLAYGROUND_SESSIONS_PER_ADDRESS_PER_HOUR : Number(playgroundLimitText);
  if (!/^\d+$/.test(playgroundLimitText ?? '0') || playgroundSessionsPerAddressPerHour > 1_000_000) {
    throw new ConfigError('HOOK_PLAYGROUND_RATE_LIMIT', playgroundLimitText!, 'a whole number of sessions per hour from 0 (no limit) to 1000000');
  }
  const retentionIntervalText = set('HOOK_RETENTION_INTERVAL');
  const retentionIntervalMs = retentionIntervalText === undefined ? DEFAULT_RETENTION_INTERVAL_MS : parseDuration(retentionIntervalText);
  // setInterval cannot wait longer than 2^31-1 ms (about 24.8 days).
  if (retentionIntervalMs === null || retentionIntervalMs <= 0 || retentionIntervalMs > 2 ** 31 - 1) {
    throw new ConfigError('HOOK_RETENTION_INTERVAL', retentionIntervalText!, 'a duration from 1ms to 24d, such as 1h or 30m');
  }
  const apiRateLimitText = set('HOOK_API_RATE_LIMIT')?.toLowerCase() ?? 'plan';
  const apiRateLimit: ApiRateLimit = apiRateLimitText === 'plan' ? 'plan' : Number(apiRateLimitText);
  if (apiRateLimit !== 'plan' && (!/^\d+$/.test(apiRateLimitText) || apiRateLimit > 1_000_000)) {
    throw new ConfigError('HOOK_API_RATE_LIMIT', set('HOOK_API_RATE_LIMIT')!, "plan, or a whole number of requests per API key per minute from 0 (no limit) to 1000000");
  }
  const transformTimeoutText = set('HOOK_TRANSFORM_TIMEOUT');
  const transformTimeoutMs = transformTimeoutText === undefined ? DEFAULT_TRANSFORM_TIMEOUT_MS : parseDuration(transformTimeoutText);
  if (transformTimeoutMs === null || transformTimeoutMs <= 0 || transformTimeoutMs > 60_000) {
    throw new ConfigError('HOOK_TRANSFORM_TIMEOUT', transformTimeoutText!, 'a duration from 1ms to 1m, such as 100ms');
  }
  const transformMemoryText = set('HOOK_TRANSFORM_MEMORY');
  const transformMemoryBytes = transformMemoryText === undefined ? DEFAULT_TRANSFORM_MEMORY_BYTES : parseByteSize('HOOK_TRANSFORM_MEMORY', transformMemoryText);
  // Below 1 MiB a transformation has no room; 512 MiB per sandbox is far past any sensible limit (each sandbox has its own WebAssembly memory).
  if (transformMemoryBytes < 1024 * 1024 || transformMemoryBytes > 512 * 1024 * 1024) {
    throw new ConfigError('HOOK_TRANSFORM_MEMORY', transformMemoryText!, 'a size from 1mb to 512mb, such as 16777216 or 16mb');
  }
  const transformThreadsText = set('HOOK_TRANSFORM_THREADS');
  const transformThreads = transformThreadsText === undefined ? defaultTransformThreads() : Number(transformThreadsText);
  if (transformThreadsText !== undefined && (!/^\d+$/.test(transformThreadsText) || transformThreads < 1 || transformThreads > 64)) {
    throw new ConfigError('HOOK_TRANSFORM_THREADS', transformThreadsText, 'a whole number of threads from 1 to 64, such as 1');
  }
  const metricsText = set('HOOK_METRICS')?.toLowerCase() ?? 'on';
  if (metricsText !== 'on' && metricsText !== 'off') throw new ConfigError('HOOK_METRICS', set('HOOK_METRICS')!, 'on or off');
  const metricsToken = set('HOOK_METRICS_TOKEN') ?? null;
  if (metricsToken !== null && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    throw new ConfigError('HOOK_METRICS_TOKEN', '(not shown)', '16 to 256 printable characters without spaces, such as the output of `openssl rand -hex 24`');
  }
  const readMaxLagText = set('HOOK_DATABASE_READ_MAX_LAG_MS');
  const databaseReadMaxLagMs = readMaxLagText === undefined ? DEFAULT_DATABASE_READ_MAX_LAG_MS : Number(readMaxLagText);
  if (!/^\d+$/.test(readMaxLagText ?? '0') || databaseReadMaxLagMs < 100 || databaseReadMaxLagMs > 3_600_000) {
    throw new ConfigError('HOOK_DATABASE_READ_MAX_LAG_MS', readMaxLagText!, 'a whole number of milliseconds from 100 to 3600000, such as 5000');
  }
  const distributedText = set('HOOK_DATABASE_DISTRIBUTED')?.toLowerCase() ?? 'off';
  if (distributedText !== 'citus' && distributedText !== 'off') throw new ConfigError('HOOK_DATABASE_DISTRIBUTED', set('HOOK_DATABASE_DISTRIBUTED')!, 'citus or off');
  const smtpUrl = set('HOOK_SMTP_URL') === undefined ? null : parseSmtpUrl(set('HOOK_SMTP_URL')!);
  const alertEmailFrom = set('HOOK_ALERT_EMAIL_FROM') === undefined ? null : parseEmailFrom(set('HOOK_ALERT_EMAIL_FROM')!);
  if (smtpUrl !== null && alertEmailFrom === null) {
    throw ConfigError.missing('HOOK_ALERT_EMAIL_FROM', 'with HOOK_SMTP_URL the relay mails alerts, and they need a From address the SMTP server accepts, such as alerts@example.com');
  }
  if (smtpUrl === null && alertEmailFrom !== null) {
    throw ConfigError.missing('HOOK_SMTP_URL', 'HOOK_ALERT_EMAIL_FROM is set, but alerts are mailed only through an SMTP server: set HOOK_SMTP_URL (smtp://user:password@host:587), or unset HOOK_ALERT_EMAIL_FROM');
  }
  return {
    databaseUrl: databaseUrl && parseUrl('HOOK_DATABASE_URL', databaseUrl, ['postgres:', 'postgresql:']),
    databaseReadUrls: parseReadUrls(set('HOOK_DATABASE_READ_URL'), databaseUrl),
    databaseReadMaxLagMs,
    databaseDistributed: distributedText === 'citus' ? 'citus' : null,
    dataDir: set('HOOK_DATA_DIR') ?? '.hook',
    secretKey,
    host: set('HOOK_HOST') ?? '127.0.0.1',
    port: port === undefined ? DEFAULT_PORT : parsePort(port),
    trustProxy: set('HOOK_TRUST_PROXY') === undefined ? false : parseTrustProxy(set('HOOK_TRUST_PROXY')!),
    publicUrl: publicUrl && parseUrl('HOOK_PUBLIC_URL', publicUrl, ['http:', 'https:']),
    ingestUrl: ingestUrl && parseIngestUrl(ingestUrl, publicUrl),
    maxPayloadBytes: maxPayload === undefined ? DEFAULT_MAX_PAYLOAD_BYTES : parseByteSize('HOOK_MAX_PAYLOAD', maxPayload),
    logLevel: logLevel as LogLevel,
    retryScheduleMs,
    deliveryTimeoutMs,
    deliveryConcurrency,
    role: role as RelayRole,
    // Local development (the embedded database) delivers to localhost; a shared server does not, unless told.
    allowPrivateDestinations: allowPrivate === undefined ? databaseUrl === undefined : parseBoolean('HOOK_ALLOW_PRIVATE_DESTINATIONS', allowPrivate),
    signupsPerAddressPerHour,
    playgroundSessionsPerAddressPerHour,
    retentionIntervalMs,
    apiRateLimit,
    transformTimeoutMs,
    transformMemoryBytes,
    transformThreads,
    metrics: metricsText === 'on',
    metricsToken,
    mcpAllowedOrigins: parseOriginList('HOOK_MCP_ALLOWED_ORIGINS', set('HOOK_MCP_ALLOWED_ORIGINS') ?? ''),
    dnsServers: set('HOOK_DNS_SERVERS') === undefined ? null : parseDnsServers(set('HOOK_DNS_SERVERS')!),
    tracing: loadTracingConfig(set),
    smtpUrl,
    alertEmailFrom,
  };
}

/** `name=value,name2=value2` (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES): names trimmed, values percent-decoded. */
function parseKeyValueList(variable: string, value: string | undefined): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const entry of (value ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    const equals = entry.indexOf('=');
    const name = equals === -1 ? '' : entry.slice(0, equals).trim();
    let decoded: string | undefined;
    try {
      decoded = decodeURIComponent(entry.slice(equals + 1).trim());
    } catch {
      // reported below
    }
    // The entry itself is not echoed: header values are often credentials.
    if (name === '' || decoded === undefined) throw new ConfigError(variable, '(not shown)', 'comma-separated name=value pairs with percent-encoded values, such as x-honeycomb-team=KEY,x-tenant=a%20b');
    pairs[name] = decoded;
  }
  return pairs;
}

function parseWholeNumber(variable: string, value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < 1 || number > max) throw new ConfigError(variable, value, `a whole number from 1 to ${max}`);
  return number;
}

/** The OTEL_* variables (see TracingConfig); null when tracing is off. */
function loadTracingConfig(set: (name: string) => string | undefined): TracingConfig | null {
  const disabled = set('OTEL_SDK_DISABLED');
  if (disabled !== undefined && parseBoolean('OTEL_SDK_DISABLED', disabled)) return null;
  const exporter = set('OTEL_TRACES_EXPORTER')?.toLowerCase() ?? 'otlp';
  if (exporter === 'none') return null;
  if (exporter !== 'otlp') throw new ConfigError('OTEL_TRACES_EXPORTER', set('OTEL_TRACES_EXPORTER')!, 'otlp or none (the relay exports traces over OTLP/HTTP only)');
  const tracesEndpoint = set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = set('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (tracesEndpoint === undefined && endpoint === undefined) return null;
  // The signal's own endpoint is used as given; the general one is a base the signal's path is added to.
  if (tracesEndpoint !== undefined) parseUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', tracesEndpoint, ['http:', 'https:']);
  const url = tracesEndpoint ?? `${parseUrl('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint!, ['http:', 'https:'])}/v1/traces`;
  const protocolVariable = set('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = set(protocolVariable) ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new ConfigError(protocolVariable, protocol, 'http/protobuf or http/json (the relay exports over OTLP/HTTP: use the collector\'s HTTP port, usually 4318, not gRPC)');
  }
  const timeoutVariable = set('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT' : 'OTEL_EXPORTER_OTLP_TIMEOUT';
  const sampler = set('OTEL_TRACES_SAMPLER')?.toLowerCase() ?? 'parentbased_always_on';
  if (!TRACE_SAMPLERS.includes(sampler as TraceSampler)) throw new ConfigError('OTEL_TRACES_SAMPLER', set('OTEL_TRACES_SAMPLER')!, TRACE_SAMPLERS.join(', '));
  const ratioText = set('OTEL_TRACES_SAMPLER_ARG');
  const samplerRatio = ratioText === undefined ? 1 : Number(ratioText);
  if (ratioText !== undefined && (!/^\d*\.?\d+$/.test(ratioText) || samplerRatio > 1)) {
    throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', ratioText, 'the fraction of traces to record, from 0 to 1, such as 0.1');
  }
  const resourceAttributes = parseKeyValueList('OTEL_RESOURCE_ATTRIBUTES', set('OTEL_RESOURCE_ATTRIBUTES'));
  const maxQueueSize = parseWholeNumber('OTEL_BSP_MAX_QUEUE_SIZE', set('OTEL_BSP_MAX_QUEUE_SIZE'), 2048, 1_000_000);
  const maxExportBatchSize = parseWholeNumber('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', set('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'), Math.min(512, maxQueueSize), maxQueueSize);
  return {
    url,
    protocol,
    headers: { ...parseKeyValueList('OTEL_EXPORTER_OTLP_HEADERS', set('OTEL_EXPORTER_OTLP_HEADERS')), ...parseKeyValueList('OTEL_EXPORTER_OTLP_TRACES_HEADERS', set('OTEL_EXPORTER_OTLP_TRACES_HEADERS')) },
    exportTimeoutMs: parseWholeNumber(timeoutVariable, set(timeoutVariable), 10_000, 600_000),
    serviceName: set('OTEL_SERVICE_NAME') ?? resourceAttributes['service.name'] ?? 'hook-relay',
    resourceAttributes,
    sampler: sampler as TraceSampler,
    samplerRatio,
    scheduleDelayMs: parseWholeNumber('OTEL_BSP_SCHEDULE_DELAY', set('OTEL_BSP_SCHEDULE_DELAY'), 5000, 3_600_000),
    maxQueueSize,
    maxExportBatchSize,
  };
}
