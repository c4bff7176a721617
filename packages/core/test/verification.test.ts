import { describe, expect, it } from 'vitest';
import { createVerifier, type VerificationSettings } from '../src/providers/index.ts';
import { DEFAULT_TOLERANCE_SECONDS } from '../src/verification.ts';

const settings = (provider: VerificationSettings['provider'], extra: Partial<VerificationSettings> = {}): VerificationSettings =>
  ({ provider, mode: 'reject', tolerance_seconds: DEFAULT_TOLERANCE_SECONDS, ...extra });

// The examples the providers publish, checked as published.
describe('published examples', () => {
  it("GitHub's (docs: Validating webhook deliveries)", () => {
    const verify = createVerifier(settings('github'), "It's a Secret to Everybody");
    const headers = { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' };
    expect(verify(headers, Buffer.from('Hello, World!'), Date.now())).toEqual({ provider: 'github', verified: true, reason: null });
    expect(verify(headers, Buffer.from('Hello, World?'), Date.now())).toMatchObject({ verified: false, reason: 'no_signature_matches' });
  });

  it("Slack's scheme (docs: Verifying requests from Slack): v0=hex HMAC-SHA256 of v0:<ts>:<body>, ts within tolerance", async () => {
    const { createHmac } = await import('node:crypto');
    const verify = createVerifier(settings('slack'), '8f742231b10e8888abcd99yyyzzz85a5');
    const body = Buffer.from('token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&command=%2Fwebbot&text=');
    const signature = `v0=${createHmac('sha256', '8f742231b10e8888abcd99yyyzzz85a5').update(`v0:1531420618:${body}`).digest('hex')}`;
    const headers = { 'x-slack-request-timestamp': '1531420618', 'x-slack-signature': signature };
    expect(verify(headers, body, 1531420618_000 + 10_000)).toEqual({ provider: 'slack', verified: true, reason: null });
    expect(verify(headers, body, 1531420618_000 + 301_000)).toMatchObject({ verified: false, reason: 'timestamp_outside_tolerance', header: 'x-slack-request-timestamp' });
  });

  it("Standard Webhooks' (the specification's test vector)", () => {
    const verify = createVerifier(settings('standard-webhooks'), 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    const headers = { 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp': '1614265330', 'webhook-signature': 'v1,bm9ldHUjKzFob2VudXRob2VodWUzMjRvdWVvdW9ldQo= v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' };
    expect(verify(headers, Buffer.from('{"test": 2432232314}'), 1614265330_000)).toEqual({ provider: 'standard-webhooks', verified: true, reason: null });
  });
});

describe('failures name the check', () => {
  const body = Buffer.from('{"ok":true}');
  it('missing and malformed headers', () => {
    const github = createVerifier(settings('github'), 's');
    expect(github({}, body, 0)).toMatchObject({ reason: 'missing_header', header: 'x-hub-signature-256' });
    expect(github({ 'x-hub-signature-256': 'sha1=abc' }, body, 0)).toMatchObject({ reason: 'malformed_header' });
    const stripe = createVerifier(settings('stripe'), 's');
    expect(stripe({ 'stripe-signature': 'v1=00' }, body, 0)).toMatchObject({ reason: 'malformed_header', header: 'stripe-signature' });
    const shopify = createVerifier(settings('shopify'), 's');
    expect(shopify({ 'x-shopify-hmac-sha256': 'not base64!' }, body, 0)).toMatchObject({ reason: 'malformed_header' });
  });

  it('generic HMAC: sha512, base64, prefix, timestamp.body', async () => {
    const { createHmac } = await import('node:crypto');
    const now = 1_700_000_000_000;
    const verify = createVerifier(settings('hmac', { header: 'x-sig', algorithm: 'sha512', encoding: 'base64', prefix: 'sig=', signed: 'timestamp.body', timestamp_header: 'x-ts' }), 'k');
    const signature = `sig=${createHmac('sha512', 'k').update(`1700000000.${body}`).digest('base64')}`;
    expect(verify({ 'x-sig': signature, 'x-ts': '1700000000' }, body, now)).toEqual({ provider: 'hmac', verified: true, reason: null });
    expect(verify({ 'x-sig': signature }, body, now)).toMatchObject({ reason: 'missing_header', header: 'x-ts' });
    expect(verify({ 'x-sig': signature, 'x-ts': '1700000000' }, body, now + 400_000)).toMatchObject({ reason: 'timestamp_outside_tolerance' });
    expect(verify({ 'x-sig': signature, 'x-ts': '1700000001' }, body, now)).toMatchObject({ reason: 'no_signature_matches' });
  });
});
