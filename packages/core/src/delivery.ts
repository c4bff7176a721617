/**
 * Delivery rules as pure functions: the retry schedule, backoff with jitter, Retry-After,
 * the state an event moves to after an attempt, and which headers travel. Clock and
 * randomness are parameters so every rule is unit-testable.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { AttemptTrigger, EventStatus } from './events.ts';

/** The default schedule of automatic retries (DESIGN.md §3): 6 retries, each 4× the last. */
export const DEFAULT_RETRY_SCHEDULE_TEXT = '30s,2m,8m,32m,2h8m,8h32m';

/** Each retry waits its scheduled delay ± this fraction, so retries of many events spread out. */
export const RETRY_JITTER_FRACTION = 0.1;

/**
 * When the relay disables a destination that keeps failing (docs/delivery.md#destination-health):
 * at least `attempts` attempts in a row failed, the first of them at least `spanMs` ago.
 * (A 410 Gone disables it at once.)
 */
export const DESTINATION_FAILURE_LIMIT = { attempts: 10, spanMs: 24 * 60 * 60 * 1000 } as const;

/** The longest wait a receiver's Retry-After can ask for; beyond it the header is capped. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a duration like `100ms`, `30s`, `2h8m` or `1d` into milliseconds; null when malformed. */
export function parseDuration(text: string): number | null {
  const trimmed = text.trim();
  if (!/^(\d+(ms|s|m|h|d))+$/.test(trimmed)) return null;
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(amount) * DURATION_UNITS_MS[unit!]!;
  return total;
}

/**
 * Parses a comma-separated retry schedule (`30s,2m,8m`); its length is the number of
 * automatic retries. Throws with the offending part named.
 */
export function parseRetrySchedule(text: string): number[] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length === 0 || parts.some((part) => part === '')) throw new Error(`"${text}" has an empty step; write durations separated by commas, e.g. 30s,2m,8m`);
  return parts.map((part) => {
    const ms = parseDuration(part);
    if (ms === null || ms <= 0) throw new Error(`"${part}" is not a duration; use a number with ms, s, m, h or d, e.g. 500ms or 2h8m`);
    return ms;
  });
}

export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = parseRetrySchedule(DEFAULT_RETRY_SCHEDULE_TEXT);

/** The wait before automatic retry number `retry` (1-based), with jitter from `random()` in [0, 1). */
export function retryDelayMs(schedule: readonly number[], retry: number, random: () => number): number {
  const base = schedule[Math.min(retry, schedule.length) - 1]!;
  return Math.round(base * (1 + (random() * 2 - 1) * RETRY_JITTER_FRACTION));
}

/** A Retry-After header (seconds or an HTTP date) as milliseconds from `nowMs`; null when absent or malformed. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/** What one attempt came to. */
export interface AttemptOutcome {
  /** A 2xx answer. */
  ok: boolean;
  /** How long the receiver asked us to wait (Retry-After), if it did. */
  retryAfterMs?: number | null;
}

export interface DeliveryState {
  status: EventStatus;
  /** Automatic attempts made so far (the first delivery and its retries). */
  autoAttempts: number;
}

export interface NextState {
  status: EventStatus;
  autoAttempts: number;
  /** When the next automatic attempt is due; null when none will be made. */
  nextAttemptAtMs: number | null;
}

/**
 * The state after an attempt. A 2xx delivers. A failed automatic attempt (`auto`, or
 * `listen`: a `hook listen` session's attempt for a CLI destination) schedules the
 * next retry (honouring Retry-After, capped) until the schedule is spent, then fails.
 * A failed replay of an event still in its schedule (pending, retrying) keeps it there
 * (one never tried stays due now); of a delivered or failed one, leaves it failed.
 */
export function stateAfterAttempt(
  state: DeliveryState,
  trigger: AttemptTrigger,
  outcome: AttemptOutcome,
  schedule: readonly number[],
  nowMs: number,
  random: () => number,
): NextState {
  // A listener's attempt is the automatic delivery of an endpoint with a CLI destination.
  const automatic = trigger === 'auto' || trigger === 'listen';
  const autoAttempts = automatic ? state.autoAttempts + 1 : state.autoAttempts;
  if (outcome.ok) return { status: 'delivered', autoAttempts, nextAttemptAtMs: null };
  // A failed replay of an event never yet tried automatically leaves it due for its first try.
  if (!automatic && state.status === 'pending' && state.autoAttempts === 0) return { status: 'pending', autoAttempts, nextAttemptAtMs: nowMs };
  const stillScheduled = automatic || state.status === 'pending' || state.status === 'retrying';
  const retry = Math.max(autoAttempts, 1); // the retry that comes next is number `autoAttempts`
  if (!stillScheduled || autoAttempts > schedule.length) return { status: 'failed', autoAttempts, nextAttemptAtMs: null };
  const scheduled = retryDelayMs(schedule, retry, random);
  const asked = Math.min(outcome.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS);
  return { status: 'retrying', autoAttempts, nextAttemptAtMs: nowMs + Math.max(scheduled, asked) };
}

