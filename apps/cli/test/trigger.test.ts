/**
 * `hook trigger`'s samples and `hook send --resign`, from the provider registry
 * (packages/core/src/providers/): each sample a provider file lists has its fixture and
 * each fixture its sample; each sample is signed so the provider's own verifier accepts it;
 * --resign takes exactly the providers that sign a timestamp and refuses the rest in words.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createVerifier, DEFAULT_TOLERANCE_SECONDS, PROVIDERS, type VerificationProvider } from '@hook/core';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.ts';
import { FIXTURES } from '../src/trigger/fixtures.ts';
import { PROVIDERS as TRIGGER_PROVIDERS } from '../src/trigger/providers.ts';
import { RESIGN_PROVIDERS, resignedHeaders, resignerFor } from '../src/trigger/resign.ts';

const FIXTURES_DIR = new URL('../fixtures/', import.meta.url).pathname;

function jsonFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? jsonFiles(path) : name.endsWith('.json') ? [relative(FIXTURES_DIR, path).slice(0, -'.json'.length)] : [];
  });
}

const context = (nowMs: number) => ({ nowMs, uuid: () => crypto.randomUUID(), token: (length: number, alphabet: string) => alphabet.slice(0, 1).repeat(length), endpointUrl: 'http://127.0.0.1/in/ep' });

describe('hook trigger samples', () => {
  it('has a fixture for every sample a provider lists, and a sample for every fixture', () => {
    const samples = TRIGGER_PROVIDERS.flatMap((provider) => provider.events.map((event) => `${provider.name}/${event.name}`));
    expect(Object.keys(FIXTURES).sort()).toEqual(samples.sort());
    expect(jsonFiles(FIXTURES_DIR).sort()).toEqual(samples.sort());
  });

  for (const provider of TRIGGER_PROVIDERS) {
    it(`${provider.name}: every sample verifies with the test secret under the provider's verifier, not with another`, () => {
      const nowMs = Date.now();
      const settings = { provider: provider.name as VerificationProvider, mode: 'reject' as const, tolerance_seconds: DEFAULT_TOLERANCE_SECONDS };
      for (const event of provider.events) {
        const request = provider.request(event, provider.defaultSecret, context(nowMs));
        const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]));
        expect(createVerifier(settings, provider.defaultSecret)(headers, request.body, nowMs), event.name).toMatchObject({ verified: true });
        expect(createVerifier(settings, `${provider.defaultSecret}-wrong`)(headers, request.body, nowMs), event.name).toMatchObject({ verified: false, reason: 'no_signature_matches' });
      }
    });
  }

  it('sends a fresh copy each time: the fixture itself is never changed', () => {
    const github = TRIGGER_PROVIDERS.find((provider) => provider.name === 'github')!;
    const push = github.events.find((event) => event.name === 'push')!;
    const before = JSON.stringify(push.sample);
    github.request(push, 's', context(Date.now()));
    expect(JSON.stringify(push.sample)).toBe(before);
  });
});

describe('hook send --resign', () => {
  it('takes the providers whose file signs a timestamp, and refuses the others in words', () => {
    expect(RESIGN_PROVIDERS).toEqual(PROVIDERS.filter((provider) => 'signer' in provider && provider.signer.signsTimestamp).map((provider) => provider.name));
    expect(RESIGN_PROVIDERS).toEqual(['stripe', 'slack', 'standard-webhooks']);
    expect(() => resignerFor('gitlab')).toThrow(UsageError);
    expect(() => resignerFor('gitlab')).toThrow('--resign gitlab: GitLab signs no timestamp, so a captured GitLab request verifies at any age');
    expect(() => resignerFor('hmac')).toThrow(/the generic hmac scheme's headers, hash and signed text are the endpoint's own settings/);
    expect(() => resignerFor('paypal')).toThrow('--resign paypal: unknown provider');
  });

  it('signs a capture again so the provider\'s verifier accepts it now', () => {
    const nowMs = Date.now();
    const body = Buffer.from('{"id":"evt_1","type":"invoice.paid"}');
    const stripe = resignerFor('stripe');
    const headers = resignedHeaders(stripe, 'whsec_x', body, nowMs, { 'stripe-signature': 't=1,v1=00' }, 'invoice.json');
    expect(createVerifier({ provider: 'stripe', mode: 'reject', tolerance_seconds: 300 }, 'whsec_x')(headers, body, nowMs)).toMatchObject({ verified: true });
  });
});
