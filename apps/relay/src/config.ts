/**
 * Every setting of the relay, declared once in RELAY_VARIABLES: the variable, its parser,
 * its default and the text docs/configuration.md shows for it. RelayConfig, loadConfig and
 * the docs tables (`node apps/relay/scripts/config-docs.ts` writes them; a test compares)
 * are made from it. Read from the environment by the entry point only (libraries and
 * buildApp take a RelayConfig). OTEL_* are declared the same way in tracing-config.ts.
 */
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { DEFAULT_RETRY_SCHEDULE_TEXT, parseRetrySchedule, parseSecretKey, SECRET_KEY_BYTES } from '@hook/core';
import {
  boolean, byteSize, ConfigError, derived, duration, envReader, mapped, oneOf, onOff, readVariables, text, url, variable, wholeNumber,
  type EnvReader, type Parser, type ValuesOf,
} from './env-variables.ts';
import { canonicalCidr } from './cidr.ts';
import { loadTracingConfig, type TracingConfig } from './tracing-config.ts';

export { ConfigError } from './env-variables.ts';
export type { OtlpProtocol, TraceSampler, TracingConfig } from './tracing-config.ts';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const ROLES = ['all', 'api', 'worker'] as const;
export type RelayRole = (typeof ROLES)[number];

/** Requests per API key per minute: the caller's plan's figure, or one number for every plan (0: no limit). */
export type ApiRateLimit = 'plan' | number;

/** Fastify's `trustProxy`: false, true, how many proxy hops to believe, or the proxies' addresses and CIDRs. */
export type TrustProxy = boolean | number | string[];

export const DEFAULT_DELIVERY_CONCURRENCY = 256;

/** One fewer transformation thread than the machine has cores, at least 1 (1 on a 2-core machine). */
export function defaultTransformThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

const POSTGRES_PROTOCOLS = ['postgres:', 'postgresql:'];
const HTTP_PROTOCOLS = ['http:', 'https:'];

/** HOOK_SECRET_KEY: the value itself stays out of the message, it is a secret. */
const secretKey: Parser<Buffer | undefined> = (value, name) => {
  try {
    return parseSecretKey(value);
  } catch {
    throw new ConfigError(name, `<${value.length} characters>`, `${SECRET_KEY_BYTES} random bytes as base64 (44 characters) or hex (64 characters); generate one with: openssl rand -base64 32`);
  }
};

/** `true`, `false`, a hop count (`1`) or comma-separated proxy addresses and CIDRs (`10.0.0.0/8, 127.0.0.1`). */
export const trustProxy: Parser<TrustProxy> = (value, name) => {
  if (/^(true|yes)$/i.test(value)) return true;
  if (/^(false|no)$/i.test(value)) return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops <= 100) return hops === 0 ? false : hops;
  }
  // Fastify (proxy-addr) is given the entries as written; they are only checked here, by the reader allowed_ips entries go through.
  // A link-local proxy's address may name its interface (`fe80::1%eth0`): proxy-addr takes that, allowed_ips does not.
  const unzoned = (proxy: string): string => proxy.replace(/^([^/]*:[^/]*)%[\w.:-]+(?=\/|$)/, '$1');
  const proxies = value.split(',').map((part) => part.trim());
  if (!proxies.every((proxy) => 'cidr' in canonicalCidr(unzoned(proxy)))) {
    throw new ConfigError(name, value, 'true, false, a number of proxy hops, or comma-separated proxy addresses and CIDRs such as 10.0.0.0/8,127.0.0.1');
  }
  return proxies;
};

/**
 * Comma-separated web origins (`https://app.example.com, http://localhost:3000`), each
 * normalized as browsers send it in `Origin` (lower-case scheme and host, no default port).
 * A path, query or credentials would never match an Origin header, so they are refused.
 */
const originList: Parser<string[]> = (value, name) => value.split(',').map((part) => part.trim()).filter(Boolean).map((entry) => {
  if (URL.canParse(entry)) {
    const parsed = new URL(entry);
    const bare = parsed.pathname === '/' && !entry.includes('?') && !entry.includes('#') && !parsed.username && !parsed.password;
    if (HTTP_PROTOCOLS.includes(parsed.protocol) && bare) return parsed.origin;
  }
  throw new ConfigError(name, value, `comma-separated origins (scheme://host[:port], no path), such as https://app.example.com,http://localhost:3000 ("${entry}" is not one)`);
});

