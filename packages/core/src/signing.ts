import { createHmac, createPrivateKey, createPublicKey, createSecretKey, sign, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { SignatureScheme } from './destination-options.ts';

/** Most secrets whose keys are kept imported; past it the cache starts over. */
const KEY_CACHE_MAX = 1000;
const importedKeys = new Map<string, KeyObject>();

/** The prefix of a Standard Webhooks symmetric (HMAC, `v1`) secret. */
const SYMMETRIC_SECRET_PREFIX = 'whsec_';
/** The prefix of a Standard Webhooks asymmetric (ed25519, `v1a`) secret key. */
const ED25519_SECRET_KEY_PREFIX = 'whsk_';
/** The prefix of the public key that verifies `v1a` signatures. */
const ED25519_PUBLIC_KEY_PREFIX = 'whpk_';

/** Bytes in an ed25519 seed, in a public key, and in a seed followed by its public key (libsodium's secret key). */
const ED25519_SEED_BYTES = 32;
const ED25519_PUBLIC_KEY_BYTES = 32;
const ED25519_SEED_AND_PUBLIC_KEY_BYTES = 64;

/** DER of a PKCS#8 ed25519 private key up to its 32-byte seed (RFC 8410): the seed is appended. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** DER of an SPKI ed25519 public key up to its 32 raw bytes (RFC 8410). */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * The key inside a `whsec_<base64>` secret, imported once: an HMAC over an imported key
 * costs about 5 µs against 25-35 µs when the key bytes are decoded and imported on every
 * signature (measured for a 1 KiB body on the development VM). `whsk_` and `whpk_` keys are
 * kept the same way, as ed25519 private and public keys.
 */
function importedKey(secret: string): KeyObject {
  let key = importedKeys.get(secret);
  if (!key) {
    if (secret.startsWith(ED25519_SECRET_KEY_PREFIX)) {
      key = ed25519PrivateKey(secret);
    } else if (secret.startsWith(ED25519_PUBLIC_KEY_PREFIX)) {
      key = ed25519PublicKey(secret);
    } else {
      const encoded = secret.startsWith(SYMMETRIC_SECRET_PREFIX) ? secret.slice(SYMMETRIC_SECRET_PREFIX.length) : secret;
      key = createSecretKey(Buffer.from(encoded, 'base64'));
    }
    if (importedKeys.size >= KEY_CACHE_MAX) importedKeys.clear();
    importedKeys.set(secret, key);
  }
  return key;
}

/**
 * The private key in a `whsk_` secret. The Standard Webhooks specification says only "standard
 * ed25519 key pair … base64 encoded, prefixed with `whsk_` for the secret key, and `whpk_` for the
 * public key". Svix, where the specification comes from, writes the 64-byte secret key of libsodium
 * and ed25519_compact (the 32-byte seed, then the 32-byte public key), so that is what
 * `generateSigningKey` writes; a bare 32-byte seed (RFC 8032's private key, as Go's
 * `ed25519.NewKeyFromSeed` takes it) is read too. A 64-byte key whose second half is not the
 * seed's public key is refused: signing with it would give signatures no `whpk_` verifies.
 */
function ed25519PrivateKey(secret: string): KeyObject {
  const bytes = Buffer.from(secret.slice(ED25519_SECRET_KEY_PREFIX.length), 'base64');
  if (bytes.length !== ED25519_SEED_BYTES && bytes.length !== ED25519_SEED_AND_PUBLIC_KEY_BYTES) {
    throw new TypeError(`A whsk_ signing key holds 32 or 64 bytes of base64 (an ed25519 seed, or the seed and its public key); this one holds ${bytes.length}`);
  }
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, bytes.subarray(0, ED25519_SEED_BYTES)]), format: 'der', type: 'pkcs8' });
  if (bytes.length === ED25519_SEED_AND_PUBLIC_KEY_BYTES && !rawPublicKey(key).equals(bytes.subarray(ED25519_SEED_BYTES))) {
    throw new TypeError('This whsk_ signing key is damaged: its last 32 bytes are not the public key of its first 32 (the seed)');
  }
  return key;
}

