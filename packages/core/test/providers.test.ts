/**
 * The provider registry (packages/core/src/providers/): each provider's signer agrees with
 * its verifier, every provider list is derived from the registry, docs/sources.md's
 * Providers table says what the files say, and GitLab's token check.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractEventType } from '../src/events.ts';
import {
  checkVerificationSecret, createHandshakeResponder, createVerifier, HANDSHAKE_PROVIDERS, HANDSHAKE_SECRET_PROVIDERS, PROVIDER_TYPE_HEADERS, PROVIDERS,
  SAMPLE_PROVIDERS, VERIFICATION_PROVIDERS, type Provider, type VerificationProvider, type VerificationSettings,
} from '../src/providers/index.ts';
import { DEFAULT_TOLERANCE_SECONDS } from '../src/verification.ts';

const settings = (provider: VerificationProvider): VerificationSettings => ({ provider, mode: 'reject', tolerance_seconds: DEFAULT_TOLERANCE_SECONDS });
const all: readonly Provider[] = PROVIDERS;
const NOW_MS = 1_767_225_600_000;
const BODY = Buffer.from('{"id":"evt_1","type":"thing.happened"}');

describe('the registry', () => {
  it('names each provider once, in lower case', () => {
    const names = all.map((provider) => provider.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z][a-z0-9-]*$/);
  });

  it('derives every list from the providers\' files', () => {
    expect(VERIFICATION_PROVIDERS).toEqual(all.filter((provider) => provider.verification).map((provider) => provider.name));
    expect(VERIFICATION_PROVIDERS).toEqual(['github', 'stripe', 'shopify', 'slack', 'standard-webhooks', 'gitlab', 'hmac']);
    expect(HANDSHAKE_PROVIDERS).toEqual(['slack', 'meta', 'graph', 'dropbox', 'zoom', 'twitter']);
    expect(HANDSHAKE_SECRET_PROVIDERS).toEqual(['meta', 'zoom', 'twitter']);
    expect(PROVIDER_TYPE_HEADERS.map((hint) => hint.header)).toEqual(['x-github-event', 'x-shopify-topic', 'x-gitlab-event']);
    expect(SAMPLE_PROVIDERS.map((provider) => provider.name)).toEqual(['github', 'stripe', 'shopify', 'slack', 'gitlab']);
  });

  it('has a verifier for every provider it has samples of, so `hook trigger` signs what an endpoint can check', () => {
    for (const provider of SAMPLE_PROVIDERS) expect(provider.verification, provider.name).toBeDefined();
  });

  for (const provider of all.filter((candidate) => candidate.signer && candidate.verification)) {
    it(`${provider.name}: what its signer signs, its verifier accepts, and refuses under another secret or with another body`, () => {
      const secret = provider.name === 'standard-webhooks' ? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' : `${provider.name}-secret`;
      const other = provider.name === 'standard-webhooks' ? 'whsec_b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldA==' : `${provider.name}-other-secret`;
      const captured = { 'webhook-id': 'msg_1' };
      const signed = provider.signer!.sign(secret, BODY, NOW_MS / 1000, captured);
      for (const header of provider.signer!.headers) expect(signed[header] ?? captured[header as 'webhook-id'], header).toBeDefined();
      const headers = { ...captured, ...signed };
      expect(createVerifier(settings(provider.name as VerificationProvider), secret)(headers, BODY, NOW_MS)).toEqual({ provider: provider.name, verified: true, reason: null });
      expect(createVerifier(settings(provider.name as VerificationProvider), other)(headers, BODY, NOW_MS)).toMatchObject({ verified: false, reason: 'no_signature_matches' });
      if (provider.name !== 'gitlab') expect(createVerifier(settings(provider.name as VerificationProvider), secret)(headers, Buffer.from(`${BODY} `), NOW_MS)).toMatchObject({ reason: 'no_signature_matches' });
      if (provider.signer!.signsTimestamp) {
        expect(createVerifier(settings(provider.name as VerificationProvider), secret)(headers, BODY, NOW_MS + (DEFAULT_TOLERANCE_SECONDS + 1) * 1000)).toMatchObject({ reason: 'timestamp_outside_tolerance' });
      }
    });
  }

  it('builds each handshake responder, refusing none of its own requests it does not recognise', () => {
    for (const provider of HANDSHAKE_PROVIDERS) {
      const respond = createHandshakeResponder(provider, HANDSHAKE_SECRET_PROVIDERS.includes(provider) ? 'secret' : null);
      expect(respond({ method: 'POST', query: '', contentType: 'application/json', body: Buffer.from('{"hello":"world"}') }), provider).toBeNull();
    }
  });

  it('refuses an empty secret for every verifying provider, and checks a secret\'s shape where it has one', () => {
    for (const provider of VERIFICATION_PROVIDERS) expect(checkVerificationSecret(provider, '')).toBe('the secret is empty');
    expect(checkVerificationSecret('standard-webhooks', 'whsec_not base64!')).toMatch(/whsec_/);
    expect(checkVerificationSecret('gitlab', 'any token')).toBeNull();
  });
});

describe('docs/sources.md, Providers', () => {
  const page = readFileSync(new URL('../../../docs/sources.md', import.meta.url), 'utf8');
  const table = page.split('\n### Providers\n')[1]!.split('\n\n').find((block) => block.startsWith('| Provider |'))!;
  const rows = table.split('\n').slice(2).map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()));

  it('has one row per provider, in the registry\'s order, saying what its file has', () => {
    expect(rows.map((row) => row[0])).toEqual(all.map((provider) => `\`${provider.name}\``));
    for (const [name, verify, handshake, typeHeader, dedupe, samples] of rows) {
      const provider = all.find((candidate) => `\`${candidate.name}\`` === name)!;
      expect(verify === 'yes', `${name} --verify`).toBe(provider.verification !== undefined);
      expect(handshake === 'yes', `${name} --handshake`).toBe(provider.handshake !== undefined);
      expect(samples === 'yes', `${name} samples`).toBe(provider.samples !== undefined);
      expect(/`([^`]+)`/.exec(typeHeader!)?.[1]?.toLowerCase() ?? null, `${name} type header`).toBe(provider.typeHeader?.header ?? null);
      const hint = provider.dedupe === undefined ? '' : 'header' in provider.dedupe ? `--dedupe-header ${provider.dedupe.header}` : `--dedupe-field ${provider.dedupe.json_field}`;
      expect(dedupe!.replaceAll('`', '').toLowerCase(), `${name} dedupe`).toBe(hint.toLowerCase());
    }
  });
});

describe('GitLab: X-Gitlab-Token, the secret token itself', () => {
  const verify = createVerifier(settings('gitlab'), 'glwt-secret-token-1234');

  it('accepts the endpoint\'s token, trimmed as sent, and nothing else', () => {
    expect(verify({ 'x-gitlab-token': 'glwt-secret-token-1234' }, BODY, NOW_MS)).toEqual({ provider: 'gitlab', verified: true, reason: null });
    expect(verify({ 'x-gitlab-token': ' glwt-secret-token-1234 ' }, BODY, NOW_MS)).toMatchObject({ verified: true });
    for (const token of ['glwt-secret-token-123', 'glwt-secret-token-12345', 'GLWT-SECRET-TOKEN-1234', '']) {
      expect(verify({ 'x-gitlab-token': token }, BODY, NOW_MS), token).toEqual({ provider: 'gitlab', verified: false, reason: 'no_signature_matches', header: 'x-gitlab-token' });
    }
    expect(verify({}, BODY, NOW_MS)).toEqual({ provider: 'gitlab', verified: false, reason: 'missing_header', header: 'x-gitlab-token' });
  });

  it('checks no timestamp: a token verifies at any age', () => {
    expect(verify({ 'x-gitlab-token': 'glwt-secret-token-1234' }, BODY, NOW_MS + 365 * 86_400_000)).toMatchObject({ verified: true });
  });

  it('names the event by X-Gitlab-Event, and keeps GitLab\'s retries apart by Idempotency-Key', () => {
    const json = Buffer.from('{"object_kind":"push","type":"not this"}');
    expect(extractEventType({ 'x-gitlab-event': 'Push Hook' }, 'application/json', json)).toBe('Push Hook');
    expect(PROVIDERS.find((provider) => provider.name === 'gitlab')!.dedupe).toEqual({ header: 'idempotency-key' });
  });

  it('shapes a sample as GitLab sends it: its headers, fresh ids, the token', () => {
    const gitlab = SAMPLE_PROVIDERS.find((provider) => provider.name === 'gitlab')!;
    let n = 0;
    const context = { nowMs: NOW_MS, uuid: () => `00000000-0000-4000-8000-00000000000${n++}`, token: (length: number, alphabet: string) => alphabet[0]!.repeat(length), endpointUrl: 'http://relay/in/x' };
    const request = gitlab.samples.request('merge_request', { object_kind: 'merge_request', object_attributes: { action: 'open' } }, 'tok', context);
    expect(request.headers).toMatchObject({ 'X-Gitlab-Event': 'Merge Request Hook', 'X-Gitlab-Token': 'tok', 'Content-Type': 'application/json', 'Idempotency-Key': expect.stringMatching(/^0{8}-/) });
    expect(request.headers['Idempotency-Key']).not.toBe(request.headers['X-Gitlab-Event-UUID']);
    expect(JSON.parse(request.body.toString('utf8')).object_attributes).toEqual({ action: 'open', created_at: '2026-01-01T00:00:00+00:00', updated_at: '2026-01-01T00:00:00+00:00' });
  });
});
