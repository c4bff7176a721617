import { timingSafeEqual, verify, type KeyObject } from 'node:crypto';
import { importSigningPublicKey, signPayload } from '@hook/core';

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
 * `secret` is the destination's `whsec_…` secret (a string without the prefix is taken
 * as bare base64) for the `v1` scheme (HMAC-SHA256), or its `whpk_…` public key for
 * `v1a` (ed25519: `whpk_` and the base64 of the 32 raw public key bytes). During a
 * rotation pass both, e.g. `[secret, previous_secret]`, `[public_key, previous public key]`
 * or one of each while the scheme changes: a delivery verifies if any `v1,` signature
 * matches any `whsec_` secret or any `v1a,` signature verifies under any `whpk_` key.
 *
 * A `whsk_…` private key is refused with a TypeError rather than turned into its public
 * key: the point of `v1a` is that a receiver never holds what can sign, so a receiver
 * holding one should be told so, not quietly served.
 *
 * Throws `WebhookVerificationError` when the delivery does not verify, and
 * `TypeError` when called wrongly (no secret, a private or malformed key, a parsed
 * body), which is a bug in the receiver rather than a bad delivery.
 */
export function verifyWebhook(
  rawBody: Buffer | Uint8Array | string,
  headers: WebhookHeaders,
  secret: string | string[],
  options: VerifyWebhookOptions = {},
): VerifiedWebhook {
  const body = rawBodyBytes(rawBody);
  const candidates = typeof secret === 'string' ? [secret] : secret;
  if (candidates.length === 0 || candidates.some((candidate) => typeof candidate !== 'string' || candidate === '' || candidate === 'whsec_' || candidate === 'whpk_')) {
    throw new TypeError(
      "verifyWebhook needs the endpoint's signing secret (whsec_…), or an array of secrets during a rotation; got an empty secret. " +
        'Get it with GET /v1/endpoints/{id}/secret; for a v1a destination pass its whpk_… key (GET /v1/destinations/{id}/secret, public_key).',
    );
  }
  if (candidates.some((candidate) => candidate.startsWith('whsk_'))) {
    throw new TypeError(
      'verifyWebhook takes the public key (whpk_…) of a v1a destination, not its private signing key (whsk_…): a receiver ' +
        'should never hold the key that signs. Get the public key with GET /v1/destinations/{id}/secret (public_key).',
    );
  }
  const secrets = candidates.filter((candidate) => !candidate.startsWith('whpk_'));
  const publicKeys = candidates.filter((candidate) => candidate.startsWith('whpk_')).map(publicKeyOf);

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
  const givenSignatures = signatureHeader.split(' ').filter((candidate) => candidate !== '');
  const verified = { id, timestamp: new Date(timestampSeconds * 1000) };
  if (secrets.length > 0) {
    const givenBytes = givenSignatures.map((candidate) => Buffer.from(candidate));
    for (const candidateSecret of secrets) {
      const expected = Buffer.from(signPayload(candidateSecret, id, timestampSeconds, body));
      for (const given of givenBytes) {
        if (given.length === expected.length && timingSafeEqual(given, expected)) return verified;
      }
    }
  }
  if (publicKeys.length > 0) {
    const ed25519Signatures = givenSignatures.flatMap(v1aSignatureBytes);
    if (ed25519Signatures.length > 0) {
      const signed = Buffer.concat([Buffer.from(`${id}.${timestampSeconds}.`), body]);
      for (const publicKey of publicKeys) {
        for (const signature of ed25519Signatures) {
          if (verify(null, signed, publicKey, signature)) return verified;
        }
      }
    }
  }
  if (publicKeys.length === 0) {
    throw new WebhookVerificationError(
      'no_matching_signature',
      `No signature in the webhook-signature header matches ${secrets.length === 1 ? 'the signing secret' : `any of the ${secrets.length} signing secrets`}. ` +
        "Pass the endpoint's current secret from GET /v1/endpoints/{id}/secret (during a rotation, both secret and previous_secret), " +
        'and pass the request body exactly as received (a Buffer of the raw bytes, e.g. express.raw()); a body that was parsed ' +
        'and serialised again as JSON does not match.',
    );
  }
  const keyCount = candidates.length;
  throw new WebhookVerificationError(
    'no_matching_signature',
    `No signature in the webhook-signature header verifies under ${keyCount === 1 ? 'the public key' : `any of the ${keyCount} keys and secrets`}. ` +
      "Pass the destination's current key from GET /v1/destinations/{id}/secret (public_key for v1a, whpk_…; secret for v1, whsec_…; " +
      'during a rotation the previous one too), and pass the request body exactly as received (a Buffer of the raw bytes, e.g. ' +
      'express.raw()); a body that was parsed and serialised again as JSON does not match.',
  );
}

/** A `whpk_` key, imported; a TypeError that names the problem when it is not 32 bytes of base64. */
function publicKeyOf(publicKey: string): KeyObject {
  try {
    return importSigningPublicKey(publicKey);
  } catch (error) {
    throw new TypeError(
      `verifyWebhook got a malformed public key '${publicKey.slice(0, 12)}…' (${(error as Error).message}). ` +
        'Copy public_key from GET /v1/destinations/{id}/secret whole.',
    );
  }
}

/** The 64 bytes of a `v1a,<base64>` signature; none for another version or a signature that is not canonical base64 of 64 bytes. */
function v1aSignatureBytes(candidate: string): Buffer[] {
  if (!candidate.startsWith('v1a,')) return [];
  const encoded = candidate.slice('v1a,'.length);
  const bytes = Buffer.from(encoded, 'base64');
  return bytes.length === 64 && bytes.toString('base64') === encoded ? [bytes] : [];
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
