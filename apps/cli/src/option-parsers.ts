/**
 * Parsers for option values shared by several commands. A bad value throws commander's
 * InvalidArgumentError, which ends the run as a usage error (exit 2).
 */
import { InvalidArgumentError } from 'commander';
import { DEDUPE_FIELD_PATTERN, DEDUPE_HEADER_PATTERN, DEDUPE_SOURCE_MAX_CHARS, DELIVERY_DELAY_MAX_SECONDS, EVENT_STATUS_LIST_PATTERN, EVENT_STATUSES, ISSUE_STATUSES, isId, LIST_LIMIT_MAX, parseDuration } from '@hook/core';

/** `--limit`: a page size the API accepts. */
export function parseLimit(value: string): number {
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || limit > LIST_LIMIT_MAX) throw new InvalidArgumentError(`must be a whole number from 1 to ${LIST_LIMIT_MAX}.`);
  return limit;
}

/** `--status` of the event commands: one status or several separated by commas, sent as given (the relay splits it). */
export function parseStatusList(value: string): string {
  const list = value.replace(/\s+/g, '');
  if (!new RegExp(EVENT_STATUS_LIST_PATTERN).test(list)) throw new InvalidArgumentError(`must be one of ${EVENT_STATUSES.join(', ')}, or several separated by commas (failed,retrying).`);
  return list;
}

/** `--status` of `hook issues list`: issue statuses separated by commas, or `all`; sent as the relay takes them. */
export function parseIssueStatusList(value: string): string {
  const list = value.replace(/\s+/g, '');
  if (list === 'all') return ISSUE_STATUSES.join(',');
  const statuses = list.split(',');
  if (statuses.length === 0 || statuses.some((status) => !(ISSUE_STATUSES as readonly string[]).includes(status))) {
    throw new InvalidArgumentError(`must be one of ${ISSUE_STATUSES.join(', ')}, several separated by commas (open,acknowledged), or all.`);
  }
  return statuses.join(',');
}

/** An issue id argument (`iss_…`), checked here so a typo is a usage error rather than the relay's validation_failed. */
export function parseIssueId(value: string): string {
  if (!isId('issue', value)) throw new InvalidArgumentError('must be an issue id (iss_…); `hook issues list` shows them.');
  return value;
}

/** A destination id argument (`dst_…`), checked here so a typo is a usage error rather than the relay's validation_failed. */
export function parseDestinationId(value: string): string {
  if (!isId('destination', value)) throw new InvalidArgumentError('must be a destination id (dst_…); `hook destinations list <endpoint>` shows them.');
  return value;
}

/** `--rate`, `--max-in-flight` of `hook destinations add`: a whole number of at least 1 (the relay checks the upper bound). */
export function parsePositiveWholeNumber(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a whole number of at least 1.');
  return Number(value);
}

/**
 * The same for `hook destinations update`, where `none` removes the limit. `none` stays a
 * string here (commander turns a parser's null into ''); the command sends it as null.
 */
export function parseLimitOrNone(value: string): number | 'none' {
  if (value === 'none') return 'none';
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a whole number of at least 1, or none to remove the limit.');
  return Number(value);
}

/** A destination URL: http or https. */
export function parseHttpUrl(value: string): string {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new InvalidArgumentError('must be an http:// or https:// URL.');
  return value;
}

/**
 * A broker URL of a queue destination (`--amqp`, `--nats`, `--redis`, `--mqtt`): one of
 * the schemes that broker takes, the TLS one included.
 */
export function parseBrokerUrl(schemes: readonly string[], example: string): (value: string) => string {
  return (value) => {
    const url = URL.canParse(value) ? new URL(value) : undefined;
    if (!url || !schemes.includes(url.protocol.slice(0, -1))) throw new InvalidArgumentError(`must be a ${schemes.map((scheme) => `${scheme}://`).join(' or ')} URL, e.g. ${example}.`);
    return value;
  };
}

/**
 * `--delay` of `hook destinations add|update`: whole seconds (`90`) or a duration (`90s`,
 * `5m`, `2h`, `1h30m`, `1d`), from 1 second to 24 hours. Returned in seconds, as the API takes it.
 */
export function parseDelaySeconds(value: string): number {
  const trimmed = value.trim();
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : parseDuration(trimmed);
  const usage = `must be a delay of whole seconds from 1s to 24h: a number of seconds (90) or a duration (90s, 5m, 2h, 1h30m).`;
  if (ms === null || ms % 1000 !== 0) throw new InvalidArgumentError(usage);
  if (ms < 1000 || ms > DELIVERY_DELAY_MAX_SECONDS * 1000) throw new InvalidArgumentError(`${usage.replace(/\.$/, '')}; ${value} is ${ms < 1000 ? 'under 1s' : 'over 24h'}.`);
  return ms / 1000;
}

const HEADER_NAME = new RegExp(DEDUPE_HEADER_PATTERN);
const FIELD_PATH = new RegExp(DEDUPE_FIELD_PATTERN);

/** `--order-key-header`: a header name, as dedupe takes its key from one. */
export function parseKeyHeader(value: string): string {
  const name = value.trim();
  if (name.length === 0 || name.length > DEDUPE_SOURCE_MAX_CHARS || !HEADER_NAME.test(name)) {
    throw new InvalidArgumentError(`must be a header name (at most ${DEDUPE_SOURCE_MAX_CHARS} characters, no spaces or colons), e.g. X-Customer-Id.`);
  }
  return name;
}

/** `--order-key-field`: a field of the JSON body, dotted for a nested one. */
export function parseKeyField(value: string): string {
  const path = value.trim();
  if (path.length === 0 || path.length > DEDUPE_SOURCE_MAX_CHARS || !FIELD_PATH.test(path)) {
    throw new InvalidArgumentError(`must be a field of the JSON body, dotted for a nested one (at most 8 names of letters, digits, _ or -), e.g. customer_id or data.object.customer.`);
  }
  return path;
}

/**
 * A point in time for `--since`/`--until`: an ISO 8601 date-time, a date (midnight
 * UTC), or a duration ago (`30m`, `2h`, `7d`). Returned as ISO 8601 UTC.
 */
export function parseTimeArgument(now: () => number = Date.now): (value: string) => string {
  return (value) => {
    const ago = parseDuration(value);
    if (ago !== null) return new Date(now() - ago).toISOString();
    const isoish = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
    const time = isoish.test(value) ? Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value) : NaN;
    if (Number.isNaN(time)) throw new InvalidArgumentError('must be an ISO 8601 time (2026-01-31T12:00:00Z), a date (2026-01-31) or a duration ago (30m, 2h, 7d).');
    return new Date(time).toISOString();
  };
}

/** `-H 'Name: value'`, repeatable: collected in order. */
export function collectHeader(value: string, previous: Array<[string, string]> = []): Array<[string, string]> {
  const colon = value.indexOf(':');
  const name = colon === -1 ? '' : value.slice(0, colon).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new InvalidArgumentError("must be a header written as 'Name: value' (a header name, a colon, then the value).");
  return [...previous, [name, value.slice(colon + 1).trim()]];
}