/** Headers that belong to one connection, or that the relay sets itself, never forwarded. */
const NOT_FORWARDED = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'host', 'content-length', 'expect', 'http2-settings',
]);

/**
 * The error text of an attempt given up for want of an answer ends with this (delivery/sender.ts,
 * queues, oauth2): it names the setting to change. Only people read it; the attempt's kind
 * (`timeout`, issues.ts) is what code reads.
 */
export const DELIVERY_TIMEOUT_MARKER = '(HOOK_DELIVERY_TIMEOUT)';

export { isSuccessStatus } from './http-rules.ts';

/** Headers the relay adds to every delivery; same-named incoming headers are replaced. */
export const DELIVERY_HEADER_NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-hook-signature', 'x-hook-event-id', 'x-hook-attempt', 'x-hook-mirror'];

/** The header on a `hook listen` mirror copy (docs/listen.md#several-listeners): another listener's answer decides the delivery. */
export const MIRROR_HEADER = 'x-hook-mirror';

/** The relay's own headers as a set, for forwardableHeaders. */
const SET_BY_THE_RELAY: ReadonlySet<string> = new Set(DELIVERY_HEADER_NAMES);

/**
 * The headers without the hop-by-hop ones (NOT_FORWARDED, and any the Connection header
 * names), names compared without case and kept as given: what may be copied onto another
 * request (`hook listen`'s request to the local server; the relay's delivery through
 * forwardableHeaders).
 */
export function withoutHopByHop(headers: Record<string, string>): Record<string, string> {
  return headersWithout(headers, null);
}

/** The original request headers that travel with a delivery: all but hop-by-hop ones (withoutHopByHop) and those the relay sets itself (DELIVERY_HEADER_NAMES). */
export function forwardableHeaders(headers: Record<string, string>): Record<string, string> {
  return headersWithout(headers, SET_BY_THE_RELAY);
}

function headersWithout(headers: Record<string, string>, alsoDropped: ReadonlySet<string> | null): Record<string, string> {
  let connection = headers.connection;
  if (connection === undefined) for (const name in headers) if (name.toLowerCase() === 'connection') connection = headers[name];
  const named = connection === undefined ? null : new Set(connection.split(',').map((name) => name.trim().toLowerCase()).filter(Boolean));
  const out: Record<string, string> = {};
  for (const name in headers) {
    const lower = name.toLowerCase();
    if (NOT_FORWARDED.has(lower) || named?.has(lower) || alsoDropped?.has(lower)) continue;
    out[name] = headers[name]!;
  }
  return out;
}

/** IPv6's global unicast space (RFC 4291): everything else in IPv6 is never a delivery's destination. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
/** NAT64's well-known prefix (RFC 6052): a DNS64 resolver answers this for IPv4-only hosts on an IPv6-only network. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * The IPv4 address an IPv6 address stands for, where a packet to it reaches that IPv4
 * address: IPv4-mapped (`::ffff:a.b.c.d`) and NAT64's well-known prefix
 * (`64:ff9b::a.b.c.d`), both with the IPv4 address in the last 32 bits.
 */
function standsForIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  if (!address.isIPv4MappedAddress() && !address.match(NAT64_WELL_KNOWN)) return null;
  return new ipaddr.IPv4(address.toByteArray().slice(12));
}

/**
 * Whether an IP address is no place for a webhook to go. An allow list: only global
 * unicast addresses are public, as ipaddr.js classifies them against IANA's
 * special-purpose registries (private, loopback, link-local where cloud metadata lives at
 * 169.254.169.254, shared, multicast, reserved, documentation, benchmarking, AS112, AMT),
 * and in IPv6 only 2000::/3 besides. An IPv4-mapped or NAT64 (64:ff9b::/96) address is
 * judged by the IPv4 address it stands for; the other transition ranges (IPv4-compatible
 * ::/96, 64:ff9b:1::/48 local-use NAT64, 6to4 2002::/16, Teredo 2001::/32, site-local
 * fec0::/10) are refused whatever they embed: they lead into a network's own translator or
 * tunnel. docs/delivery.md#private-destinations lists them.
 */
export function isPrivateAddress(text: string): boolean {
  if (isIP(text) === 0) return true; // not an address at all (ipaddr.js would also take 127.1): never a safe destination
  const address = ipaddr.parse(text);
  if (address.kind() === 'ipv4') return address.range() !== 'unicast';
  const v6 = address as ipaddr.IPv6;
  const v4 = standsForIpv4(v6);
  if (v4) return v4.range() !== 'unicast';
  return !v6.match(GLOBAL_UNICAST_V6) || v6.range() !== 'unicast';
}

/** Host names that always mean this machine or a cloud metadata service, whatever DNS says. */
export function isPrivateHostname(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '').replace(/^\[|\]$/g, '');
  if (isIP(host)) return isPrivateAddress(host);
  return host === 'localhost' || host.endsWith('.localhost') || host === 'metadata.google.internal' || host.endsWith('.internal');
}
