/**
 * Signature verification at ingest (docs/sources.md): each provider's published scheme,
 * checked against the body's exact bytes. A verifier is made once per endpoint config
 * (the key imported once) and then costs one HMAC per request; every comparison is
 * constant-time over equal-length digests.
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

export const VERIFICATION_PROVIDERS = ['github', 'stripe', 'shopify', 'slack', 'standard-webhooks', 'hmac'] as const;
export type VerificationProvider = (typeof VERIFICATION_PROVIDERS)[number];
export const VERIFICATION_MODES = ['reject', 'flag'] as const;
export type VerificationMode = (typeof VERIFICATION_MODES)[number];
export const HMAC_ALGORITHMS = ['sha1', 'sha256', 'sha512'] as const;
export type HmacAlgorithm = (typeof HMAC_ALGORITHMS)[number];
export const HMAC_ENCODINGS = ['hex', 'base64'] as const;
export type HmacEncoding = (typeof HMAC_ENCODINGS)[number];
export const HMAC_SIGNED = ['body', 'timestamp.body'] as const;
export type HmacSigned = (typeof HMAC_SIGNED)[number];

/** Seconds a signed timestamp may differ from the relay's clock when none is configured (Stripe's, Slack's and Standard Webhooks' own default). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Why a request failed verification; the 401 names it. */
export const VERIFICATION_REASONS = ['missing_header', 'malformed_header', 'timestamp_outside_tolerance', 'no_signature_matches'] as const;
export type VerificationReason = (typeof VERIFICATION_REASONS)[number];

/** An endpoint's verification settings as stored and shown (the secret is kept apart, sealed). */
export interface VerificationSettings {
  provider: VerificationProvider;
  mode: VerificationMode;
  tolerance_seconds: number;
  /** hmac only: the header carrying the signature. */
  header?: string;
  algorithm?: HmacAlgorithm;
  encoding?: HmacEncoding;
  /** Text before the signature in the header, e.g. `sha256=`; "" for none. */
  prefix?: string;
  signed?: HmacSigned;
  /** hmac with signed `timestamp.body`: the header carrying the timestamp (Unix seconds). */
  timestamp_header?: string;
  /** The secret's last 4 characters, shown so a user can tell which secret is set. */
  secret_hint?: string;
}

/** What an event records about its verification. */
export interface VerificationResult {
  provider: VerificationProvider;
  verified: boolean;
  reason: VerificationReason | null;
}

/** The header a failure is about, for the 401's detail. */
export interface VerificationFailure extends VerificationResult {
  verified: false;
  reason: VerificationReason;
  header: string;
}

export type Verifier = (headers: Readonly<Record<string, string>>, body: Buffer, nowMs: number) => VerificationResult | VerificationFailure;

const HEX = /^[0-9a-fA-F]*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes a signature as sent; null when it is not in that encoding. */
function decode(text: string, encoding: HmacEncoding): Buffer | null {
  if (encoding === 'hex') return text.length % 2 === 0 && HEX.test(text) ? Buffer.from(text, 'hex') : null;
  return text.length % 4 === 0 && BASE64.test(text) ? Buffer.from(text, 'base64') : null;
}

/** Constant-time: whether any candidate equals the expected digest. Every candidate is compared, so timing tells nothing about which. */
function anyMatches(expected: Buffer, candidates: readonly Buffer[]): boolean {
  let matched = false;
  for (const candidate of candidates) if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  return matched;
}

function hmac(algorithm: HmacAlgorithm, key: KeyObject, prefix: string, body: Buffer): Buffer {
  const mac = createHmac(algorithm, key);
  if (prefix) mac.update(prefix);
  mac.update(body);
  return mac.digest();
}

function withinTolerance(timestamp: string, toleranceSeconds: number, nowMs: number): boolean | null {
  if (!/^\d{1,12}$/.test(timestamp)) return null;
  return Math.abs(nowMs / 1000 - Number(timestamp)) <= toleranceSeconds;
}

/** The Standard Webhooks key: the base64 after `whsec_` (or the whole secret when it has no prefix). */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/** Problems with a secret for a provider, in words; null when fine. */
export function checkVerificationSecret(provider: VerificationProvider, secret: string): string | null {
  if (secret.length === 0) return 'the secret is empty';
  if (provider === 'standard-webhooks') {
    const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
    if (!BASE64.test(encoded) || standardWebhooksKey(secret).length === 0) return "a Standard Webhooks secret is 'whsec_' followed by base64";
  }
  return null;
}

/**
 * The verifier for one endpoint's settings and secret. Each provider follows its
 * published scheme:
 * - github: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(body)>`
 * - stripe: `Stripe-Signature: t=<ts>,v1=<hex HMAC-SHA256("<ts>." + body)>[,v1=…]`, `t` within tolerance
 * - shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256(body)>`
 * - slack: `X-Slack-Signature: v0=<hex HMAC-SHA256("v0:<ts>:" + body)>`, `X-Slack-Request-Timestamp: <ts>` within tolerance
 * - standard-webhooks: `webhook-signature: v1,<base64 HMAC-SHA256("<id>.<ts>." + body)>[ v1,…]` keyed by the
 *   base64 after `whsec_`, with `webhook-id` and `webhook-timestamp` within tolerance
 * - hmac: the configured header, algorithm, encoding, prefix, and what is signed
 * The signature is checked before the timestamp, so only a sender holding the secret learns that its clock is off.
 */
