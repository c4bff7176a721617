/**
 * `hook send --fixture <file> --resign <provider> --secret-file <path>` (docs/cli.md#hook-send):
 * a captured request signed again with a fresh timestamp, for providers that sign one
 * (a verifying endpoint refuses their signatures once older than its tolerance). Only the
 * signature headers change; the body bytes are the fixture's. The signatures are the ones
 * `hook trigger` sends (signatures.ts) and the relay signs deliveries with (Standard Webhooks).
 */
import { checkVerificationSecret, signPayload, type VerificationProvider } from '@hook/core';
import { FIXTURE_INVALID, UsageError, UserError } from '../errors.ts';
import { slackSignature, stripeSignature } from './signatures.ts';

interface Resigner {
  title: string;
  /** The headers a capture of this provider holds (its signature first): a fixture without them was not signed by it. */
  capturedHeaders: readonly string[];
  /** The signature headers for `body` at `timestampSeconds`, given the fixture's headers as captured. */
  sign(secret: string, body: Buffer, timestampSeconds: number, captured: Readonly<Record<string, string>>): Record<string, string>;
}

const RESIGNERS: Partial<Record<VerificationProvider, Resigner>> = {
  stripe: {
    title: 'Stripe',
    capturedHeaders: ['stripe-signature'],
    sign: (secret, body, t) => ({ 'stripe-signature': stripeSignature(secret, body, t) }),
  },
  slack: {
    title: 'Slack',
    capturedHeaders: ['x-slack-signature'],
    sign: (secret, body, t) => ({ 'x-slack-request-timestamp': String(t), 'x-slack-signature': slackSignature(secret, body, t) }),
  },
  'standard-webhooks': {
    title: 'Standard Webhooks',
    capturedHeaders: ['webhook-signature', 'webhook-id'],
    // The message id is signed too, and kept: a receiver that drops repeats by it sees the same message.
    sign: (secret, body, t, captured) => ({ 'webhook-id': captured['webhook-id']!, 'webhook-timestamp': String(t), 'webhook-signature': signPayload(secret, captured['webhook-id']!, t, body) }),
  },
};

/** Providers `--resign` takes: those that sign a timestamp. */
export const RESIGN_PROVIDERS = Object.keys(RESIGNERS);

/** Why a provider cannot be re-signed, in a person's words. */
function whyNot(provider: string): { detail: string; fix: string } {
  if (provider === 'github' || provider === 'shopify') {
    const title = provider === 'github' ? 'GitHub' : 'Shopify';
    return {
      detail: `--resign ${provider}: ${title} signs no timestamp, so a captured ${title} request verifies at any age`,
      fix: `Send the fixture without --resign (its signature is for the secret it was sent with); --resign takes ${RESIGN_PROVIDERS.join(', ')}.`,
    };
  }
  if (provider === 'hmac') {
    return {
      detail: '--resign hmac: the generic hmac scheme\'s headers, hash and signed text are the endpoint\'s own settings, which hook send does not know',
      fix: `Sign the body yourself and pass the headers with -H; --resign takes ${RESIGN_PROVIDERS.join(', ')}.`,
    };
  }
  return { detail: `--resign ${provider}: unknown provider`, fix: `--resign takes ${RESIGN_PROVIDERS.join(', ')} (the providers that sign a timestamp).` };
}

/** The provider `--resign` names, checked before anything is read or sent. */
export function resignerFor(provider: string): Resigner & { provider: VerificationProvider } {
  const resigner = Object.hasOwn(RESIGNERS, provider) ? RESIGNERS[provider as VerificationProvider] : undefined;
  if (resigner === undefined) {
    const { detail, fix } = whyNot(provider);
    throw new UsageError(detail, fix);
  }
  return { ...resigner, provider: provider as VerificationProvider };
}

/**
 * The headers that sign `body` again for `provider` at `nowMs`, to set over the fixture's.
 * `captured` is the fixture's headers as they arrived (names lower-cased); `file` names it in errors.
 */
export function resignedHeaders(resigner: Resigner & { provider: VerificationProvider }, secret: string, body: Buffer, nowMs: number, captured: Readonly<Record<string, string>>, file: string): Record<string, string> {
  const secretProblem = checkVerificationSecret(resigner.provider, secret);
  if (secretProblem !== null) throw new UsageError(`--secret-file: ${secretProblem}`, `Put the secret the endpoint verifies ${resigner.title} signatures with in the file.`);
  const missing = resigner.capturedHeaders.filter((name) => !captured[name]);
  if (missing.length > 0) {
    throw new UserError(
      FIXTURE_INVALID,
      `${file} has no ${missing.join(' or ')} header, so it is not a request ${resigner.title} signed`,
      `Re-sign it as the provider that sent it (its headers: ${Object.keys(captured).sort().join(', ') || 'none'}), or export a ${resigner.title} event with \`hook events export <event> --fixture <file>\`.`,
    );
  }
  return resigner.sign(secret, body, Math.floor(nowMs / 1000), captured);
}
