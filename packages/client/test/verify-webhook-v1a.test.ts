import { describe, expect, it } from 'vitest';
import { generateSigningKey, generateSigningSecret, signingPublicKey, signPayloadWithSecrets } from '@hook/core';
import { verifyWebhook, WebhookVerificationError, type WebhookVerificationFailure } from '../src/index.ts';

const NOW_MS = Date.UTC(2026, 0, 15, 12, 0, 0);
const NOW_SECONDS = NOW_MS / 1000;
const now = (): number => NOW_MS;
const ID = 'evt_01JHOOKTESTEVENT';
const BODY = Buffer.from('{"type":"invoice.paid","amount":100,"note":"café ✓"}');

/** Headers of one delivery, signed with each of `secrets` (whsec_ and whsk_ alike) as the relay signs it. */
function signedHeaders(secrets: string[], body: Buffer, timestampSeconds = NOW_SECONDS): Record<string, string> {
  return {
    'webhook-id': ID,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signPayloadWithSecrets(secrets, ID, timestampSeconds, body),
  };
}

/** The reason verifyWebhook gave for refusing, or a test failure if it accepted. */
function failureOf(verify: () => unknown): { reason: WebhookVerificationFailure; message: string } {
  try {
    verify();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return { reason: error.reason, message: error.message };
    throw error;
  }
  throw new Error('verifyWebhook accepted a delivery it should have refused');
}

function publicKeyOf(key: string): string {
  const publicKey = signingPublicKey(key);
  if (publicKey === null) throw new Error('not a whsk_ key');
  return publicKey;
}

describe('verifyWebhook with v1a (ed25519) signatures', () => {
  it("accepts the specification's v1a example with its whpk_ public key", () => {
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==',
    };
    const verified = verifyWebhook('{"test": 2432232314}', headers, 'whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=', {
      now: () => 1614265330_000,
    });
    expect(verified).toEqual({ id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: new Date(1614265330_000) });
  });

  it('accepts a delivery with the public key, body as Buffer, Uint8Array or string', () => {
    const key = generateSigningKey();
    const headers = signedHeaders([key], BODY);
    const publicKey = publicKeyOf(key);
    expect(verifyWebhook(BODY, headers, publicKey, { now })).toEqual({ id: ID, timestamp: new Date(NOW_MS) });
    expect(verifyWebhook(new Uint8Array(BODY), headers, publicKey, { now }).id).toBe(ID);
    expect(verifyWebhook(BODY.toString('utf8'), headers, [publicKey], { now }).id).toBe(ID);
  });

  it('refuses under the wrong key, a tampered body or a forged signature, naming the public key in the hint', () => {
    const key = generateSigningKey();
    const headers = signedHeaders([key], BODY);
    const wrongKey = failureOf(() => verifyWebhook(BODY, headers, publicKeyOf(generateSigningKey()), { now }));
    expect(wrongKey.reason).toBe('no_matching_signature');
    expect(wrongKey.message).toContain('public_key');
    expect(failureOf(() => verifyWebhook(Buffer.from(`${BODY} `), headers, publicKeyOf(key), { now })).reason).toBe('no_matching_signature');
    const forged = { ...headers, 'webhook-signature': `v1a,${Buffer.alloc(64, 7).toString('base64')} v1a,not-base64 v1a,` };
    expect(failureOf(() => verifyWebhook(BODY, forged, publicKeyOf(key), { now })).reason).toBe('no_matching_signature');
  });

  it('does not take a v1a signature for a v1 one or the reverse', () => {
    const secret = generateSigningSecret();
    const key = generateSigningKey();
    expect(failureOf(() => verifyWebhook(BODY, signedHeaders([key], BODY), secret, { now })).reason).toBe('no_matching_signature');
    expect(failureOf(() => verifyWebhook(BODY, signedHeaders([secret], BODY), publicKeyOf(key), { now })).reason).toBe('no_matching_signature');
  });

  it('verifies mixed rotations: any v1 signature under any whsec_, or any v1a under any whpk_', () => {
    const oldSecret = generateSigningSecret();
    const newKey = generateSigningKey();
    // The relay, rotating from v1 to v1a, sends `v1a,… v1,…`.
    const rotating = signedHeaders([newKey, oldSecret], BODY);
    expect(verifyWebhook(BODY, rotating, [publicKeyOf(newKey), oldSecret], { now }).id).toBe(ID);
    expect(verifyWebhook(BODY, rotating, [oldSecret], { now }).id).toBe(ID);
    expect(verifyWebhook(BODY, rotating, [publicKeyOf(newKey)], { now }).id).toBe(ID);
    // A receiver that already switched to the new key, getting a delivery signed only by the old secret.
    const stale = signedHeaders([oldSecret], BODY);
    expect(verifyWebhook(BODY, stale, [publicKeyOf(newKey), oldSecret], { now }).id).toBe(ID);
    // Two ed25519 keys, one of them the signer.
    const otherKey = generateSigningKey();
    expect(verifyWebhook(BODY, signedHeaders([newKey], BODY), [publicKeyOf(otherKey), publicKeyOf(newKey)], { now }).id).toBe(ID);
    const neither = failureOf(() => verifyWebhook(BODY, rotating, [publicKeyOf(otherKey), generateSigningSecret()], { now }));
    expect(neither.reason).toBe('no_matching_signature');
    expect(neither.message).toContain('any of the 2 keys and secrets');
  });

  it('still checks the timestamp tolerance before any signature', () => {
    const key = generateSigningKey();
    const old = failureOf(() => verifyWebhook(BODY, signedHeaders([key], BODY, NOW_SECONDS - 301), publicKeyOf(key), { now }));
    expect(old.reason).toBe('timestamp_out_of_tolerance');
    expect(verifyWebhook(BODY, signedHeaders([key], BODY, NOW_SECONDS - 300), publicKeyOf(key), { now }).id).toBe(ID);
    const altered = { ...signedHeaders([key], BODY), 'webhook-timestamp': String(NOW_SECONDS - 1) };
    expect(failureOf(() => verifyWebhook(BODY, altered, publicKeyOf(key), { now })).reason).toBe('no_matching_signature');
  });

  it('refuses a whsk_ private key and a malformed whpk_ key as a bug in the receiver (TypeError)', () => {
    const key = generateSigningKey();
    const headers = signedHeaders([key], BODY);
    expect(() => verifyWebhook(BODY, headers, key, { now })).toThrow(TypeError);
    expect(() => verifyWebhook(BODY, headers, [publicKeyOf(key), key], { now })).toThrow(/not its private signing key/);
    expect(() => verifyWebhook(BODY, headers, 'whpk_', { now })).toThrow(TypeError);
    expect(() => verifyWebhook(BODY, headers, 'whpk_c2hvcnQ=', { now })).toThrow(/malformed public key/);
  });
});
