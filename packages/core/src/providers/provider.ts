/**
 * What a provider file exports (docs/sources.md#adding-a-provider). One file per provider,
 * `packages/core/src/providers/<name>.ts`, holds everything Hook knows about that sender:
 * how to verify what it signs (its published scheme written next to the code), how to sign
 * as it does (`hook trigger`, `hook send --resign`), the handshake it sends, where it names
 * an event's type and where it puts a key for dropping duplicates, and how it shapes the
 * samples `hook trigger` sends. Every part is optional; the registry (index.ts) lists the
 * providers, and every provider list (the REST enums, the CLI's choices, the docs checks)
 * is derived from it.
 */
import { createSecretKey } from 'node:crypto';
import type { DedupeSettings } from '../dedupe.ts';
import type { HandshakeResponder } from '../handshakes.ts';
import { anyMatches, decodeSignature, hmacOf, type HmacEncoding, type SchemeSettings, type Verdicts, type VerifierOf } from '../verification.ts';

export interface ProviderVerification {
  /**
   * The verifier for one endpoint's settings and secret, built once per endpoint
   * configuration (import the key here, not per request). Compare in constant time, and
   * check the signature before the timestamp.
   */
  create<P extends string>(settings: SchemeSettings, secret: string, verdicts: Verdicts<P>): VerifierOf<P>;
  /** Problems with a secret's shape, in words; null when fine. An empty secret is refused for every provider. */
  checkSecret?(secret: string): string | null;
}

/**
 * The verification of a scheme that signs the body alone: one header holding the
 * HMAC-SHA256 of the body under the secret, in hex or base64, after a fixed prefix
 * (GitHub's `sha256=`; Shopify has none). No timestamp, so nothing expires.
 */
export function bodyHmacSha256(header: string, encoding: HmacEncoding, prefix = ''): ProviderVerification {
  return {
    create(_settings, secret, { ok, fail }) {
      const key = createSecretKey(Buffer.from(secret, 'utf8'));
      return (headers, body) => {
        const value = headers[header];
        if (value === undefined) return fail('missing_header', header);
        const text = value.trim();
        const signature = text.startsWith(prefix) ? decodeSignature(text.slice(prefix.length), encoding) : null;
        if (signature === null || signature.length !== 32) return fail('malformed_header', header);
        return anyMatches(hmacOf('sha256', key, '', body), [signature]) ? ok : fail('no_signature_matches', header);
      };
    },
  };
}

export interface ProviderSigner {
  /** Where the signature goes, for people: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`. */
  description: string;
  /** The headers (lower-case) a request this provider signed holds, its signature first: a capture without them was not signed by it. */
  headers: readonly string[];
  /** Whether a timestamp is signed: such a capture expires, and `hook send --resign` signs it again. */
  signsTimestamp: boolean;
  /** The signature headers (lower-case) for `body` at `timestampSeconds`; `captured` is a re-signed request's own headers. */
  sign(secret: string, body: Buffer, timestampSeconds: number, captured: Readonly<Record<string, string>>): Record<string, string>;
}

export interface ProviderHandshake {
  /** Whether the responder needs a secret (Meta's verify token, Zoom's secret token, X's consumer secret). */
  needsSecret: boolean;
  /** What the documentation says to answer; `secret` is null when `needsSecret` is false. */
  create(secret: string | null): HandshakeResponder;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** The clock and randomness a sample is made fresh with. */
export interface SampleContext {
  nowMs: number;
  uuid(): string;
  /** `length` characters drawn from `alphabet`. */
  token(length: number, alphabet: string): string;
  /** The endpoint's receiving URL (GitHub's ping names the URL its hook posts to). */
  endpointUrl: string;
}

/** The request a provider would send: its headers (as the provider spells them) and the exact body bytes, signed. */
export interface SampleRequest {
  headers: Record<string, string>;
  body: Buffer;
}

/** The samples `hook trigger` sends; each event's payload is apps/cli/fixtures/<provider>/<event>.json. */
export interface ProviderSamples {
  /** The test secret used without --secret: fixed, so a handler is configured once. */
  defaultSecret: string;
  /** The provider's own id for one delivery, which handlers use to drop repeats. */
  deliveryIdHeader: string;
  /** The event names as the provider calls them, in the order `hook trigger --list` shows them. */
  events: ReadonlyArray<{ name: string; description: string }>;
  /** The request for `event`, from `payload` (a fresh copy of its fixture, free to change), signed with `secret`. */
  request(event: string, payload: JsonObject, secret: string, context: SampleContext): SampleRequest;
}

export interface Provider {
  /** The name in the API, the CLI and the docs: lower-case. */
  name: string;
  /** The name for people: `GitHub`. */
  title: string;
  verification?: ProviderVerification;
  signer?: ProviderSigner;
  /** A verifying provider without a signer: why Hook cannot sign as it, for `hook send --resign`'s refusal. */
  whyNoSigner?: string;
  handshake?: ProviderHandshake;
  /**
   * The request header naming an event's type (docs/api.md#event-type). `withAction`: the
   * body's top-level `action` is appended (GitHub: `pull_request.opened`).
   */
  typeHeader?: { header: string; withAction: boolean };
  /** An event's type read from a JSON body's top level, for a sender that names it there in its own way; null when not its shape. */
  typeFromBody?(json: Record<string, unknown>): string | null;
  /** Where the provider puts the id that stays the same on every copy of one delivery (docs/sources.md#duplicates). */
  dedupe?: DedupeSettings;
  samples?: ProviderSamples;
}

/** A provider, its name kept as a literal type (so the registry's name unions follow from it). */
export function defineProvider<const P extends Provider>(provider: P): P {
  return provider;
}

/** The object at `path` inside `root`, when every step is an object (for shaping samples). */
export function objectAt(root: JsonObject, ...path: string[]): JsonObject | undefined {
  let node: Json | undefined = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = node[key];
  }
  return node !== null && typeof node === 'object' && !Array.isArray(node) ? node : undefined;
}

export function unixSeconds(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}

export const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const UPPER_ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
export const HEX_DIGITS = '0123456789abcdef';
