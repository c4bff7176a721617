import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  generateSigningKey,
  generateSigningSecret,
  signatureMatches,
  signatureSchemeOf,
  signingPublicKey,
  signPayload,
  signPayloadWithSecrets,
} from '../src/index.ts';

const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TIMESTAMP = 1614265330;
const BODY = Buffer.from('{"test": 2432232314}');

/**
 * A verifier written apart from signing.ts, from the specification alone: `whpk_` + base64 of the
 * 32 raw ed25519 public key bytes, imported as a JWK; `v1a,` + base64 of the signature of
 * `{id}.{timestamp}.{body}`.
 */
function independentlyVerifies(publicKey: string, id: string, timestamp: number, body: Buffer, header: string): boolean {
  expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
  const key: KeyObject = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey.slice('whpk_'.length), 'base64').toString('base64url') },
    format: 'jwk',
  });
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]);
  return header
    .split(' ')
    .filter((candidate) => candidate.startsWith('v1a,'))
    .some((candidate) => verify(null, signed, key, Buffer.from(candidate.slice('v1a,'.length), 'base64')));
}

describe('v1a signatures (Standard Webhooks ed25519)', () => {
  it('generates whsk_ keys of the 32-byte seed and its public key, and the whpk_ that verifies them', () => {
    const key = generateSigningKey();
    expect(key).toMatch(/^whsk_[A-Za-z0-9+/]{86}==$/);
    expect(signatureSchemeOf(key)).toBe('v1a');
    const publicKey = signingPublicKey(key);
    expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    // The second half of the secret key is the public key, as libsodium and Svix lay it out.
    expect(Buffer.from(key.slice(5), 'base64').subarray(32).toString('base64')).toBe(publicKey!.slice(5));
    expect(generateSigningKey()).not.toBe(key);
  });

  it('derives the whpk_ of the key pair in Svix server tests (whsk_ as seed and public key, whpk_ as the raw public key)', () => {
    // svix-webhooks server/svix-server/src/core/types/mod.rs, test_endpoint_secret_deserialization.
    const svixKey = 'whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==';
    expect(signingPublicKey(svixKey)).toBe('whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=');
    const header = signPayload(svixKey, ID, TIMESTAMP, BODY);
    expect(independentlyVerifies('whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=', ID, TIMESTAMP, BODY, header)).toBe(true);
  });

  it("reproduces the specification's v1a example: Svix's test key over the v1 test vector's message", () => {
    // spec/standard-webhooks.md, "Example headers": webhook-signature: v1,… v1a,hnO3f9T8…m7TBAg==
    // Ed25519 is deterministic, so this pins the message layout and the signature encoding.
    const svixKey = 'whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==';
    expect(signPayload(svixKey, ID, TIMESTAMP, BODY)).toBe(
      'v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==',
    );
    // The same key given as its bare 32-byte seed signs the same.
    const seedOnly = `whsk_${Buffer.from(svixKey.slice(5), 'base64').subarray(0, 32).toString('base64')}`;
    expect(signPayload(seedOnly, ID, TIMESTAMP, BODY)).toBe(signPayload(svixKey, ID, TIMESTAMP, BODY));
    expect(signingPublicKey(seedOnly)).toBe(signingPublicKey(svixKey));
  });

  it('verifies under an independent implementation, a body of non-UTF-8 bytes included', () => {
    const key = generateSigningKey();
    const publicKey = signingPublicKey(key)!;
    const binaryBody = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x7b, 0x7d, 0xed, 0xa0, 0x80]);
    for (const body of [BODY, binaryBody, Buffer.alloc(0)]) {
      const header = signPayload(key, ID, TIMESTAMP, body);
      expect(header).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
      expect(independentlyVerifies(publicKey, ID, TIMESTAMP, body, header)).toBe(true);
    }
    // Decoding the binary body as text and back would change it; the signature covers the bytes.
    const header = signPayload(key, ID, TIMESTAMP, binaryBody);
    expect(independentlyVerifies(publicKey, ID, TIMESTAMP, Buffer.from(binaryBody.toString('utf8')), header)).toBe(false);
  });

  it('fails for a tampered body, timestamp or id, and under another key', () => {
    const key = generateSigningKey();
    const publicKey = signingPublicKey(key)!;
    const header = signPayload(key, ID, TIMESTAMP, BODY);
    expect(independentlyVerifies(publicKey, ID, TIMESTAMP, Buffer.from('{"test": 2432232315}'), header)).toBe(false);
    expect(independentlyVerifies(publicKey, ID, TIMESTAMP + 1, BODY, header)).toBe(false);
    expect(independentlyVerifies(publicKey, `${ID}x`, TIMESTAMP, BODY, header)).toBe(false);
    expect(independentlyVerifies(signingPublicKey(generateSigningKey())!, ID, TIMESTAMP, BODY, header)).toBe(false);
  });

  it('leaves v1 as it was: the specification vector, no public key, scheme v1', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(signPayload(secret, ID, TIMESTAMP, BODY)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    expect(signatureSchemeOf(secret)).toBe('v1');
    expect(signingPublicKey(secret)).toBeNull();
    expect(signingPublicKey(generateSigningSecret())).toBeNull();
  });

  it('sends both schemes during a rotation from v1 to v1a, each verifiable on its own', () => {
    const previous = generateSigningSecret();
    const next = generateSigningKey();
    const header = signPayloadWithSecrets([next, previous], ID, TIMESTAMP, BODY);
    const [first, second] = header.split(' ');
    expect(first).toMatch(/^v1a,/);
    expect(second).toMatch(/^v1,/);
    expect(independentlyVerifies(signingPublicKey(next)!, ID, TIMESTAMP, BODY, header)).toBe(true);
    expect(signatureMatches(previous, ID, TIMESTAMP, BODY, header)).toBe(true);
    expect(signatureMatches(next, ID, TIMESTAMP, BODY, header)).toBe(true);
    expect(signatureMatches(generateSigningKey(), ID, TIMESTAMP, BODY, header)).toBe(false);
  });

  it('refuses a damaged whsk_ key and a whpk_ key given to sign', () => {
    const key = Buffer.from(generateSigningKey().slice(5), 'base64');
    key.writeUInt8(key.readUInt8(40) ^ 1, 40);
    expect(() => signPayload(`whsk_${key.toString('base64')}`, ID, TIMESTAMP, BODY)).toThrow(/damaged/);
    expect(() => signPayload('whsk_c2hvcnQ=', ID, TIMESTAMP, BODY)).toThrow(/32 or 64 bytes/);
    expect(() => signPayload(signingPublicKey(generateSigningKey())!, ID, TIMESTAMP, BODY)).toThrow(/cannot make them/);
  });
});
