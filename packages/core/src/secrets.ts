import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';

/** Bytes of randomness in an API key. */
const API_KEY_BYTES = 32;
/** Characters of a key kept in clear to show in listings (`hk_` plus eight). */
const API_KEY_PREFIX_CHARS = 11;

/** A new API key (`hk_…`), shown to its owner once and stored only as a hash. */
export function generateApiKey(): string {
  return `hk_${randomBytes(API_KEY_BYTES).toString('base64url')}`;
}

/** The hash under which a key is stored and looked up: SHA-256, hex. Keys carry 256 random bits, so no slow hash is needed. */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

/** The part of a key safe to show in listings, so its owner can tell keys apart. */
export function apiKeyPrefix(apiKey: string): string {
  return apiKey.slice(0, API_KEY_PREFIX_CHARS);
}

/** Whether a string has the shape of an API key. */
export function looksLikeApiKey(value: string): boolean {
  return /^hk_[A-Za-z0-9_-]{43}$/.test(value);
}

/** Bytes of key material in a signing secret (Standard Webhooks allows 24–64). */
const SIGNING_SECRET_BYTES = 32;

/** A new endpoint signing secret: `whsec_` and base64 key material (Standard Webhooks). */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(SIGNING_SECRET_BYTES).toString('base64')}`;
}

/**
 * A new ed25519 signing key for the Standard Webhooks `v1a` scheme: `whsk_` and the base64 of the
 * 32-byte seed followed by its 32-byte public key (the 64-byte secret key of libsodium, which Svix,
 * the specification's origin, writes the same way). Receivers verify with `signingPublicKey(key)`.
 */
export function generateSigningKey(): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  return `whsk_${Buffer.concat([Buffer.from(jwk.d!, 'base64url'), Buffer.from(jwk.x!, 'base64url')]).toString('base64')}`;
}

/** How long a rotated-out signing secret keeps signing beside the new one. */
export const SECRET_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;