/**
 * Comma-separated DNS servers, each an IP address with an optional port (`127.0.0.1:5353`,
 * `[2001:db8::53]:53`, `9.9.9.9`), in the form node:dns `Resolver.setServers` takes.
 */
export const dnsServers: Parser<string[] | null> = (value, name) => {
  const servers = value.split(',').map((part) => part.trim()).filter(Boolean);
  const valid = servers.length > 0 && servers.every((server) => {
    const [, address = '', port] = /^\[([^\]]+)\](?::(\d+))?$/.exec(server) ?? /^([^:]+)(?::(\d+))?$/.exec(server) ?? [server, server, undefined];
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return false;
    // A bare IPv6 address has colons of its own, so it takes a port only in brackets.
    return isIP(address) !== 0 && (server.startsWith('[') || isIP(address) === 4 || port === undefined);
  });
  if (!valid) throw new ConfigError(name, value, 'comma-separated DNS server addresses with optional ports, such as 127.0.0.1:5353,9.9.9.9 or [2001:db8::53]:53');
  return servers;
};

/**
 * HOOK_DATABASE_READ_URL: comma-separated PostgreSQL URLs (percent-encode a comma inside a
 * password as %2C). The value is not echoed: replica URLs carry passwords.
 */
const readUrls: Parser<string[]> = (value, name) => {
  const urls = value.split(',').map((part) => part.trim()).filter(Boolean);
  return urls.map((entry, index) => {
    if (!URL.canParse(entry) || !POSTGRES_PROTOCOLS.includes(new URL(entry).protocol)) {
      throw new ConfigError(name, '(not shown)', `comma-separated URLs starting with postgres:// or postgresql://, such as postgres://hook:secret@replica-1:5432/hook,postgres://hook:secret@replica-2:5432/hook${entryOf(index, urls.length)}`);
    }
    return entry.replace(/\/+$/, '');
  });
};

/** Which URL of a list a message is about (nothing when there is one). */
function entryOf(index: number, count: number): string {
  return count > 1 ? ` (URL ${index + 1} of ${count} is not)` : '';
}

/** HOOK_RETRY_SCHEDULE: what is wrong with it comes from parseRetrySchedule. */
const retrySchedule: Parser<number[]> = (value, name) => {
  try {
    return parseRetrySchedule(value);
  } catch (error) {
    throw new ConfigError(name, value, `comma-separated durations such as 30s,2m,2h8m (${(error as Error).message})`);
  }
};

const apiRateLimit: Parser<ApiRateLimit> = (value, name) => {
  if (value.toLowerCase() === 'plan') return 'plan';
  return wholeNumber(0, 1_000_000, 'plan, or a whole number of requests per API key per minute from 0 (no limit) to 1000000')(value, name, () => undefined);
};

/** HOOK_METRICS_TOKEN: not echoed, it is a credential. */
const metricsToken: Parser<string | null> = (value, name) => {
  if (!/^[\x21-\x7e]{16,256}$/.test(value)) throw new ConfigError(name, '(not shown)', '16 to 256 printable characters without spaces, such as the output of `openssl rand -hex 24`');
  return value;
};

/** HOOK_SMTP_URL: smtp:// or smtps:// with a host. The value is not echoed: it holds the SMTP password. */
const smtpUrl: Parser<string | null> = (value, name) => {
  const parsed = URL.canParse(value) ? new URL(value) : undefined;
  if (!parsed || !['smtp:', 'smtps:'].includes(parsed.protocol) || parsed.hostname === '') {
    throw new ConfigError(name, '(not shown)', 'a URL such as smtp://user:password@smtp.example.com:587 (STARTTLS) or smtps://user:password@smtp.example.com:465 (TLS), with user and password percent-encoded');
  }
  return value;
};

