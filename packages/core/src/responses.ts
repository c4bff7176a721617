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
 * Headers a custom response may not set: hop-by-hop ones and those the relay owns
 * (framing, cookies, the date), so an endpoint cannot break the connection or plant
 * cookies on the relay's domain.
 */
export const RESPONSE_FORBIDDEN_HEADERS = [
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade',
  'content-length', 'content-encoding', 'set-cookie', 'set-cookie2', 'date', 'server', 'alt-svc', 'strict-transport-security',
] as const;

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
    if (!TOKEN.test(name)) problems.push([name, 'is not a header name (letters, digits and !#$%&\'*+.^_`|~- only, 1–100 characters)']);
    else if ((RESPONSE_FORBIDDEN_HEADERS as readonly string[]).includes(lower)) problems.push([name, 'may not be set: the relay owns it (hop-by-hop, framing, cookies or date)']);
    else if (seen.has(lower)) problems.push([name, 'is given twice (names are case-insensitive)']);
    if (value.length > RESPONSE_MAX_HEADER_VALUE) problems.push([name, `has a value of ${value.length} characters; at most ${RESPONSE_MAX_HEADER_VALUE}`]);
    else if (!VALUE.test(value)) problems.push([name, 'has a value with a line break or a non-ASCII character']);
    seen.add(lower);
  }
  return problems;
}

/** The body to send for the event stored as `eventId`. */
export function renderResponseBody(body: string, eventId: string): string {
  return body.includes(RESPONSE_EVENT_ID_PLACEHOLDER) ? body.replaceAll(RESPONSE_EVENT_ID_PLACEHOLDER, eventId) : body;
}
