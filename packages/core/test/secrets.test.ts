import { describe, expect, it } from 'vitest';
import { apiKeyPrefix, generateApiKey, generateSigningSecret, hashApiKey, looksLikeApiKey, signatureMatches, signPayload, signPayloadWithSecrets } from '../src/index.ts';

describe('api keys', () => {
  it('are hk_ tokens stored by a stable hash and shown by prefix', () => {
    const key = generateApiKey();
    expect(looksLikeApiKey(key)).toBe(true);
    expect(hashApiKey(key)).toBe(hashApiKey(key));
    expect(hashApiKey(key)).not.toContain(key);
    expect(key.startsWith(apiKeyPrefix(key))).toBe(true);
    expect(apiKeyPrefix(key)).toHaveLength(11);
    expect(looksLikeApiKey('hk_short')).toBe(false);
  });
});

describe('signing (Standard Webhooks)', () => {
  // The example from the Standard Webhooks specification.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
  const timestamp = 1614265330;
  const body = Buffer.from('{"test": 2432232314}');

  it('matches the specification example', () => {
    expect(signPayload(secret, id, timestamp, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs the exact bytes: re-serialised JSON does not verify', () => {
    const header = signPayload(secret, id, timestamp, body);
    expect(signatureMatches(secret, id, timestamp, body, header)).toBe(true);
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(body.toString())));
    expect(signatureMatches(secret, id, timestamp, reserialised, header)).toBe(false);
  });

  it('verifies with either secret during a rotation', () => {
    const next = generateSigningSecret();
    expect(next).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const header = signPayloadWithSecrets([next, secret], id, timestamp, body);
    expect(signatureMatches(secret, id, timestamp, body, header)).toBe(true);
    expect(signatureMatches(next, id, timestamp, body, header)).toBe(true);
    expect(signatureMatches(generateSigningSecret(), id, timestamp, body, header)).toBe(false);
  });
});