/** HOOK_ALERT_EMAIL_FROM: `address` or `Display name <address>`. */
const emailFrom: Parser<string | null> = (value, name) => {
  const address = /<([^<>]+)>\s*$/.exec(value)?.[1] ?? value;
  if (!/^[^\s@<>",]+@[^\s@<>",]+\.[^\s@<>",]+$/.test(address)) {
    throw new ConfigError(name, value, 'an email address such as alerts@example.com, or a name and address such as Hook alerts <alerts@example.com>');
  }
  return value;
};

/**
 * The relay's variables, in the order docs/configuration.md lists them (each `section` is a
 * table there). A field's name is RelayConfig's; `doc`, `format` and `defaultText` are the
 * docs' columns, markdown.
 */
export const RELAY_VARIABLES = {
  databaseUrl: variable<string | undefined>({
    name: 'HOOK_DATABASE_URL',
    section: 'Relay',
    format: 'URL (`postgres://` or `postgresql://`)',
    defaultText: 'unset',
    doc: 'The PostgreSQL database to use. When unset, the relay runs an embedded PostgreSQL under `HOOK_DATA_DIR`. The database must exist; the relay creates and migrates its tables at start',
    default: undefined,
    parse: url(POSTGRES_PROTOCOLS),
  }),
  databaseReadUrls: variable({
    name: 'HOOK_DATABASE_READ_URL',
    section: 'Relay',
    format: 'comma-separated URLs (`postgres://` or `postgresql://`)',
    defaultText: 'unset (no replicas)',
    doc: 'PostgreSQL streaming replicas (hot standbys) of `HOOK_DATABASE_URL`, e.g. `postgres://hook:secret@replica-1:5432/hook,postgres://hook:secret@replica-2:5432/hook`. Reads that tolerate a little lag go to them: event lists and search (`GET /v1/events`) and daily usage (`GET /v1/account/usage/daily`), whether the API, the console, the CLI or MCP asks. Everything else, every write and every read of one resource by id included, goes to the primary, and an account\'s lists stay on the primary right after it writes until a replica has the write. A replica that does not answer, is not a standby, or is further behind than `HOOK_DATABASE_READ_MAX_LAG_MS` is skipped. Needs `HOOK_DATABASE_URL` and may not repeat it; percent-encode a comma inside a password as `%2C`. An unusable value is refused at start without echoing it (the URLs carry passwords). `worker` processes serve no API reads and do not connect. See [deployment.md](deployment.md#read-replicas)',
    default: [],
    parse: readUrls,
  }),
  databaseReadMaxLagMs: variable({
    name: 'HOOK_DATABASE_READ_MAX_LAG_MS',
    section: 'Relay',
    format: 'whole number of milliseconds, 100 to 3600000',
    defaultText: '`5000`',
    doc: 'How far behind the primary a replica may be and still serve reads: one that lacks a commit older than this is skipped (its reads go to the primary) until it catches up. Replicas are checked every fifth of it, at most once a second and at least every 100 ms; their lag is the metric `hook_db_replica_lag_seconds`',
    default: 5000,
    parse: wholeNumber(100, 3_600_000, 'a whole number of milliseconds from 100 to 3600000, such as 5000'),
  }),
  databaseDistributed: variable<'citus' | null>({
    name: 'HOOK_DATABASE_DISTRIBUTED',
    section: 'Relay',
    format: '`citus` or `off`',
    defaultText: '`off`',
    doc: '`citus` when `HOOK_DATABASE_URL` is a PostgreSQL distributed by account with Citus ([scaling.md](scaling.md#past-one-postgresql-citus-distributed-by-account_id)): ingest and result recording then send one statement per account of each group commit, run at the same time, so that each is routed to that account\'s shard. With `off`, one statement carries several accounts\' events or results, which costs less on one PostgreSQL (with 10 accounts under load, one statement per account halved ingest throughput: see [scaling.md](scaling.md#what-a-citus-deployment-still-needs)). Set it on every relay process of a distributed database',
    default: null,
    parse: mapped(oneOf(['citus', 'off'], { anyCase: true, expected: 'citus or off' }), (mode) => (mode === 'citus' ? 'citus' : null)),
  }),
  dataDir: variable({
    name: 'HOOK_DATA_DIR',
    section: 'Relay',
    format: 'path',
    defaultText: '`.hook` (relative to the working directory, which is the repository root for `npm start`)',
    doc: 'Where the embedded PostgreSQL keeps its cluster (`postgres/`), password (`postgres-password`) and server log (`postgres.log`). Created if missing. Not used when `HOOK_DATABASE_URL` is set. As root, a cluster the OS user `postgres` could not reach here is kept under `/var/lib/hook-embedded-postgres` instead ([deployment.md](deployment.md#the-embedded-postgresql))',
    default: '.hook',
    parse: text,
  }),
  secretKey: variable({
    name: 'HOOK_SECRET_KEY',
    section: 'Relay',
    format: '32 random bytes: base64 (44 characters) or hex (64 characters)',
    defaultText: 'unset: with the embedded database, the key in `HOOK_DATA_DIR/secret.key`, generated on first start; with `HOOK_DATABASE_URL`, **required** (the relay refuses to start, exit code 2)',
    doc: 'The key endpoint signing secrets are encrypted under in the database (AES-256-GCM). Generate one with `openssl rand -base64 32` (or `openssl rand -hex 32`). Every relay process on one database needs the same key. Keep it as safe as the database password and back it up apart from database backups: without it the stored signing secrets cannot be read, and every endpoint secret must be rotated. A wrong key stops the relay at start (`HOOK_SECRET_KEY cannot decrypt the stored endpoint signing secrets`), before it signs anything. See [deployment.md](deployment.md#secrets)',
    // With the embedded database, secret-key-file.ts reads or makes the key in the data directory.
    default: undefined,
    parse: secretKey,
  }),
  host: variable({
    name: 'HOOK_HOST',
    section: 'Relay',
    format: 'host or IP',
    defaultText: '`127.0.0.1`',
    doc: 'Interface to listen on. `127.0.0.1` accepts local connections only; `0.0.0.0` (or `::`) accepts connections from other machines',
    default: '127.0.0.1',
    parse: text,
  }),
  port: variable({
    name: 'HOOK_PORT',
    section: 'Relay',
    format: 'integer 0–65535',
    defaultText: '`8080`',
    doc: 'TCP port to listen on. `0` picks a free port; the start-up banner prints the one chosen',
    default: 8080,
    parse: wholeNumber(0, 65535, 'an integer from 0 to 65535'),
  }),
  publicUrl: variable<string | undefined>({
    name: 'HOOK_PUBLIC_URL',
    section: 'Relay',
    format: 'URL (`http://` or `https://`)',
    defaultText: 'unset',
    doc: 'The base URL that senders and clients use to reach the relay, e.g. `https://hooks.example.com`. Endpoint `url`s are this plus `/v1/ingest/<ingest_id>`, and the start-up banner uses it. Trailing slashes are removed. When unset, endpoint URLs use the scheme and `Host` header of each API request',
    default: undefined,
    parse: url(HTTP_PROTOCOLS),
  }),
  ingestUrl: variable<string | undefined>({
    name: 'HOOK_INGEST_URL',
    section: 'Relay',
    format: 'URL (`http://` or `https://`)',
    defaultText: 'unset',
    doc: 'A base URL on a host name of its own for ingest, e.g. `https://in.hooks-content.example`, so the console\'s origin never serves tenant content. Endpoint `url`s are built on it instead of `HOOK_PUBLIC_URL`; that host serves only ingest URLs, `/healthz` and `/readyz` (anything else is `421 ingest_host_only`), and ingest on any other host but a verified custom domain is `421 ingest_host_required`. Its host name must differ from `HOOK_PUBLIC_URL`\'s (ports do not count: cookies ignore them). See [deployment.md](deployment.md#ingest-on-its-own-host)',
    default: undefined,
    parse: url(HTTP_PROTOCOLS),
  }),
  trustProxy: variable<TrustProxy>({
    name: 'HOOK_TRUST_PROXY',
    section: 'Relay',
    format: '`true`/`yes`, `false`/`no`, a hop count, or comma-separated addresses and CIDRs',
    defaultText: '`false`',
    doc: 'Which peers\' `X-Forwarded-For`, `X-Forwarded-Proto` and `X-Forwarded-Host` to believe (Fastify\'s `trustProxy`). `false`: none; the client address is the TCP peer\'s. `true`: any peer (only when nothing can reach the relay except through your proxy). A number `n`: the last `n` hops are proxies. Addresses or CIDRs (`10.0.0.0/8,127.0.0.1`): believe only these proxies; the usual choice. It decides the address accounts\' `allowed_ips` are checked against, the address the signup and playground limits count, whether the console\'s session cookie is marked `Secure` (a request that came over https; [console.md](console.md#how-it-works)), and, when `HOOK_PUBLIC_URL` is unset, the scheme and host of endpoint URLs. See [deployment.md](deployment.md#listen-publicly-behind-a-proxy)',
    default: false,
    parse: trustProxy,
  }),
  maxPayloadBytes: variable({
    name: 'HOOK_MAX_PAYLOAD',
    section: 'Relay',
    format: 'size in bytes',
    defaultText: '`10mb` (10 MiB, 10485760 bytes)',
    doc: 'Largest ingest body. Larger bodies get `413 payload_too_large` and are not stored. Takes a positive whole number of bytes (`10485760`), optionally with a unit: `b`, `kb`/`kib`, `mb`/`mib`, `gb`/`gib`, case-insensitive. All units are powers of 1024 (`512kb` = 524288 bytes). Does not affect the JSON API routes, whose bodies are limited to 1 MiB',
    default: 10 * 1024 * 1024,
    parse: byteSize(),
  }),
  transformMemoryBytes: variable({
    name: 'HOOK_TRANSFORM_MEMORY',
    section: 'Relay',
    format: 'size in bytes, `1mb` to `512mb`',
    defaultText: '`16mb` (16 MiB, 16777216 bytes)',
    doc: 'Memory one transformation sandbox may allocate at once; all sandboxes of a process share one WebAssembly memory of 16 MiB + 4 × this, which no transformation can grow past. A run that runs out fails with `Transformation used more than 16 MiB` and its sandbox is thrown away. Units as `HOOK_MAX_PAYLOAD`. See [transformations.md](transformations.md#limits)',
    default: 16 * 1024 * 1024,
    // Below 1 MiB a transformation has no room; 512 MiB per sandbox is far past any sensible limit (each sandbox has its own WebAssembly memory).
    parse: byteSize({ min: 1024 * 1024, max: 512 * 1024 * 1024, expected: 'a size from 1mb to 512mb, such as 16777216 or 16mb' }),
  }),
  transformThreads: variable({
    name: 'HOOK_TRANSFORM_THREADS',
    section: 'Relay',
    format: 'whole number, 1 to 64',
    defaultText: 'one fewer than the machine\'s cores, at least 1 (1 on a 2-core machine)',
    doc: 'Worker threads that run transformations (and filters over bodies above 64 KiB), off the event loop. Each has its own sandboxes. More threads serve more accounts\' transformations at once but take CPU from ingest and delivery. See [transformations.md](transformations.md#where-they-run-transformation-threads)',
    default: derived(defaultTransformThreads),
    parse: wholeNumber(1, 64, 'a whole number of threads from 1 to 64, such as 1'),
  }),
  logLevel: variable<LogLevel>({
    name: 'HOOK_LOG_LEVEL',
    section: 'Relay',
    format: '`fatal` `error` `warn` `info` `debug` `trace` `silent`',
    defaultText: '`info`',
    doc: 'Level of the JSON log on stderr. At `info` requests are not logged one by one; server errors (5xx) are logged at `error` with their `request_id` (`reqId`). `debug` adds one line per answered request with its `reqId`, method, route pattern, status and time. Secrets, bodies and headers are never logged; see [deployment.md](deployment.md#logs)',
    default: 'info',
    parse: oneOf(LOG_LEVELS),
  }),
  metrics: variable({
    name: 'HOOK_METRICS',
    section: 'Relay',
    format: '`on` or `off` (any case)',
    defaultText: '`on`',
    doc: 'Serve Prometheus metrics at `GET /metrics`, without authentication unless `HOOK_METRICS_TOKEN` is set. Don\'t expose the path publicly: block it at the proxy and scrape the processes on the internal network, set a token, or set `off` (then `/metrics` is `404 route_not_found`). See [deployment.md](deployment.md#metrics)',
    default: true,
    parse: onOff,
  }),
  metricsToken: variable({
    name: 'HOOK_METRICS_TOKEN',
    section: 'Relay',
    format: '16–256 printable characters, no spaces',
    defaultText: 'unset',
    doc: 'When set, `GET /metrics` answers only requests with `Authorization: Bearer <token>` (compared in constant time); others get `401 metrics_token_required`. Generate one with `openssl rand -hex 24`',
    default: null,
    parse: metricsToken,
  }),
  mcpAllowedOrigins: variable({
    name: 'HOOK_MCP_ALLOWED_ORIGINS',
    section: 'Relay',
    format: 'comma-separated origins (`scheme://host[:port]`, no path)',
    defaultText: 'unset (none)',
    doc: 'Web pages allowed to call `/mcp` from a browser, e.g. `https://agents.example.com,http://localhost:3000`. A request to `/mcp` whose `Origin` header names any other origin is refused with `403 mcp_origin_refused` (this is what guards against DNS rebinding, where a page of another site reaches the relay under its own name). The relay\'s own origin (`HOOK_PUBLIC_URL`\'s, when set) is always allowed. Requests without `Origin` (MCP clients, scripts: anything that is not a browser) are not affected. Origins are compared as browsers send them: `HTTPS://App.example.com:443/` is `https://app.example.com`; a path, `*` or `null` is refused at start. See [agents.md](agents.md#over-http-post-mcp)',
    default: [],
    parse: originList,
  }),
  dnsServers: variable({
    name: 'HOOK_DNS_SERVERS',
    section: 'Relay',
    format: 'comma-separated IP addresses, each with an optional port (`127.0.0.1:5353`, `9.9.9.9`, `[2001:db8::53]:53`)',
    defaultText: 'unset (the system\'s resolvers, `/etc/resolv.conf`)',
    doc: 'The DNS servers the relay asks for the TXT record that proves an account owns its custom domain (`POST /v1/account/custom-domain/verify`, [api.md](api.md#post-v1accountcustom-domainverify)). Each lookup gets two tries per server, the first of 2 s. Set it when the relay\'s own resolver serves a split-horizon view that differs from the public one, or in tests (a DNS server on a local port). Nothing else the relay does uses it: delivery resolves destinations with the system resolver',
    default: null,
    parse: dnsServers,
  }),
  role: variable<RelayRole>({
    name: 'HOOK_ROLE',
    section: 'Relay',
    format: '`all`, `api` or `worker` (lower case)',
    defaultText: '`all`',
    doc: 'Which parts this process runs. `all`: the HTTP API, ingest and the delivery worker. `api`: the HTTP API and ingest, no delivery worker. `worker`: the delivery worker, and an HTTP server that answers only `/healthz`, `/readyz`, `/metrics` (and `/openapi.json`); every other route is `404 route_not_found`. See [deployment.md](deployment.md#roles-and-several-processes)',
    default: 'all',
    parse: oneOf(ROLES),
  }),
  retryScheduleMs: variable({
    name: 'HOOK_RETRY_SCHEDULE',
    section: 'Delivery',
    format: 'comma-separated durations',
    defaultText: `\`${DEFAULT_RETRY_SCHEDULE_TEXT}\``,
    doc: 'The waits before each automatic retry of a failed delivery. The number of waits is the number of retries, so the default gives 6 retries, 7 automatic attempts in all. Each wait varies by ±10 % at random, and a longer `Retry-After` from the destination replaces it (capped at 24 hours). Spaces around the commas are allowed; an empty step (`30s,,2m`) is not',
    default: parseRetrySchedule(DEFAULT_RETRY_SCHEDULE_TEXT),
    parse: retrySchedule,
  }),
  deliveryTimeoutMs: variable({
    name: 'HOOK_DELIVERY_TIMEOUT',
    section: 'Delivery',
    format: 'duration',
    defaultText: '`15s`',
    doc: 'How long one delivery attempt may take, from connecting to reading the whole response. An attempt that runs out of time is a failure. It also sets the claim lease, 2 × this + 1 second, after which another worker takes over the deliveries of a relay process that died',
    default: 15_000,
    parse: duration(1, Infinity, 'a duration such as 15s or 500ms'),
  }),
  deliveryConcurrency: variable({
    name: 'HOOK_DELIVERY_CONCURRENCY',
    section: 'Delivery',
    format: 'whole number 1–10000',
    defaultText: '`256`',
    doc: 'Most deliveries this process makes at once. One destination gets at most half of it (rounded up, at least 1; or its own `max_in_flight` if lower), counted across all processes sharing the database, so a slow destination can\'t take every slot. A delivery waiting for a transformation thread lends its slot out meanwhile (up to this many at once), so with transformations up to twice this many deliveries may be held. Not used with `HOOK_ROLE=api`',
    default: DEFAULT_DELIVERY_CONCURRENCY,
    parse: wholeNumber(1, 10_000),
  }),
  allowPrivateDestinations: variable({
    name: 'HOOK_ALLOW_PRIVATE_DESTINATIONS',
    section: 'Delivery',
    format: '`true`/`1`/`yes` or `false`/`0`/`no` (any case)',
    defaultText: '`true` without `HOOK_DATABASE_URL` (embedded database), `false` with it',
    doc: 'Whether endpoint destinations may be `localhost`, private, loopback, link-local or other reserved addresses. When `false`, such URLs are refused with `422 destination_not_allowed` when an endpoint is created or changed, and every delivery checks again the address it connects to. Leave it `false` on a server others can use ([delivery.md](delivery.md#private-destinations))',
    // Local development (the embedded database) delivers to localhost; a shared server does not, unless told.
    default: derived((env) => env('HOOK_DATABASE_URL') === undefined),
    parse: boolean,
  }),
  signupsPerAddressPerHour: variable({
    name: 'HOOK_SIGNUP_RATE_LIMIT',
    section: 'Delivery',
    format: 'whole number 0–1000000',
    defaultText: '`20`',
    doc: 'Most accounts one client address may create with `POST /v1/accounts` per hour (a one-hour window per address from its first signup, counted in PostgreSQL and shared by every relay process on the database). Over it, signups get `429 rate_limited` with `Retry-After`. `0` turns the limit off. The address is the TCP peer\'s: behind a reverse proxy every request shares the proxy\'s address, so raise the limit there or limit at the proxy',
    default: 20,
    parse: wholeNumber(0, 1_000_000, 'a whole number of accounts per hour from 0 (no limit) to 1000000'),
  }),
  playgroundSessionsPerAddressPerHour: variable({
    name: 'HOOK_PLAYGROUND_RATE_LIMIT',
    section: 'Delivery',
    format: 'whole number 0–1000000',
    defaultText: '`10`',
    doc: 'Most playground sessions (each a temporary account with one endpoint, see [playground.md](playground.md)) one client address may start with `POST /playground/session` per hour, counted like `HOOK_SIGNUP_RATE_LIMIT` (per address, shared by every relay process). Over it: `429 rate_limited` with `Retry-After`. `0` turns the limit off',
    default: 10,
    parse: wholeNumber(0, 1_000_000, 'a whole number of sessions per hour from 0 (no limit) to 1000000'),
  }),
  apiRateLimit: variable<ApiRateLimit>({
    name: 'HOOK_API_RATE_LIMIT',
    section: 'Delivery',
    format: '`plan`, or whole number 0–1000000',
    defaultText: '`plan`',
    doc: 'Requests each API key may make per minute to the routes that need a key (including `/mcp` and `/v1/stream` upgrades; not ingest URLs, `/healthz`, `/readyz` or `/metrics`). `plan` takes the figure of the key\'s account\'s plan (free 1200, pro 12000, enterprise 60000); a number applies to every plan; `0` turns the limit off. Counted per key in PostgreSQL, shared by every relay process on the database, in a one-minute window from the key\'s first request ([deployment.md](deployment.md#rate-limits-across-processes)). Over it: `429 rate_limited` with `Retry-After`; every limited answer carries `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`. See [api.md](api.md#rate-limits)',
    default: 'plan',
    parse: apiRateLimit,
  }),
  transformTimeoutMs: variable({
    name: 'HOOK_TRANSFORM_TIMEOUT',
    section: 'Delivery',
    format: 'duration, at most `1m`',
    defaultText: '`100ms`',
    doc: 'CPU time one run of an endpoint\'s transformation may take (also its top-level code when first loaded). A run that takes longer is stopped and fails with `Transformation ran longer than 100 ms`. Runs are synchronous in the delivering process, so keep it short. See [transformations.md](transformations.md#limits)',
    default: 100,
    parse: duration(1, 60_000, 'a duration from 1ms to 1m, such as 100ms'),
  }),
  retentionIntervalMs: variable({
    name: 'HOOK_RETENTION_INTERVAL',
    section: 'Delivery',
    format: 'duration, at most `24d`',
    defaultText: '`1h`',
    doc: 'Time between two retention passes, which remove events (with their attempts) older than their account\'s retention, in small batches. A pass also runs when the process starts. Runs in processes with `HOOK_ROLE` `all` or `worker`; several processes may run passes at once. See [retention.md](retention.md)',
    default: 60 * 60 * 1000,
    // setInterval cannot wait longer than 2^31-1 ms (about 24.8 days).
    parse: duration(1, 2 ** 31 - 1, 'a duration from 1ms to 24d, such as 1h or 30m'),
  }),
  smtpUrl: variable({
    name: 'HOOK_SMTP_URL',
    section: 'Alert email',
    format: '`smtp://` or `smtps://` URL with a host',
    defaultText: 'unset (no email)',
    doc: 'The SMTP server alert emails go through. `smtp://user:password@smtp.example.com:587` connects in the clear and upgrades with STARTTLS when the server offers it; `smtps://user:password@smtp.example.com:465` uses TLS from the start. Percent-encode special characters in the user and password (`@` is `%40`). Unset: accounts cannot set `email_to` (`422 alert_email_unavailable`) and `GET /v1/account/alerts` says `email.available: false`. Read by the processes that send alerts (`HOOK_ROLE` `all` or `worker`) and by those serving the API (which refuse `email_to` without it): give every process the same value',
    default: null,
    parse: smtpUrl,
  }),
  alertEmailFrom: variable({
    name: 'HOOK_ALERT_EMAIL_FROM',
    section: 'Alert email',
    format: 'an address, or `Name <address>`',
    defaultText: 'unset',
    doc: 'The `From` of alert emails, e.g. `Hook alerts <alerts@example.com>`. Required with `HOOK_SMTP_URL`, and refused without it. Use an address the SMTP server may send as (SPF, DKIM)',
    default: null,
    parse: emailFrom,
  }),
};

/** The relay's settings: one field per RELAY_VARIABLES entry, and tracing (tracing-config.ts; null when off). */
export type RelayConfig = ValuesOf<typeof RELAY_VARIABLES> & { tracing: TracingConfig | null };

/**
 * The rules between variables, checked after each has been read on its own. Each throws
 * when `config` breaks it.
 */
const CROSS_CHECKS: ReadonlyArray<(config: RelayConfig, env: EnvReader) => void> = [
  function secretKeyWithDatabaseUrl(config) {
    if (config.databaseUrl !== undefined && config.secretKey === undefined) {
      throw ConfigError.missing('HOOK_SECRET_KEY', 'with HOOK_DATABASE_URL the relay needs a key to encrypt endpoint signing secrets at rest. ' +
        'Generate one with `openssl rand -base64 32`, keep it with your other production secrets (losing it means replacing every endpoint secret), ' +
        'and give the same value to every relay process on this database');
    }
  },
  /** Ports do not count: browsers send a host's cookies to all its ports, so the console's cookie would reach tenant content on another port of the same host. */
  function ingestHostOfItsOwn(config, env) {
    if (config.ingestUrl === undefined || config.publicUrl === undefined) return;
    const publicHost = new URL(config.publicUrl).hostname;
    if (new URL(config.ingestUrl).hostname === publicHost) {
      throw new ConfigError('HOOK_INGEST_URL', env('HOOK_INGEST_URL') ?? '', `a host name other than HOOK_PUBLIC_URL's (${publicHost}): a port of the same host shares its cookies`);
    }
  },
  function readReplicasOfAPrimary(config, env) {
    if (env('HOOK_DATABASE_READ_URL') === undefined) return;
    if (config.databaseUrl === undefined) {
      throw ConfigError.missing('HOOK_DATABASE_URL', 'HOOK_DATABASE_READ_URL names read replicas, which stream from a primary you run (the embedded database has none). Set HOOK_DATABASE_URL to the primary, or unset HOOK_DATABASE_READ_URL');
    }
    // A replica is another server (compared after the trailing slashes both lost when read).
    const primary = config.databaseReadUrls.indexOf(config.databaseUrl);
    if (primary !== -1) {
      throw new ConfigError('HOOK_DATABASE_READ_URL', '(not shown)', `the URLs of streaming replicas, not HOOK_DATABASE_URL's own primary${entryOf(primary, config.databaseReadUrls.length)}`);
    }
  },
  function emailNeedsSmtpAndFrom(config) {
    if (config.smtpUrl !== null && config.alertEmailFrom === null) {
      throw ConfigError.missing('HOOK_ALERT_EMAIL_FROM', 'with HOOK_SMTP_URL the relay mails alerts, and they need a From address the SMTP server accepts, such as alerts@example.com');
    }
    if (config.smtpUrl === null && config.alertEmailFrom !== null) {
      throw ConfigError.missing('HOOK_SMTP_URL', 'HOOK_ALERT_EMAIL_FROM is set, but alerts are mailed only through an SMTP server: set HOOK_SMTP_URL (smtp://user:password@host:587), or unset HOOK_ALERT_EMAIL_FROM');
    }
  },
];

/** Reads the relay's settings from an environment (normally `process.env`); an unusable one throws a ConfigError. */
export function loadConfig(environment: Record<string, string | undefined>): RelayConfig {
  const env = envReader(environment);
  const config: RelayConfig = { ...readVariables(RELAY_VARIABLES, env), tracing: loadTracingConfig(env) };
  for (const check of CROSS_CHECKS) check(config, env);
  return config;
}
