/**
 * The providers Hook knows, one file each (docs/sources.md#adding-a-provider): what each
 * exports is described in provider.ts. Every list of providers is derived from PROVIDERS:
 * those that verify (the REST enum of `verification.provider`, `--verify`), those that
 * answer a handshake, the type headers ingest reads, the samples `hook trigger` sends and
 * the providers `hook send --resign` signs again. A new provider is its file, listed here,
 * plus `hook trigger`'s fixtures if it has samples.
 */
import type { HandshakeResponder } from '../handshakes.ts';
import type { SchemeSettings, VerificationFailureOf, VerificationReason, VerificationResultOf, VerifierOf } from '../verification.ts';
import { dropbox } from './dropbox.ts';
import { github } from './github.ts';
import { gitlab } from './gitlab.ts';
import { graph } from './graph.ts';
import { hmac } from './hmac.ts';
import { meta } from './meta.ts';
import type { Provider } from './provider.ts';
import { shopify } from './shopify.ts';
import { slack } from './slack.ts';
import { standardWebhooks } from './standard-webhooks.ts';
import { stripe } from './stripe.ts';
import { twitter } from './twitter.ts';
import { zoom } from './zoom.ts';

export type { Json, JsonObject, Provider, ProviderHandshake, ProviderSamples, ProviderSigner, ProviderVerification, SampleContext, SampleRequest } from './provider.ts';
export { standardWebhooksKey } from './standard-webhooks.ts';

/** Every provider, in the order lists show them: signature schemes, the generic `hmac`, then handshake-only senders. */
export const PROVIDERS = [github, stripe, shopify, slack, standardWebhooks, gitlab, hmac, meta, graph, dropbox, zoom, twitter] as const;

type AnyProvider = (typeof PROVIDERS)[number];
export type ProviderName = AnyProvider['name'];
export type VerificationProvider = Extract<AnyProvider, { verification: object }>['name'];
export type HandshakeProvider = Extract<AnyProvider, { handshake: object }>['name'];

const BY_NAME: ReadonlyMap<string, Provider> = new Map(PROVIDERS.map((provider) => [provider.name, provider]));

/** The provider named `name`, or undefined for a name Hook does not know. */
export function providerNamed(name: string): Provider | undefined {
  return BY_NAME.get(name);
}

/** Providers whose signature an endpoint can check at ingest (docs/sources.md). */
export const VERIFICATION_PROVIDERS: readonly VerificationProvider[] = PROVIDERS.flatMap((provider) => ('verification' in provider ? [provider.name] : []));
/** Providers whose handshake an endpoint can answer (docs/sources.md, Handshakes). */
export const HANDSHAKE_PROVIDERS: readonly HandshakeProvider[] = PROVIDERS.flatMap((provider) => ('handshake' in provider ? [provider.name] : []));
/** Providers whose handshake needs a secret: Meta's verify token, Zoom's secret token, X's consumer secret. */
export const HANDSHAKE_SECRET_PROVIDERS: readonly HandshakeProvider[] = PROVIDERS.flatMap((provider) => ('handshake' in provider && provider.handshake.needsSecret ? [provider.name] : []));

/** An endpoint's verification settings as stored and shown (the secret is kept apart, sealed). */
export interface VerificationSettings extends SchemeSettings {
  provider: VerificationProvider;
}
/** What an event records about its verification. */
export type VerificationResult = VerificationResultOf<VerificationProvider>;
/** The header a failure is about, for the 401's detail. */
export type VerificationFailure = VerificationFailureOf<VerificationProvider>;
export type Verifier = VerifierOf<VerificationProvider>;

/** Problems with a secret for a provider, in words; null when fine. */
export function checkVerificationSecret(provider: VerificationProvider, secret: string): string | null {
  if (secret.length === 0) return 'the secret is empty';
  return providerNamed(provider)!.verification!.checkSecret?.(secret) ?? null;
}

/**
 * The verifier for one endpoint's settings and secret, following the provider's published
 * scheme (written in its file). Built once per endpoint configuration; the answers it
 * gives are made here, once.
 */
export function createVerifier(settings: VerificationSettings, secret: string): Verifier {
  const { provider } = settings;
  const ok: VerificationResult = { provider, verified: true, reason: null };
  const fail = (reason: VerificationReason, header: string): VerificationFailure => ({ provider, verified: false, reason, header });
  return providerNamed(provider)!.verification!.create(settings, secret, { ok, fail });
}

/** An endpoint's handshake as stored (the secret kept apart, sealed). */
export interface HandshakeSettings {
  provider: HandshakeProvider;
  /** The secret's last 4 characters, when there is one. */
  secret_hint?: string;
}

/** The responder for an endpoint's handshake; `secret` is required for HANDSHAKE_SECRET_PROVIDERS. */
export function createHandshakeResponder(provider: HandshakeProvider, secret: string | null): HandshakeResponder {
  return providerNamed(provider)!.handshake!.create(secret);
}

/**
 * The request headers that name an event's type, from the providers that send one, in
 * registry order (events.ts reads them after Hook's own `x-event-type`).
 */
export const PROVIDER_TYPE_HEADERS: ReadonlyArray<{ header: string; withAction: boolean }> = PROVIDERS.flatMap((provider) => ('typeHeader' in provider ? [provider.typeHeader] : []));

/** The providers that read a type from a JSON body in their own way (Slack's event_callback). */
export const PROVIDER_BODY_TYPES: ReadonlyArray<(json: Record<string, unknown>) => string | null> = PROVIDERS.flatMap((provider) => ('typeFromBody' in provider ? [provider.typeFromBody] : []));

/** The providers `hook trigger` has samples of, in the order `hook trigger --list` shows them. */
export const SAMPLE_PROVIDERS: ReadonlyArray<Provider & { samples: NonNullable<Provider['samples']>; signer: NonNullable<Provider['signer']> }> =
  PROVIDERS.flatMap((provider) => ('samples' in provider && 'signer' in provider ? [provider] : []));
