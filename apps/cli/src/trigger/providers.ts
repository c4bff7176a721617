/**
 * What `hook trigger` can send: the providers whose file has samples
 * (packages/core/src/providers/<name>.ts, `samples`), each event's payload from its
 * fixture (fixtures.ts). The provider's file says how it sends one: its headers, how it
 * serialises the body, its signature (the same signer `hook send --resign` uses), and the
 * ids and timestamps a handler checks, made fresh on every send. The clock and randomness
 * come in through `SampleContext`.
 */
import { SAMPLE_PROVIDERS, type JsonObject, type SampleContext, type SampleRequest } from '@hook/core';
import { FIXTURES } from './fixtures.ts';

export type { SampleContext, SampleRequest };

export interface SampleEvent {
  /** The event name as the provider calls it (the GitHub event, Stripe type, Shopify topic, Slack event type, GitLab object kind). */
  name: string;
  description: string;
  sample: JsonObject;
}

export interface Provider {
  name: string;
  title: string;
  /** The test secret used without --secret: fixed, so a handler is configured once. */
  defaultSecret: string;
  /** Where the signature goes, for people: `X-Hub-Signature-256: sha256=<hex HMAC of the body>`. */
  signature: string;
  /** The provider's own id for one delivery, which handlers use to drop repeats. */
  deliveryIdHeader: string;
  events: readonly SampleEvent[];
  /** The request for `event` (one of `events`), from a fresh copy of its sample. */
  request(event: SampleEvent, secret: string, context: SampleContext): SampleRequest;
}

function fixture(provider: string, event: string): JsonObject {
  const sample = FIXTURES[`${provider}/${event}`];
  if (sample === undefined) throw new Error(`apps/cli/fixtures/${provider}/${event}.json is not in apps/cli/src/trigger/fixtures.ts`);
  return sample as JsonObject;
}

/** Every provider `hook trigger` knows, in the order `hook trigger --list` shows them. */
export const PROVIDERS: readonly Provider[] = SAMPLE_PROVIDERS.map(({ name, title, signer, samples }) => ({
  name,
  title,
  defaultSecret: samples.defaultSecret,
  signature: signer.description,
  deliveryIdHeader: samples.deliveryIdHeader,
  events: samples.events.map((event) => ({ ...event, sample: fixture(name, event.name) })),
  request: (event, secret, context) => samples.request(event.name, structuredClone(event.sample), secret, context),
}));