/** The 32 raw bytes of the public key of an ed25519 private key. */
function rawPublicKey(privateKey: KeyObject): Buffer {
  return createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(ED25519_SPKI_PREFIX.length);
}

/** The public key in a `whpk_<base64 of the 32 raw bytes>` key; a TypeError when it is not 32 bytes. */
function ed25519PublicKey(publicKey: string): KeyObject {
  const bytes = Buffer.from(publicKey.slice(ED25519_PUBLIC_KEY_PREFIX.length), 'base64');
  if (bytes.length !== ED25519_PUBLIC_KEY_BYTES) {
    throw new TypeError(`A whpk_ public key holds 32 bytes of base64 (the raw ed25519 public key); this one holds ${bytes.length}`);
  }
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, bytes]), format: 'der', type: 'spki' });
}

/**
 * The ed25519 public key in a `whpk_` key, imported once, to verify `v1a` signatures with
 * `crypto.verify(null, message, key, signature)`. Throws a TypeError for anything but a `whpk_`
 * key of 32 bytes.
 */
export function importSigningPublicKey(publicKey: string): KeyObject {
  if (!publicKey.startsWith(ED25519_PUBLIC_KEY_PREFIX)) throw new TypeError('importSigningPublicKey takes a whpk_ public key');
  return importedKey(publicKey);
}

/** Which Standard Webhooks scheme a destination's secret signs with: `v1a` for a `whsk_` ed25519 key, `v1` (HMAC) otherwise. */
export function signatureSchemeOf(secret: string): SignatureScheme {
  return secret.startsWith(ED25519_SECRET_KEY_PREFIX) ? 'v1a' : 'v1';
}

/**
 * The `whpk_` public key that verifies what a `whsk_` secret signs: `whpk_` and the base64 of the
 * 32 raw ed25519 public key bytes (as Svix writes it). Null for a `whsec_` secret, which has none:
 * its receivers hold the secret itself.
 */
export function signingPublicKey(secret: string): string | null {
  if (signatureSchemeOf(secret) !== 'v1a') return null;
  return `${ED25519_PUBLIC_KEY_PREFIX}${rawPublicKey(importedKey(secret)).toString('base64')}`;
}

/**
 * The Standard Webhooks signature of one delivery over `{id}.{timestamp}.{body}`, the body's exact
 * bytes (never a re-serialised copy): with a `whsec_` secret, `v1,` + base64 HMAC-SHA256; with a
 * `whsk_` key, `v1a,` + base64 of the 64-byte ed25519 signature (RFC 8032 Ed25519, no prehash).
 * Ed25519 signatures are deterministic, so the same inputs always give the same string.
 */
export function signPayload(secret: string, id: string, timestampSeconds: number, body: Buffer): string {
  const key = importedKey(secret);
  if (key.type === 'public') throw new TypeError('A whpk_ public key verifies v1a signatures but cannot make them: sign with the whsk_ key');
  if (key.type === 'private') {
    const signature = sign(null, Buffer.concat([Buffer.from(`${id}.${timestampSeconds}.`), body]), key);
    return `v1a,${signature.toString('base64')}`;
  }
  const mac = createHmac('sha256', key);
  mac.update(`${id}.${timestampSeconds}.`);
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}

/** Signatures for several secrets at once, space-separated, as sent during a secret rotation (`v1` and `v1a` side by side when the scheme changed). */
export function signPayloadWithSecrets(secrets: readonly string[], id: string, timestampSeconds: number, body: Buffer): string {
  return secrets.map((secret) => signPayload(secret, id, timestampSeconds, body)).join(' ');
}

/**
 * Whether any signature in a `webhook-signature` header value is the one this secret makes: a `v1,`
 * signature for a `whsec_` secret, a `v1a,` one for a `whsk_` key (ed25519 being deterministic, an
 * equal string is a valid signature; a receiver holding only the `whpk_` key verifies instead).
 */
export function signatureMatches(secret: string, id: string, timestampSeconds: number, body: Buffer, header: string): boolean {
  const expected = Buffer.from(signPayload(secret, id, timestampSeconds, body));
  return header.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
