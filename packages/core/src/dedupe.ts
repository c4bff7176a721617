import { createHash } from 'node:crypto';

/**
 * Duplicates dropped at ingest (docs/sources.md, Duplicates): an endpoint names where a
 * request's dedupe key is, a header (GitHub's `X-GitHub-Delivery`, Standard Webhooks'
 * `webhook-id`, `Idempotency-Key`) or a top-level-or-dotted field of a JSON body (Stripe's
 * `id`). A request whose key the endpoint has already stored within its retention is
 * answered with the original event's id and stored and delivered no second time.
 */
export type DedupeSettings = { header: string } | { json_field: string };

/** Longest key kept as sent; a longer one is kept as `sha256:<hex>` of it. */
export const DEDUPE_KEY_MAX_CHARS = 200;
/** Longest header name or JSON field path an endpoint may name. */
export const DEDUPE_SOURCE_MAX_CHARS = 100;
/** An HTTP header name (RFC 9110 token). */
export const DEDUPE_HEADER_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
/** A JSON field path: names joined by dots, each letters, digits, `_` or `-` (`id`, `data.object.id`). */
export const DEDUPE_FIELD_PATTERN = '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+){0,7}$';

/** Settings as stored: a header name lower-cased (headers are kept lower-cased), a field path as given. */
export function normaliseDedupe(settings: DedupeSettings): DedupeSettings {
  return 'header' in settings ? { header: settings.header.toLowerCase() } : { json_field: settings.json_field };
}

/** Where a key is, in words: `header x-github-delivery`, `JSON field id`. */
export function describeDedupe(settings: DedupeSettings): string {
  return 'header' in settings ? `header ${settings.header}` : `JSON field ${settings.json_field}`;
}

/**
 * A request's dedupe key, or null when it has none (the header is missing or empty, the
 * body is not JSON, the field is missing or not a string or number): such a request is
 * stored like any other. `json` gives the body's parsed object (read at most once per request).
 */
export function dedupeKeyOf(
  settings: DedupeSettings,
  headers: Readonly<Record<string, string>>,
  json: () => Record<string, unknown> | null,
): string | null {
  let key: string | null = null;
  if ('header' in settings) {
    key = headers[settings.header]?.trim() || null;
  } else {
    let value: unknown = json();
    for (const name of settings.json_field.split('.')) {
      value = value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;
    }
    if (typeof value === 'string' && value.trim() !== '') key = value;
    else if (typeof value === 'number' && Number.isFinite(value)) key = String(value);
  }
  if (key === null) return null;
  // PostgreSQL text cannot hold NUL; a long key is kept by its digest so the index stays small.
  return key.length > DEDUPE_KEY_MAX_CHARS || key.includes('\u0000') ? `sha256:${createHash('sha256').update(key).digest('hex')}` : key;
}