export function createVerifier(settings: VerificationSettings, secret: string): Verifier {
  const { provider } = settings;
  const tolerance = settings.tolerance_seconds;
  const fail = (reason: VerificationReason, header: string): VerificationFailure => ({ provider, verified: false, reason, header });
  const ok: VerificationResult = { provider, verified: true, reason: null };

  switch (provider) {
    case 'github':
    case 'shopify': {
      const key = createSecretKey(Buffer.from(secret, 'utf8'));
      const header = provider === 'github' ? 'x-hub-signature-256' : 'x-shopify-hmac-sha256';
      const prefix = provider === 'github' ? 'sha256=' : '';
      const encoding: HmacEncoding = provider === 'github' ? 'hex' : 'base64';
      return (headers, body) => {
        const value = headers[header];
        if (value === undefined) return fail('missing_header', header);
        const signature = value.trim().startsWith(prefix) ? decode(value.trim().slice(prefix.length), encoding) : null;
        if (signature === null || signature.length !== 32) return fail('malformed_header', header);
        return anyMatches(hmac('sha256', key, '', body), [signature]) ? ok : fail('no_signature_matches', header);
      };
    }
    case 'stripe': {
      const key = createSecretKey(Buffer.from(secret, 'utf8'));
      const header = 'stripe-signature';
      return (headers, body, nowMs) => {
        const value = headers[header];
        if (value === undefined) return fail('missing_header', header);
        let timestamp: string | undefined;
        const signatures: Buffer[] = [];
        for (const item of value.split(',')) {
          const at = item.indexOf('=');
          const name = item.slice(0, at).trim();
          const text = item.slice(at + 1).trim();
          if (name === 't') timestamp = text;
          else if (name === 'v1') {
            const signature = decode(text, 'hex');
            if (signature) signatures.push(signature);
          }
        }
        if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp) || signatures.length === 0) return fail('malformed_header', header);
        if (!anyMatches(hmac('sha256', key, `${timestamp}.`, body), signatures)) return fail('no_signature_matches', header);
        return withinTolerance(timestamp, tolerance, nowMs) ? ok : fail('timestamp_outside_tolerance', header);
      };
    }
    case 'slack': {
      const key = createSecretKey(Buffer.from(secret, 'utf8'));
      return (headers, body, nowMs) => {
        const value = headers['x-slack-signature'];
        const timestamp = headers['x-slack-request-timestamp'];
        if (value === undefined) return fail('missing_header', 'x-slack-signature');
        if (timestamp === undefined) return fail('missing_header', 'x-slack-request-timestamp');
        if (!/^\d{1,12}$/.test(timestamp.trim())) return fail('malformed_header', 'x-slack-request-timestamp');
        const signature = value.trim().startsWith('v0=') ? decode(value.trim().slice(3), 'hex') : null;
        if (signature === null || signature.length !== 32) return fail('malformed_header', 'x-slack-signature');
        if (!anyMatches(hmac('sha256', key, `v0:${timestamp.trim()}:`, body), [signature])) return fail('no_signature_matches', 'x-slack-signature');
        return withinTolerance(timestamp.trim(), tolerance, nowMs) ? ok : fail('timestamp_outside_tolerance', 'x-slack-request-timestamp');
      };
    }
    case 'standard-webhooks': {
      const key = createSecretKey(standardWebhooksKey(secret));
      return (headers, body, nowMs) => {
        for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) if (headers[name] === undefined) return fail('missing_header', name);
        const id = headers['webhook-id']!.trim();
        const timestamp = headers['webhook-timestamp']!.trim();
        if (!/^\d{1,12}$/.test(timestamp)) return fail('malformed_header', 'webhook-timestamp');
        const signatures: Buffer[] = [];
        for (const item of headers['webhook-signature']!.trim().split(' ')) {
          const [version, text] = item.split(',', 2);
          const signature = version === 'v1' && text !== undefined ? decode(text, 'base64') : null;
          if (signature) signatures.push(signature);
        }
        if (signatures.length === 0) return fail('malformed_header', 'webhook-signature');
        if (!anyMatches(hmac('sha256', key, `${id}.${timestamp}.`, body), signatures)) return fail('no_signature_matches', 'webhook-signature');
        return withinTolerance(timestamp, tolerance, nowMs) ? ok : fail('timestamp_outside_tolerance', 'webhook-timestamp');
      };
    }
    case 'hmac': {
      const key = createSecretKey(Buffer.from(secret, 'utf8'));
      const header = settings.header!.toLowerCase();
      const algorithm = settings.algorithm ?? 'sha256';
      const encoding = settings.encoding ?? 'hex';
      const prefix = settings.prefix ?? '';
      const timestampHeader = settings.signed === 'timestamp.body' ? settings.timestamp_header!.toLowerCase() : null;
      return (headers, body, nowMs) => {
        const value = headers[header];
        if (value === undefined) return fail('missing_header', header);
        let timestamp: string | null = null;
        if (timestampHeader !== null) {
          const sent = headers[timestampHeader];
          if (sent === undefined) return fail('missing_header', timestampHeader);
          timestamp = sent.trim();
          if (!/^\d{1,12}$/.test(timestamp)) return fail('malformed_header', timestampHeader);
        }
        const signature = value.trim().startsWith(prefix) ? decode(value.trim().slice(prefix.length), encoding) : null;
        if (signature === null || signature.length === 0) return fail('malformed_header', header);
        if (!anyMatches(hmac(algorithm, key, timestamp === null ? '' : `${timestamp}.`, body), [signature])) return fail('no_signature_matches', header);
        return timestamp === null || withinTolerance(timestamp, tolerance, nowMs) ? ok : fail('timestamp_outside_tolerance', timestampHeader!);
      };
    }
  }
}
