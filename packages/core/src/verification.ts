/**
 * Signature verification at ingest (docs/sources.md): the generic parts. Each provider's
 * published scheme is written in its own file, next to its code
 * (packages/core/src/providers/<name>.ts); the registry (providers/index.ts) builds an
 * endpoint's verifier from its settings. A verifier is made once per endpoint config (the
 * key imported once) and then costs one HMAC per request; every comparison is
 * constant-time over equal-length digests, and the signature is checked before the
 * timestamp, so only a sender holding the secret learns that its clock is off.
 */
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

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

/** An endpoint's verification settings but the provider (VerificationSettings, providers/index.ts, adds it). */
export interface SchemeSettings {
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

/** What an event records about its verification, for a provider named `P`. */
export interface VerificationResultOf<P extends string> {
  provider: P;
  verified: boolean;
  reason: VerificationReason | null;
}

/** The header a failure is about, for the 401's detail. */
export interface VerificationFailureOf<P extends string> extends VerificationResultOf<P> {
  verified: false;
  reason: VerificationReason;
  header: string;
}

export type VerifierOf<P extends string> = (headers: Readonly<Record<string, string>>, body: Buffer, nowMs: number) => VerificationResultOf<P> | VerificationFailureOf<P>;

/** The answers a provider's verifier gives, made once with the provider's name in them. */
export interface Verdicts<P extends string> {
  ok: VerificationResultOf<P>;
  fail(reason: VerificationReason, header: string): VerificationFailureOf<P>;
}

const HEX = /^[0-9a-fA-F]*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const UNIX_SECONDS = /^\d{1,12}$/;

/** Whether text is base64 (standard alphabet, padded). */
export function isBase64(text: string): boolean {
  return BASE64.test(text);
}

/** Whether a timestamp header holds Unix seconds. */
export function isUnixSeconds(text: string): boolean {
  return UNIX_SECONDS.test(text);
}

/** Decodes a signature as sent; null when it is not in that encoding. */
export function decodeSignature(text: string, encoding: HmacEncoding): Buffer | null {
  if (encoding === 'hex') return text.length % 2 === 0 && HEX.test(text) ? Buffer.from(text, 'hex') : null;
  return text.length % 4 === 0 && BASE64.test(text) ? Buffer.from(text, 'base64') : null;
}

/** Constant-time: whether any candidate equals the expected digest. Every candidate is compared, so timing tells nothing about which. */
export function anyMatches(expected: Buffer, candidates: readonly Buffer[]): boolean {
  let matched = false;
  for (const candidate of candidates) if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  return matched;
}

/** Constant-time equality of two texts, for a shared token sent as it is (GitLab's, Meta's verify token). */
export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The HMAC of `prefix` then `body` under an imported key. */
export function hmacOf(algorithm: HmacAlgorithm, key: KeyObject, prefix: string, body: Buffer): Buffer {
  const mac = createHmac(algorithm, key);
  if (prefix) mac.update(prefix);
  mac.update(body);
  return mac.digest();
}

/** Whether a signed timestamp (Unix seconds) is within tolerance of the clock; null when it is not a timestamp. */
export function withinTolerance(timestamp: string, toleranceSeconds: number, nowMs: number): boolean | null {
  if (!UNIX_SECONDS.test(timestamp)) return null;
  return Math.abs(nowMs / 1000 - Number(timestamp)) <= toleranceSeconds;
}
