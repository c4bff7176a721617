/**
 * What an attempt keeps of the exchange it made (docs/api.md#attempts): the request the
 * relay sent and the receiver's answer. Every part is bounded here, once, for every kind of
 * destination: a receiver answering 100 KiB of headers, or a transformation making a
 * megabyte body, costs each attempt row at most a few KiB.
 */
import { bodyStart, encodeBody, type BodyEncoding } from './events.ts';

/**
 * Bytes of a body kept with an attempt: the receiver's answer (`response_body`), and the
 * request's body when a transformation changed it. One bound, so "how much of an exchange is
 * kept" is one decision.
 */
export const ATTEMPT_BODY_MAX_BYTES = 4096;
/** Bytes of names and values kept of one side's headers (the request sent, or the answer's). */
export const ATTEMPT_HEADERS_MAX_BYTES = 8 * 1024;
/** Bytes kept of one header's value; a longer value is cut there and ends with "…". */
export const ATTEMPT_HEADER_VALUE_MAX_BYTES = 1024;
/**
 * The name under which boundHeaders says how many headers did not fit ("3 more headers not
 * kept"). Not a legal header name (RFC 9110 tokens are ASCII), so it never stands for one.
 */
export const HEADERS_NOT_KEPT = '…';
/** What a secret header's value (a destination's Authorization, its static auth headers) is kept as. */
export const REDACTED_HEADER_VALUE = '[redacted]';

/**
 * Headers as an attempt keeps them: names lower-cased (a repeated name's values joined with
 * ", "), each value cut at ATTEMPT_HEADER_VALUE_MAX_BYTES, and headers kept in the order
 * given while names and values together fit in ATTEMPT_HEADERS_MAX_BYTES; those that do not
 * fit are counted under HEADERS_NOT_KEPT. Text that PostgreSQL's jsonb cannot hold (NUL, a
 * lone surrogate) becomes U+FFFD.
 */
export function boundHeaders(headers: Record<string, string | readonly string[] | undefined>): Record<string, string> {
  // One pass, no intermediate map: it runs for both sides of every attempt. No prototype: a
  // header may be named constructor or __proto__.
  const kept: Record<string, string> = Object.create(null);
  let bytes = 0;
  let notKept = 0;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = storable(name.toLowerCase());
    const before = kept[lower];
    const text = storable(typeof value === 'string' ? value : value.join(', '));
    const cut = cutValue(before === undefined ? text : `${before}, ${text}`);
    const size = (before === undefined ? Buffer.byteLength(lower) : -Buffer.byteLength(before)) + Buffer.byteLength(cut);
    if (bytes + size > ATTEMPT_HEADERS_MAX_BYTES) {
      notKept++;
      continue;
    }
    bytes += size;
    kept[lower] = cut;
  }
  if (notKept > 0) kept[HEADERS_NOT_KEPT] = `${notKept} more header${notKept === 1 ? '' : 's'} not kept`;
  return kept;
}

function cutValue(value: string): string {
  // A UTF-8 character is at most 3 bytes per UTF-16 unit: short values need no counting.
  if (value.length * 3 <= ATTEMPT_HEADER_VALUE_MAX_BYTES || Buffer.byteLength(value) <= ATTEMPT_HEADER_VALUE_MAX_BYTES) return value;
  return `${bodyStart(Buffer.from(value, 'utf8'), ATTEMPT_HEADER_VALUE_MAX_BYTES).toString('utf8')}…`;
}

function storable(text: string): string {
  return text.isWellFormed() && !text.includes('\u0000') ? text : text.toWellFormed().replaceAll('\u0000', '\uFFFD');
}

/**
 * What an attempt keeps of the receiver's answer (`response_body`), whoever read it (the
 * relay's sender, a `hook listen` local server's answer, as the CLI reads it and as the
 * relay stores what the CLI sent): its first `maxBytes` (ATTEMPT_BODY_MAX_BYTES) as text,
 * never half a UTF-8 character, NUL as U+FFFD (PostgreSQL text cannot hold it, and a
 * receiver may send anything). Text is cut as its UTF-8 bytes would be.
 */
export function keptResponseBody(body: Buffer | string, maxBytes = ATTEMPT_BODY_MAX_BYTES): string {
  let text: string;
  if (typeof body === 'string') {
    // A UTF-8 character is at most 3 bytes per UTF-16 unit: short text needs no counting.
    text = body.length * 3 <= maxBytes || Buffer.byteLength(body) <= maxBytes ? body : bodyStart(Buffer.from(body, 'utf8'), maxBytes).toString('utf8');
  } else {
    text = (body.length <= maxBytes ? body : bodyStart(body, maxBytes)).toString('utf8');
  }
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/**
 * The bytes stored of a request body a transformation made: one byte more than
 * ATTEMPT_BODY_MAX_BYTES, so that reading it back (keptBody) can tell a body that was cut
 * from one that was exactly that long.
 */
export function storedRequestBody(body: Buffer): Buffer {
  return body.length <= ATTEMPT_BODY_MAX_BYTES + 1 ? body : body.subarray(0, ATTEMPT_BODY_MAX_BYTES + 1);
}

/** A body stored by storedRequestBody as the API shows it: at most ATTEMPT_BODY_MAX_BYTES (never half a UTF-8 character), and whether it was cut. */
export function keptBody(stored: Buffer): { body: string; body_encoding: BodyEncoding; body_truncated: boolean } {
  const truncated = stored.length > ATTEMPT_BODY_MAX_BYTES;
  return { ...encodeBody(truncated ? bodyStart(stored, ATTEMPT_BODY_MAX_BYTES) : stored), body_truncated: truncated };
}
