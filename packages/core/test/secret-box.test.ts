import { describe, expect, it } from 'vitest';
import { generateSecretKey, isSealedSecret, parseSecretKey, SecretBox, SecretBoxError, secretKeyId } from '../src/secret-box.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('SecretBox', () => {
  it('seals a signing secret into a versioned value naming its key, and opens it again', () => {
    const key = generateSecretKey();
    const box = new SecretBox(key);
    const sealed = box.seal(SECRET);
    expect(sealed).toMatch(/^enc:v1:[0-9a-f]{8}:[A-Za-z0-9+/]+=*$/);
    expect(sealed.split(':')[2]).toBe(secretKeyId(key));
    expect(sealed).not.toContain(SECRET.slice('whsec_'.length));
    expect(isSealedSecret(sealed)).toBe(true);
    expect(box.open(sealed)).toBe(SECRET);
  });

  it('uses a fresh IV each time, so one secret never seals to the same value twice', () => {
    const box = new SecretBox(generateSecretKey());
    expect(box.seal(SECRET)).not.toBe(box.seal(SECRET));
  });

  it('reads a plaintext secret stored before encryption as it is', () => {
    expect(isSealedSecret(SECRET)).toBe(false);
    expect(new SecretBox(generateSecretKey()).open(SECRET)).toBe(SECRET);
  });

  it('refuses to open with another key, naming both key ids, rather than return garbage', () => {
    const sealed = new SecretBox(generateSecretKey()).seal(SECRET);
    const other = new SecretBox(generateSecretKey());
    expect(() => other.open(sealed)).toThrow(SecretBoxError);
    expect(() => other.open(sealed)).toThrow(new RegExp(`encrypted with key ${sealed.split(':')[2]}, but HOOK_SECRET_KEY is key ${other.keyId}`));
  });

  it('refuses a damaged value (GCM authenticates it)', () => {
    const box = new SecretBox(generateSecretKey());
    const sealed = box.seal(SECRET);
    const payload = Buffer.from(sealed.split(':')[3]!, 'base64');
    payload[14]! ^= 1;
    const damaged = `${sealed.split(':').slice(0, 3).join(':')}:${payload.toString('base64')}`;
    expect(() => box.open(damaged)).toThrow(/does not authenticate/);
    expect(() => box.open(`enc:v1:${box.keyId}:AAAA`)).toThrow(/damaged/);
    expect(() => box.open('enc:v9:whatever')).toThrow(/unknown format/);
  });

  it('takes only 32-byte keys', () => {
    expect(() => new SecretBox(Buffer.alloc(16))).toThrow(SecretBoxError);
  });
});

describe('parseSecretKey', () => {
  it('reads 32 bytes given as base64 (with or without padding, URL-safe too) or hex', () => {
    const key = Buffer.from(Array.from({ length: 32 }, (_, i) => 255 - i));
    expect(parseSecretKey(key.toString('base64'))).toEqual(key);
    expect(parseSecretKey(` ${key.toString('base64')}\n`)).toEqual(key);
    expect(parseSecretKey(key.toString('base64url'))).toEqual(key);
    expect(parseSecretKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretKey(key.toString('hex').toUpperCase())).toEqual(key);
  });

  it('refuses anything else and says how to make a key', () => {
    for (const text of ['', 'secret', Buffer.alloc(16).toString('base64'), Buffer.alloc(31).toString('hex'), Buffer.alloc(48, 0xff).toString('base64')]) {
      expect(() => parseSecretKey(text), text).toThrow(/openssl rand -base64 32/);
    }
  });
});
