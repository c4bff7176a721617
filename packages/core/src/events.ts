import { isJsonContentType } from './http-rules.ts';
import { PROVIDER_BODY_TYPES, PROVIDER_TYPE_HEADERS } from './providers/index.ts';

/** Where an event is in its delivery (DESIGN.md §3); `filtered`: its endpoint's filter did not match, so it was not delivered (docs/filters.md). */
export const EVENT_STATUSES = ['pending', 'delivered', 'retrying', 'failed', 'filtered'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/**
 * What "failing" means to a person: failed for good, or failed and retrying. The default of
 * bulk replay, and what `hook events list --status failed,retrying` finds.
 */
export const FAILING_STATUSES: readonly EventStatus[] = ['failed', 'retrying'];

/** A status filter as the API takes it: one status, or several separated by commas (`failed,retrying`). */
export const EVENT_STATUS_LIST_PATTERN = `^(${EVENT_STATUSES.join('|')})(,(${EVENT_STATUSES.join('|')}))*$`;

/** The statuses of a filter matching EVENT_STATUS_LIST_PATTERN, each once, in the order given. */
export function parseEventStatusList(text: string): EventStatus[] {
  return [...new Set(text.split(','))] as EventStatus[];
}

/** Endpoint states: `paused` accepts events but holds delivery; `disabled` refuses them. */
export const ENDPOINT_STATUSES = ['active', 'paused', 'disabled'] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];

/**
 * Where a destination sends: a URL, `cli` (a `hook listen` session), or a message broker
 * (QUEUE_DESTINATION_TYPES, docs/delivery.md#queue-destinations).
 */
export const DESTINATION_TYPES = ['url', 'cli', 'amqp', 'nats', 'redis', 'mqtt'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

/**
 * Most events one page of `GET /v1/events` looks through, from the cursor on: so a page
 * costs the same at any account size however rare its match (a status, a payload search
 * `q`, a type beside an endpoint), and a short page carries a `next_cursor` on. Sized for
 * the dearest walk to stay well under 50 ms a page: an endpoint's events, scattered over
 * the account's history, each with its status worked out from its deliveries, cost about
 * 20 µs an event at 10 M events (npm run bench:scale: 43 ms of execution for 2,000, which
 * with planning and serving missed the goal for status=retrying; 1,000 leaves room).
 */
export const EVENT_LIST_WINDOW = 1_000;

/** What caused a delivery attempt. */
export const ATTEMPT_TRIGGERS = ['auto', 'replay', 'listen'] as const;
export type AttemptTrigger = (typeof ATTEMPT_TRIGGERS)[number];

/**
 * Why an attempt got no HTTP answer (attemptErrorClass, issues.ts): `timeout` (none
 * within HOOK_DELIVERY_TIMEOUT), `transformation_failed` (nothing was sent) or
 * `network_error` (refused, reset, DNS, a private address, a listener's local server unreachable).
 */
export const ATTEMPT_ERROR_CLASSES = ['timeout', 'network_error', 'transformation_failed'] as const;
export type AttemptErrorClass = (typeof ATTEMPT_ERROR_CLASSES)[number];

/** Longest event type kept; a longer one is cut, so a hostile header cannot bloat indexes. */
export const EVENT_TYPE_MAX_CHARS = 200;

/** A type as stored: at most EVENT_TYPE_MAX_CHARS, without NUL characters (PostgreSQL text cannot hold them). */
function cleanType(type: string): string {
  return type.replaceAll('\u0000', '').slice(0, EVENT_TYPE_MAX_CHARS);
}

/** Largest body searched for top-level JSON fields (`type`, a dedupe key); bigger bodies keep only the header's type. */
const TYPE_SNIFF_MAX_BYTES = 1024 * 1024;

export { isJsonContentType };

/**
 * A JSON body's top-level object: parsed when the content type is JSON and the body is
 * at most 1 MiB; null otherwise, or when it is not an object.
 */
export function readJsonObject(contentType: string | null | undefined, body: Buffer): Record<string, unknown> | null {
  if (!isJsonContentType(contentType) || body.length === 0 || body.length > TYPE_SNIFF_MAX_BYTES) return null;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    // A body that claims to be JSON and is not is still accepted as it is; it just has no fields.
    return null;
  }
}

/**
 * The request headers that name an event's type (docs/api.md#event-type), in the order
 * they are read: Hook's own, then each provider's (its file's `typeHeader`,
 * providers/index.ts). `withAction`: the sender also names what happened in the body's
 * top-level `action` (GitHub: `pull_request` and `"action": "opened"` is
 * `pull_request.opened`, as GitHub's own Octokit names it). A fixed list, so ingest looks
 * up a few names and no more.
 */
const EVENT_TYPE_HEADERS: ReadonlyArray<{ header: string; withAction: boolean }> = [
  // Anyone's: `hook send --type`, the playground, MCP send_test_event.
  { header: 'x-event-type', withAction: false },
  ...PROVIDER_TYPE_HEADERS,
];

/** A trimmed non-blank string, else null. */
function textOf(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

/**
 * An event's type: the first of EVENT_TYPE_HEADERS present (with GitHub's `action`
 * appended), else from a JSON body's top level: a provider's own rule first (Slack's
 * `event_callback` envelope gives its inner `event.type`), else its string `type` (Stripe,
 * Standard Webhooks, Slack's `url_verification`); else null. The body is only read, never rewritten, and
 * only when a rule needs it. `json` gives the parsed body when the caller has it already
 * (ingest parses a body at most once).
 */
export function extractEventType(
  headers: Readonly<Record<string, string>>,
  contentType: string | undefined,
  body: Buffer,
  json: () => Record<string, unknown> | null = () => readJsonObject(contentType, body),
): string | null {
  for (const { header, withAction } of EVENT_TYPE_HEADERS) {
    const named = textOf(headers[header]);
    if (named === null) continue;
    const action = withAction ? textOf(json()?.action) : null;
    return cleanType(action === null ? named : `${named}.${action}`);
  }
  const object = json();
  if (object === null) return null;
  for (const typeOf of PROVIDER_BODY_TYPES) {
    const named = typeOf(object);
    if (named !== null) return cleanType(named);
  }
  const type = textOf(object.type);
  return type === null ? null : cleanType(type);
}

/** How a body travels in JSON: as text when it is valid UTF-8, else base64. */
export type BodyEncoding = 'utf8' | 'base64';

/**
 * The first `limit` bytes of a body, or fewer so that a UTF-8 character is never cut in
 * two (a cut character would turn text into base64): what `GET /v1/events/{id}?body_limit=`
 * returns for a reader that shows only the start of a body.
 */
export function bodyStart(body: Buffer, limit: number): Buffer {
  if (body.length <= limit) return body;
  let end = limit;
  // Back off over continuation bytes (10xxxxxx) to the start of the character they belong to, at most 3.
  for (let back = 0; back < 3 && end > 0 && (body[end]! & 0xc0) === 0x80; back++) end--;
  return body.subarray(0, end);
}

export function encodeBody(body: Buffer): { body: string; body_encoding: BodyEncoding } {
  const decoded = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  try {
    return { body: decoded.decode(body), body_encoding: 'utf8' };
  } catch {
    return { body: body.toString('base64'), body_encoding: 'base64' };
  }
}
