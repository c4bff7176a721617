/**
 * Custom responses (docs/sources.md, "Custom responses"): what an endpoint answers the
 * sender of a stored request with, instead of the default `{"id","status"}` JSON.
 * Only a stored request gets it: refusals (404, 401 signature_invalid, 413, 429) are
 * answered as always.
 */

/** An endpoint's custom response as stored and shown. */
export interface EndpointResponse {
  /** 200–299: a custom answer still tells the sender its request was taken. */
  status: number;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** UTF-8 text; `{{event_id}}` is replaced by the stored event's id. */
  body: string;
}

export const RESPONSE_STATUS_MIN = 200;
export const RESPONSE_STATUS_MAX = 299;
export const RESPONSE_MAX_HEADERS = 20;
export const RESPONSE_MAX_HEADER_VALUE = 1000;
export const RESPONSE_MAX_BODY_BYTES = 4096;
/** Replaced in the body by the stored event's id. */
export const RESPONSE_EVENT_ID_PLACEHOLDER = '{{event_id}}';

/**
 * On the answer to every request an ingest URL took (the default JSON, a custom response,
 * a duplicate, a handshake), so a sender learns the event's id whatever the body says.
 * Set by the relay after the custom response's headers; `x-hook-*` is refused in those.
 */
export const INGEST_EVENT_ID_HEADER = 'x-hook-event-id';
/** With INGEST_EVENT_ID_HEADER: what became of the request, one of INGEST_OUTCOMES. */
export const INGEST_EVENT_STATUS_HEADER = 'x-hook-event-status';
/**
 * `pending`: stored, to be delivered. `duplicate`: its dedupe key was already stored, nothing
 * stored, the id is the original's. `handshake`: a provider's handshake, answered, stored as
 * `<provider>.handshake` and never delivered.
 */
export const INGEST_OUTCOMES = ['pending', 'duplicate', 'handshake'] as const;
export type IngestOutcome = (typeof INGEST_OUTCOMES)[number];

/**
 * Headers a custom response may set: only ones a browser does nothing dangerous with. An
 * ingest answer is served from the relay's origin, so a header a browser acts on (a
 * redirect, a cookie, a service worker's scope, a policy, CORS, cleared site data) would act
 * for the tenant on every user of that origin. Besides these, `x-*` names may be set, except
 * the browser-acted ones below and the relay's own `x-hook-*`.
 */
export const RESPONSE_ALLOWED_HEADERS = ['content-type', 'cache-control', 'expires', 'pragma', 'etag', 'last-modified', 'content-language', 'retry-after'] as const;

/** `x-*` headers browsers act on: refused like any header outside the allow list. */
export const RESPONSE_REFUSED_X_HEADERS = [
  'x-frame-options', 'x-content-type-options', 'x-xss-protection', 'x-dns-prefetch-control', 'x-permitted-cross-domain-policies', 'x-download-options', 'x-ua-compatible',
] as const;

/**
 * Media types a custom response may declare: ones browsers show as text and never run.
 * XML is here for senders that expect it (Twilio's TwiML); a browser may still run an
 * XHTML script inside XML, which the sandbox every ingest answer carries stops
 * (docs/security.md, "Tenant-controlled content on the relay's origin").
 */
export const RESPONSE_CONTENT_TYPES = ['text/plain', 'application/json', 'application/xml', 'text/xml'] as const;

/** Why a custom response may not set header `lowerName`, or null when it may. */
function headerRefusal(lowerName: string): string | null {
  if ((RESPONSE_ALLOWED_HEADERS as readonly string[]).includes(lowerName)) return null;
  if (lowerName.startsWith('x-hook-')) return 'may not be set: x-hook-* is the relay\'s own namespace';
  if (lowerName.startsWith('x-') && !(RESPONSE_REFUSED_X_HEADERS as readonly string[]).includes(lowerName)) return null;
  return `may not be set: browsers act on it, or the relay owns it. Allowed: ${RESPONSE_ALLOWED_HEADERS.join(', ')}, and x-* names (not ${RESPONSE_REFUSED_X_HEADERS.join(', ')}, x-hook-*)`;
}

/** Why `value` may not be a custom response's Content-Type, or null when it may: an inert media type, with at most a charset parameter. */
function contentTypeRefusal(value: string): string | null {
  const [type = '', ...parameters] = value.split(';').map((part) => part.trim().toLowerCase());
  const inert = (RESPONSE_CONTENT_TYPES as readonly string[]).includes(type);
  const charsetOnly = parameters.every((parameter) => /^charset=("?)[a-z0-9._-]{1,40}\1$/.test(parameter));
  return inert && charsetOnly ? null : `must be one of ${RESPONSE_CONTENT_TYPES.join(', ')}, with at most a charset (e.g. 'application/json; charset=utf-8'): a type a browser could run (text/html, image/svg+xml, …) would run on the relay's origin`;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
// Header values: visible ASCII, space and tab; no CR or LF (response splitting).
const VALUE = /^[\t\x20-\x7e]*$/;

/** What is wrong with a custom response's headers, as `[name, problem]` pairs (empty when none). */
export function responseHeaderProblems(headers: Record<string, string>): Array<[string, string]> {
  const problems: Array<[string, string]> = [];
  const names = Object.keys(headers);
  if (names.length > RESPONSE_MAX_HEADERS) problems.push(['', `has ${names.length} headers; at most ${RESPONSE_MAX_HEADERS}`]);
  const seen = new Set<string>();
  for (const name of names) {
    const lower = name.toLowerCase();
    const value = headers[name]!;
    const refusal = TOKEN.test(name) ? headerRefusal(lower) : 'is not a header name (letters, digits and !#$%&\'*+.^_`|~- only, 1–100 characters)';
    if (refusal !== null) problems.push([name, refusal]);
    else if (seen.has(lower)) problems.push([name, 'is given twice (names are case-insensitive)']);
    if (value.length > RESPONSE_MAX_HEADER_VALUE) problems.push([name, `has a value of ${value.length} characters; at most ${RESPONSE_MAX_HEADER_VALUE}`]);
    else if (!VALUE.test(value)) problems.push([name, 'has a value with a line break or a non-ASCII character']);
    else if (refusal === null && lower === 'content-type') {
      const typeRefusal = contentTypeRefusal(value);
      if (typeRefusal !== null) problems.push([name, typeRefusal]);
    }
    seen.add(lower);
  }
  return problems;
}

/**
 * The headers of a stored custom response that may be served: those a response set
 * before the allow list (a `text/html` type, a `Refresh`) are dropped, never sent, and the
 * body then goes as text/plain.
 */
export function servableResponseHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name, value]) => {
    const lower = name.toLowerCase();
    return TOKEN.test(name) && headerRefusal(lower) === null && VALUE.test(value) && (lower !== 'content-type' || contentTypeRefusal(value) === null);
  }));
}

/** The body to send for the event stored as `eventId`. */
export function renderResponseBody(body: string, eventId: string): string {
  return body.includes(RESPONSE_EVENT_ID_PLACEHOLDER) ? body.replaceAll(RESPONSE_EVENT_ID_PLACEHOLDER, eventId) : body;
}
