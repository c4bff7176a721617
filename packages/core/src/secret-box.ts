/**
 * Endpoint signing secrets at rest: AES-256-GCM under the relay's HOOK_SECRET_KEY. The
 * relay must sign with the secret itself (HMAC), so it is encrypted, not hashed. Pure: the
 * key is a parameter; only entry points read the environment.
 *
 * Stored form: `enc:v1:<key id>:<base64(iv | ciphertext | tag)>`. The key id (first 8 hex
 * digits of SHA-256 of the key) names the key a value was sealed with, so a wrong key is
 * told apart from a damaged value and keys can be rotated later. A value without the
 * `enc:` prefix is a plaintext secret from before encryption, read as it is.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** Bytes in a HOOK_SECRET_KEY (AES-256). */
export const SECRET_KEY_BYTES = 32;
/** Bytes of a GCM nonce (the size GCM is designed for). */
const IV_BYTES = 12;
/** Bytes of a GCM authentication tag. */
const TAG_BYTES = 16;
const SEALED_PREFIX = 'enc:';
const V1_PREFIX = 'enc:v1:';

/** A stored secret that cannot be opened: sealed under another key, or damaged. */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

/**
 * Reads a key given as text: 32 bytes as base64 (44 characters, e.g. from
 * `openssl rand -base64 32`) or hex (64 characters, `openssl rand -hex 32`).
 * Throws SecretBoxError when it is neither.
 */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) {
    const key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length === SECRET_KEY_BYTES) return key;
  }
  throw new SecretBoxError(`expected ${SECRET_KEY_BYTES} bytes as base64 (44 characters) or hex (64 characters); generate one with: openssl rand -base64 32`);
}

/** The id a key is named by in sealed values: the first 8 hex digits of its SHA-256 (reveals nothing useful about the key). */
export function secretKeyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** A new random key, as the embedded default generates into its data dir. */
export function generateSecretKey(): Buffer {
  return randomBytes(SECRET_KEY_BYTES);
}

/** Whether a stored value is sealed (as opposed to a plaintext secret from before encryption). */
export function isSealedSecret(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

/** Seals and opens secrets under one key. */
/** Most opened secrets a box keeps; past it the cache starts over. */
const OPENED_CACHE_MAX = 1000;

export class SecretBox {
  readonly keyId: string;
  readonly #key: Buffer;
  /**
   * Secrets opened, by their stored form: every delivery is signed with its destination's
   * secret, and opening it (AES-GCM) was 20-25 µs of each delivery's 50 µs of preparing and
   * signing (bench:delivery's cost model). Kept as long as the signing keys made from them
   * are (signing.ts): the plaintext is in memory for that anyway.
   */
  readonly #opened = new Map<string, string>();

  constructor(key: Buffer) {
    if (key.length !== SECRET_KEY_BYTES) throw new SecretBoxError(`a secret key has ${SECRET_KEY_BYTES} bytes, not ${key.length}`);
    this.#key = Buffer.from(key);
    this.keyId = secretKeyId(key);
  }

  /** The stored form of `plaintext`: a fresh random IV each time, so equal secrets seal differently. */
  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${V1_PREFIX}${this.keyId}:${Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString('base64')}`;
  }

  /** The plaintext of a stored value; a legacy plaintext value comes back as it is. Throws SecretBoxError rather than return garbage. */
  open(stored: string): string {
    if (!isSealedSecret(stored)) return stored;
    let plaintext = this.#opened.get(stored);
    if (plaintext === undefined) {
      plaintext = this.#openSealed(stored);
      if (this.#opened.size >= OPENED_CACHE_MAX) this.#opened.clear();
      this.#opened.set(stored, plaintext);
    }
    return plaintext;
  }

  #openSealed(stored: string): string {
    if (!stored.startsWith(V1_PREFIX)) throw new SecretBoxError(`a stored secret has an unknown format (${stored.split(':', 2).join(':')}); this relay reads enc:v1`);
    const [keyId = '', payload = ''] = stored.slice(V1_PREFIX.length).split(':');
    if (keyId !== this.keyId) {
      throw new SecretBoxError(`a stored secret was encrypted with key ${keyId}, but HOOK_SECRET_KEY is key ${this.keyId}: start the relay with the key it was started with before`);
    }
    const sealed = Buffer.from(payload, 'base64');
    if (sealed.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError(`a stored secret under key ${keyId} is damaged (too short)`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.subarray(0, IV_BYTES));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError(`a stored secret under key ${keyId} does not authenticate: it is damaged, or HOOK_SECRET_KEY is not the key it was encrypted with`);
    }
  }
}
