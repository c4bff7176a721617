import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateSigningSecret, signPayload } from '@hook/core';
import { verifyWebhook, WebhookVerificationError, type WebhookVerificationFailure } from '../src/index.ts';

const NOW_MS = Date.UTC(2026, 0, 15, 12, 0, 0);
const NOW_SECONDS = NOW_MS / 1000;
const now = (): number => NOW_MS;
const ID = 'evt_01JHOOKTESTEVENT';

/** Headers of one delivery, signed by `signPayload` with each of `secrets`. */
function signedHeaders(secrets: string[], body: Buffer, timestampSeconds = NOW_SECONDS): Record<string, string> {
  return {
    'webhook-id': ID,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => signPayload(secret, ID, timestampSeconds, body)).join(' '),
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

describe('verifyWebhook', () => {
  it('accepts the Standard Webhooks specification test vector', () => {
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    const verified = verifyWebhook('{"test": 2432232314}', headers, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', {
      now: () => 1614265330_000,
    });
    expect(verified).toEqual({ id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: new Date(1614265330_000) });
  });

  it('accepts a delivery signed by the standardwebhooks package, body as string or Buffer', () => {
    const secret = generateSigningSecret();
    const body = '{"type":"invoice.paid","amount":100,"currency":"eur","note":"café ✓"}';
    const signature = new Webhook(secret).sign(ID, new Date(NOW_MS), body);
    const headers = { 'webhook-id': ID, 'webhook-timestamp': String(NOW_SECONDS), 'webhook-signature': signature };

    expect(verifyWebhook(body, headers, secret, { now })).toEqual({ id: ID, timestamp: new Date(NOW_MS) });
    expect(verifyWebhook(Buffer.from(body), headers, secret, { now }).id).toBe(ID);
    expect(failureOf(() => verifyWebhook(body, headers, generateSigningSecret(), { now })).reason).toBe('no_matching_signature');
  });

  it("produces signatures the standardwebhooks package's own verify accepts (cross-check of signPayload)", () => {
    const secret = generateSigningSecret();
    const body = Buffer.from('{"type":"push","ref":"refs/heads/main"}');
    // standardwebhooks checks the timestamp against the real clock, so sign with it.
    const timestampSeconds = Math.floor(Date.now() / 1000);
    const headers = signedHeaders([secret], body, timestampSeconds);
    expect(new Webhook(secret).verify(body.toString('utf8'), headers)).toEqual({ type: 'push', ref: 'refs/heads/main' });
    expect(() => new Webhook(generateSigningSecret()).verify(body.toString('utf8'), headers)).toThrow('No matching signature');
  });

  it('verifies a binary body that is not valid UTF-8 byte for byte, as Buffer or Uint8Array', () => {
    const secret = generateSigningSecret();
    const body = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x80]), randomBytes(4096)]);
    expect(body.equals(Buffer.from(body.toString('utf8'), 'utf8'))).toBe(false);
    const headers = signedHeaders([secret], body);

    expect(verifyWebhook(body, headers, secret, { now }).id).toBe(ID);
    // A view into a larger buffer: only the viewed bytes are the body.
    const backing = new Uint8Array(body.length + 20);
    backing.set(body, 10);
    expect(verifyWebhook(backing.subarray(10, 10 + body.length), headers, secret, { now }).id).toBe(ID);
    // Decoding the bytes as text first loses information, so the signature no longer matches.
    expect(failureOf(() => verifyWebhook(body.toString('utf8'), headers, secret, { now })).reason).toBe('no_matching_signature');
  });

  it('accepts a secret given as bare base64 without the whsec_ prefix', () => {
    const secret = generateSigningSecret();
    const body = Buffer.from('{}');
    expect(verifyWebhook(body, signedHeaders([secret], body), secret.slice('whsec_'.length), { now }).id).toBe(ID);
  });

  describe('secret rotation', () => {
    const previous = generateSigningSecret();
    const current = generateSigningSecret();
    const body = Buffer.from('{"type":"rotated"}');

    it('accepts a header with both signatures with either secret, or both, in either order', () => {
      const headers = signedHeaders([current, previous], body);
      expect(verifyWebhook(body, headers, current, { now }).id).toBe(ID);
      expect(verifyWebhook(body, headers, previous, { now }).id).toBe(ID);
      expect(verifyWebhook(body, headers, [current, previous], { now }).id).toBe(ID);
      expect(verifyWebhook(body, signedHeaders([previous, current], body), [current], { now }).id).toBe(ID);
    });

    it('accepts a delivery signed only with the previous secret when given [secret, previous_secret]', () => {
      const headers = signedHeaders([previous], body);
      expect(verifyWebhook(body, headers, [current, previous], { now }).id).toBe(ID);
      expect(failureOf(() => verifyWebhook(body, headers, [current], { now })).reason).toBe('no_matching_signature');
    });

    it('skips signatures of other versions and extra spaces in the header', () => {
      const signature = signPayload(current, ID, NOW_SECONDS, body);
      const headers = { ...signedHeaders([], body), 'webhook-signature': `v1a,c2lnbmF0dXJl  ${signature} ` };
      expect(verifyWebhook(body, headers, current, { now }).id).toBe(ID);
      const forged = { ...headers, 'webhook-signature': `v2,${signature.slice('v1,'.length)}` };
      expect(failureOf(() => verifyWebhook(body, forged, current, { now })).reason).toBe('no_matching_signature');
    });
  });

  describe('refuses', () => {
    const secret = generateSigningSecret();
    const body = Buffer.from('{"type": "invoice.paid", "amount": 100}');
    const headers = signedHeaders([secret], body);

    it('a delivery signed with another secret, saying which secret to use', () => {
      const failure = failureOf(() => verifyWebhook(body, headers, [generateSigningSecret(), generateSigningSecret()], { now }));
      expect(failure.reason).toBe('no_matching_signature');
      expect(failure.message).toContain('GET /v1/endpoints/{id}/secret');
    });

    it('a body with one byte changed', () => {
      const tampered = Buffer.from(body);
      tampered.writeUInt8(tampered.readUInt8(tampered.length - 2) ^ 0x01, tampered.length - 2);
      expect(tampered.equals(body)).toBe(false);
      expect(failureOf(() => verifyWebhook(tampered, headers, secret, { now })).reason).toBe('no_matching_signature');
    });

    it('a JSON body that was parsed and serialised again, saying to pass the raw bytes', () => {
      const reserialised = JSON.stringify(JSON.parse(body.toString('utf8')));
      expect(reserialised).not.toBe(body.toString('utf8'));
      const failure = failureOf(() => verifyWebhook(reserialised, headers, secret, { now }));
      expect(failure.reason).toBe('no_matching_signature');
      expect(failure.message).toContain('raw bytes');
    });

    it('a signature copied onto another event id', () => {
      expect(failureOf(() => verifyWebhook(body, { ...headers, 'webhook-id': 'evt_other' }, secret, { now })).reason).toBe(
        'no_matching_signature',
      );
    });

    it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])('a request without %s, naming it', (name) => {
      const partial: Record<string, string> = { ...headers };
      delete partial[name];
      const failure = failureOf(() => verifyWebhook(body, partial, secret, { now }));
      expect(failure.reason).toBe('missing_headers');
      expect(failure.message).toContain(name);
      expect(failureOf(() => verifyWebhook(body, { ...headers, [name]: '' }, secret, { now })).reason).toBe('missing_headers');
    });

    it('a request with no headers at all, or an empty Headers', () => {
      expect(failureOf(() => verifyWebhook(body, {}, secret, { now })).message).toContain('webhook-id, webhook-timestamp, webhook-signature');
      expect(failureOf(() => verifyWebhook(body, new Headers(), secret, { now })).reason).toBe('missing_headers');
    });

    it.each(['yesterday', '1.7e9', '-1', '1768478400.5', '0x6968a600'])('a webhook-timestamp that is not whole Unix seconds: %j', (timestamp) => {
      const reason = failureOf(() => verifyWebhook(body, { ...headers, 'webhook-timestamp': timestamp }, secret, { now })).reason;
      expect(reason).toBe('invalid_timestamp');
    });

    it('a timestamp more than 300 s old or in the future, and accepts one exactly 300 s away', () => {
      for (const offsetSeconds of [-300, 300]) {
        const onEdge = signedHeaders([secret], body, NOW_SECONDS + offsetSeconds);
        expect(verifyWebhook(body, onEdge, secret, { now }).timestamp).toEqual(new Date((NOW_SECONDS + offsetSeconds) * 1000));
      }
      const tooOld = failureOf(() => verifyWebhook(body, signedHeaders([secret], body, NOW_SECONDS - 301), secret, { now }));
      expect(tooOld).toMatchObject({ reason: 'timestamp_out_of_tolerance' });
      expect(tooOld.message).toContain('301 s in the past');
      const tooNew = failureOf(() => verifyWebhook(body, signedHeaders([secret], body, NOW_SECONDS + 3600), secret, { now }));
      expect(tooNew).toMatchObject({ reason: 'timestamp_out_of_tolerance' });
      expect(tooNew.message).toContain('3600 s in the future');
    });

    it('a timestamp outside a custom tolerance', () => {
      const tenSecondsOld = signedHeaders([secret], body, NOW_SECONDS - 10);
      expect(verifyWebhook(body, tenSecondsOld, secret, { now, toleranceSeconds: 10 }).id).toBe(ID);
      expect(failureOf(() => verifyWebhook(body, tenSecondsOld, secret, { now, toleranceSeconds: 9 })).reason).toBe(
        'timestamp_out_of_tolerance',
      );
    });

    it('by default, a delivery signed long ago relative to the real clock', () => {
      expect(failureOf(() => verifyWebhook(body, headers, secret)).reason).toBe('timestamp_out_of_tolerance');
    });
  });

  describe('reads headers', () => {
    const secret = generateSigningSecret();
    const body = Buffer.from('{"type":"headers"}');
    const headers = signedHeaders([secret], body);

    it('from a plain object whatever the case of its keys', () => {
      const mixedCase = {
        'Webhook-Id': headers['webhook-id'],
        'WEBHOOK-TIMESTAMP': headers['webhook-timestamp'],
        'webhook-Signature': headers['webhook-signature'],
        'content-type': 'application/json',
      };
      expect(verifyWebhook(body, mixedCase, secret, { now })).toEqual({ id: ID, timestamp: new Date(NOW_MS) });
    });

    it('from a plain object with repeated headers, taking the first value', () => {
      const repeated = {
        'webhook-id': [ID, 'evt_second'],
        'webhook-timestamp': [String(NOW_SECONDS)],
        'webhook-signature': [headers['webhook-signature'] ?? '', 'v1,bm90IHRoaXMgb25l'],
        'x-absent': undefined,
      };
      expect(verifyWebhook(body, repeated, secret, { now }).id).toBe(ID);
      const wrongFirst = { ...repeated, 'webhook-signature': ['v1,bm90IHRoaXMgb25l', headers['webhook-signature'] ?? ''] };
      expect(failureOf(() => verifyWebhook(body, wrongFirst, secret, { now })).reason).toBe('no_matching_signature');
    });

    it('from a fetch Headers instance', () => {
      const fetchHeaders = new Headers({
        'Webhook-ID': headers['webhook-id'] ?? '',
        'Webhook-Timestamp': headers['webhook-timestamp'] ?? '',
        'Webhook-Signature': headers['webhook-signature'] ?? '',
      });
      expect(verifyWebhook(body, fetchHeaders, secret, { now })).toEqual({ id: ID, timestamp: new Date(NOW_MS) });
      fetchHeaders.set('webhook-signature', signPayload(generateSigningSecret(), ID, NOW_SECONDS, body));
      expect(failureOf(() => verifyWebhook(body, fetchHeaders, secret, { now })).reason).toBe('no_matching_signature');
    });
  });

  describe('is called wrongly', () => {
    const body = Buffer.from('{"type":"misuse"}');
    const secret = generateSigningSecret();
    const headers = signedHeaders([secret], body);

    it('without a secret: a TypeError, not a verification failure', () => {
      expect(() => verifyWebhook(body, headers, [], { now })).toThrow(TypeError);
      expect(() => verifyWebhook(body, headers, '', { now })).toThrow(TypeError);
      expect(() => verifyWebhook(body, headers, [secret, ''], { now })).toThrow(TypeError);
    });

    it('with a body a JSON parser already turned into an object: a TypeError naming the raw-body fix', () => {
      const parsed = JSON.parse(body.toString('utf8')) as unknown as Buffer;
      expect(() => verifyWebhook(parsed, headers, secret, { now })).toThrow(/express\.raw/);
    });
  });
});
