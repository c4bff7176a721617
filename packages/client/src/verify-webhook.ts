import { timingSafeEqual } from 'node:crypto';
import { signPayload } from '@hook/core';

/** How far a delivery's `webhook-timestamp` may be from the receiver's clock, in seconds (Standard Webhooks default). */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

/** Why a delivery failed verification. */
export type WebhookVerificationFailure =
  | 'missing_headers'
  | 'invalid_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'no_matching_signature';

/** A delivery failed verification: answer it with a 4xx and do not act on it. `reason` says which check failed. */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationFailure;

  constructor(reason: WebhookVerificationFailure, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

/** What a verified delivery says about itself. */
export interface VerifiedWebhook {
  /** The `webhook-id` header: the event id, the same on every attempt. Use it to drop duplicates (delivery is at-least-once). */
  id: string;
  /** The `webhook-timestamp` header: when this attempt was signed. */
  timestamp: Date;
}

export interface VerifyWebhookOptions {
  /** Largest accepted distance between `webhook-timestamp` and now, either way, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The current time in milliseconds since the epoch, like `Date.now` (for tests). */
  now?: () => number;
}

/** Request headers as a `Headers` instance (fetch, undici) or a plain object (`req.headers` in Node, Express, Fastify). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/**
 * Checks that a delivery was signed by Hook with one of `secret` (Standard Webhooks:
 * `webhook-id`, `webhook-timestamp`, `webhook-signature`) and was signed recently.
 *
 * `rawBody` must be the request body's bytes exactly as received. A body that was
 * parsed and serialised again (`JSON.stringify(req.body)`) differs in spacing, key
 * order or escaping and will not verify. A string is taken as its UTF-8 bytes, which
 * is only right if the body was UTF-8 text and decoded without changes.
 *
 * `secret` is the endpoint's `whsec_…` secret (a string without the prefix is taken
 * as bare base64). During a secret rotation pass both `[secret, previous_secret]`:
 * a delivery verifies if any of its signatures matches any of the secrets.
 *
 * Throws `WebhookVerificationError` when the delivery does not verify, and
 * `TypeError` when called wrongly (no secret, a parsed body), which is a bug in the
 * receiver rather than a bad delivery.
 */
export function verifyWebhook(
  rawBody: Buffer | Uint8Array | string,
  headers: WebhookHeaders,
  secret: string | string[],
  options: VerifyWebhookOptions = {},
): VerifiedWebhook {
  const body = rawBodyBytes(rawBody);
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0 || secrets.some((candidate) => typeof candidate !== 'string' || candidate === '' || candidate === 'whsec_')) {
    throw new TypeError(
      "verifyWebhook needs the endpoint's signing secret (whsec_…), or an array of secrets during a rotation; got an empty secret. " +
        'Get it with GET /v1/endpoints/{id}/secret.',
    );
  }

  const id = headerValue(headers, 'webhook-id');
  const timestampHeader = headerValue(headers, 'webhook-timestamp');
  const signatureHeader = headerValue(headers, 'webhook-signature');
  if (id === undefined || timestampHeader === undefined || signatureHeader === undefined) {
    const present = { 'webhook-id': id, 'webhook-timestamp': timestampHeader, 'webhook-signature': signatureHeader };
    const missing = Object.entries(present).flatMap(([name, value]) => (value === undefined ? [name] : []));
    throw new WebhookVerificationError(
      'missing_headers',
      `The request has no ${missing.join(', ')} header. Hook signs every delivery with webhook-id, webhook-timestamp and ` +
        'webhook-signature: check that the request came from Hook and that no proxy in front of the receiver strips these headers.',
    );
  }

  // Standard Webhooks timestamps are integer seconds since the epoch.
  const timestampSeconds = /^\d{1,15}$/.test(timestampHeader) ? Number(timestampHeader) : Number.NaN;
  if (!Number.isSafeInteger(timestampSeconds)) {
    throw new WebhookVerificationError(
      'invalid_timestamp',
      `The webhook-timestamp header '${timestampHeader.slice(0, 40)}' is not a Unix time in whole seconds. ` +
        'Check that the request came from Hook and that nothing rewrites the header on the way.',
    );
  }

  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now?.() ?? Date.now()) / 1000);
  const skewSeconds = nowSeconds - timestampSeconds;
  if (Math.abs(skewSeconds) > toleranceSeconds) {
    const direction = skewSeconds > 0 ? 'in the past' : 'in the future';
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `The webhook-timestamp is ${Math.abs(skewSeconds)} s ${direction}, more than the ${toleranceSeconds} s tolerance. ` +
        'Either this is an old delivery being replayed by someone else, or the receiver\'s clock is wrong: keep it in sync (NTP). ' +
        'Hook signs every attempt when it sends it, so genuine retries carry a fresh timestamp.',
    );
  }

  // Several space-separated signatures arrive while a secret rotation's grace period lasts.
  const givenSignatures = signatureHeader.split(' ').filter((candidate) => candidate !== '').map((candidate) => Buffer.from(candidate));
  for (const candidateSecret of secrets) {
    const expected = Buffer.from(signPayload(candidateSecret, id, timestampSeconds, body));
    for (const given of givenSignatures) {
      if (given.length === expected.length && timingSafeEqual(given, expected)) {
        return { id, timestamp: new Date(timestampSeconds * 1000) };
      }
    }
  }
  throw new WebhookVerificationError(
    'no_matching_signature',
    `No signature in the webhook-signature header matches ${secrets.length === 1 ? 'the signing secret' : `any of the ${secrets.length} signing secrets`}. ` +
      "Pass the endpoint's current secret from GET /v1/endpoints/{id}/secret (during a rotation, both secret and previous_secret), " +
      'and pass the request body exactly as received (a Buffer of the raw bytes, e.g. express.raw()); a body that was parsed ' +
      'and serialised again as JSON does not match.',
  );
}

/** The body as bytes, refusing what is clearly an already-parsed body. */
function rawBodyBytes(rawBody: Buffer | Uint8Array | string): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (Buffer.isBuffer(rawBody)) return rawBody;
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  // Reachable from JavaScript, or with `req.body` typed as any: the usual cause is a JSON body parser.
  throw new TypeError(
    `verifyWebhook needs the raw request body (Buffer, Uint8Array or string), got ${rawBody === null ? 'null' : typeof rawBody}. ` +
      "A body parser probably turned it into an object already: read the raw bytes instead (Express: express.raw({ type: '*/*' }); " +
      'Fastify: a content-type parser with parseAs: "buffer").',
  );
}

/** One header's value, whatever the case of its name; the first value if it was sent more than once; undefined if absent or empty. */
function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  let value: string | string[] | null | undefined;
  if (isHeadersInstance(headers)) {
    value = headers.get(name);
  } else {
    value = headers[name];
    if (value === undefined) {
      const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
      value = key === undefined ? undefined : headers[key];
    }
  }
  const first = Array.isArray(value) ? value[0] : value;
  const trimmed = first?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/** A fetch `Headers`, also one from another copy of undici, where `instanceof` would fail. */
function isHeadersInstance(headers: WebhookHeaders): headers is Headers {
  return typeof (headers as { get?: unknown }).get === 'function';
}
