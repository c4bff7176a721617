/**
 * What `hook trigger` can send: per provider, the sample events shipped with the CLI
 * (apps/cli/fixtures/<provider>/<event>.json, shaped as the provider documents its
 * payloads) and how that provider sends one: its headers, how it serialises the body,
 * its signature scheme, and the ids and timestamps a handler checks, made fresh on
 * every send. The clock and randomness come in through `SampleContext`.
 */
import githubPing from '../../fixtures/github/ping.json' with { type: 'json' };
import githubPullRequest from '../../fixtures/github/pull_request.json' with { type: 'json' };
import githubPush from '../../fixtures/github/push.json' with { type: 'json' };
import shopifyOrdersCreate from '../../fixtures/shopify/orders/create.json' with { type: 'json' };
import shopifyProductsUpdate from '../../fixtures/shopify/products/update.json' with { type: 'json' };
import slackAppMention from '../../fixtures/slack/app_mention.json' with { type: 'json' };
import slackUrlVerification from '../../fixtures/slack/url_verification.json' with { type: 'json' };
import stripeCheckoutSessionCompleted from '../../fixtures/stripe/checkout.session.completed.json' with { type: 'json' };
import stripeInvoicePaid from '../../fixtures/stripe/invoice.paid.json' with { type: 'json' };
import stripePaymentIntentSucceeded from '../../fixtures/stripe/payment_intent.succeeded.json' with { type: 'json' };
import { githubSignature1, githubSignature256, shopifyHmac, slackSignature, stripeSignature } from './signatures.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** The clock and randomness a sample is made fresh with. */
export interface SampleContext {
  nowMs: number;
  uuid(): string;
  /** `length` characters drawn from `alphabet`. */
  token(length: number, alphabet: string): string;
  /** The endpoint's receiving URL (GitHub's ping names the URL its hook posts to). */
  endpointUrl: string;
}

/** The request a provider would send: its headers (as the provider spells them) and the exact body bytes, signed. */
export interface SampleRequest {
  headers: Record<string, string>;
  body: Buffer;
}

export interface SampleEvent {
  /** The event name as the provider calls it (the GitHub event, Stripe type, Shopify topic, Slack event type). */
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

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER_ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const HEX = '0123456789abcdef';

function copyOf(sample: JsonObject): JsonObject {
  return structuredClone(sample);
}

/** The object at `path` inside `root`, when every step is an object. */
function objectAt(root: JsonObject, ...path: string[]): JsonObject | undefined {
  let node: Json | undefined = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = node[key];
  }
  return node !== null && typeof node === 'object' && !Array.isArray(node) ? node : undefined;
}

function unixSeconds(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}

/** ISO 8601 without milliseconds, as GitHub writes its times. */
function isoSeconds(nowMs: number): string {
  return new Date(unixSeconds(nowMs) * 1000).toISOString().replace('.000Z', 'Z');
}

function sample(name: string, description: string, json: unknown): SampleEvent {
  return { name, description, sample: json as JsonObject };
}

const github: Provider = {
  name: 'github',
  title: 'GitHub',
  defaultSecret: 'hook-test-github-secret',
  signature: 'X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body> (and the legacy X-Hub-Signature: sha1=…)',
  deliveryIdHeader: 'X-GitHub-Delivery',
  events: [
    sample('push', 'Commits pushed to a branch (refs/heads/main)', githubPush),
    sample('pull_request', 'A pull request opened (action "opened")', githubPullRequest),
    sample('ping', 'Sent when a webhook is created', githubPing),
  ],
  request(event, secret, context) {
    const payload = copyOf(event.sample);
    const now = isoSeconds(context.nowMs);
    if (event.name === 'push') {
      const repository = objectAt(payload, 'repository');
      if (repository) repository.pushed_at = unixSeconds(context.nowMs);
      const head = objectAt(payload, 'head_commit');
      if (head) head.timestamp = now;
      const commits = payload.commits;
      if (Array.isArray(commits)) for (const commit of commits) if (commit && typeof commit === 'object' && !Array.isArray(commit)) commit.timestamp = now;
    }
    if (event.name === 'pull_request') {
      const pull = objectAt(payload, 'pull_request');
      if (pull) Object.assign(pull, { created_at: now, updated_at: now });
    }
    const hook = objectAt(payload, 'hook');
    if (hook) Object.assign(hook, { created_at: now, updated_at: now });
    const hookConfig = objectAt(payload, 'hook', 'config');
    if (hookConfig) hookConfig.url = context.endpointUrl;
    // GitHub sends compact JSON.
    const body = Buffer.from(JSON.stringify(payload));
    const hookId = typeof payload.hook_id === 'number' ? payload.hook_id : 512093374;
    const repositoryId = objectAt(payload, 'repository')?.id;
    return {
      body,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': `GitHub-Hookshot/${context.token(7, HEX)}`,
        'X-GitHub-Delivery': context.uuid(),
        'X-GitHub-Event': event.name,
        'X-GitHub-Hook-ID': String(hookId),
        'X-GitHub-Hook-Installation-Target-ID': String(repositoryId ?? ''),
        'X-GitHub-Hook-Installation-Target-Type': 'repository',
        'X-Hub-Signature': githubSignature1(secret, body),
        'X-Hub-Signature-256': githubSignature256(secret, body),
      },
    };
  },
};

const stripe: Provider = {
  name: 'stripe',
  title: 'Stripe',
  defaultSecret: 'whsec_hook_test_stripe_secret',
  signature: 'Stripe-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<body>">',
  deliveryIdHeader: 'the event\'s "id" (evt_…)',
  events: [
    sample('payment_intent.succeeded', 'A payment completed (a PaymentIntent for $49.90)', stripePaymentIntentSucceeded),
    sample('checkout.session.completed', 'A Checkout Session paid and complete', stripeCheckoutSessionCompleted),
    sample('invoice.paid', 'A subscription invoice paid', stripeInvoicePaid),
  ],
  request(event, secret, context) {
    const payload = copyOf(event.sample);
    const now = unixSeconds(context.nowMs);
    payload.id = `evt_${context.token(24, ALPHANUMERIC)}`;
    payload.created = now;
    const request = objectAt(payload, 'request');
    if (request) Object.assign(request, { id: `req_${context.token(14, ALPHANUMERIC)}`, idempotency_key: context.uuid() });
    // Stripe sends its events pretty-printed, two spaces.
    const body = Buffer.from(JSON.stringify(payload, null, 2));
    return {
      body,
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        'Stripe-Signature': stripeSignature(secret, body, now),
      },
    };
  },
};

const SHOPIFY_SHOP_DOMAIN = 'hook-test-shop.myshopify.com';
const SHOPIFY_API_VERSION = '2025-07';

const shopify: Provider = {
  name: 'shopify',
  title: 'Shopify',
  defaultSecret: 'hook-test-shopify-secret',
  signature: 'X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>',
  deliveryIdHeader: 'X-Shopify-Webhook-Id',
  events: [
    sample('orders/create', 'An order placed (#1042, two mugs)', shopifyOrdersCreate),
    sample('products/update', 'A product changed (Signature Mug, two variants)', shopifyProductsUpdate),
  ],
  request(event, secret, context) {
    const payload = copyOf(event.sample);
    const body = Buffer.from(JSON.stringify(payload));
    return {
      body,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'Shopify-Captain-Hook',
        'X-Shopify-Topic': event.name,
        'X-Shopify-Hmac-Sha256': shopifyHmac(secret, body),
        'X-Shopify-Shop-Domain': SHOPIFY_SHOP_DOMAIN,
        'X-Shopify-API-Version': SHOPIFY_API_VERSION,
        'X-Shopify-Webhook-Id': context.uuid(),
        'X-Shopify-Event-Id': context.uuid(),
        'X-Shopify-Triggered-At': new Date(context.nowMs).toISOString(),
      },
    };
  },
};

const slack: Provider = {
  name: 'slack',
  title: 'Slack',
  defaultSecret: 'hook-test-slack-signing-secret',
  signature: 'X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<X-Slack-Request-Timestamp>:<body>">',
  deliveryIdHeader: 'the event\'s "event_id" (Ev…)',
  events: [
    sample('app_mention', 'An Events API event_callback: the app mentioned in a channel', slackAppMention),
    sample('url_verification', 'The challenge Slack sends when a Request URL is saved (answer with the challenge)', slackUrlVerification),
  ],
  request(event, secret, context) {
    const payload = copyOf(event.sample);
    const now = unixSeconds(context.nowMs);
    if (payload.type === 'event_callback') {
      payload.event_id = `Ev${context.token(9, UPPER_ALPHANUMERIC)}`;
      payload.event_time = now;
      const inner = objectAt(payload, 'event');
      if (inner) {
        const ts = `${now}.${String(context.nowMs % 1000).padStart(3, '0')}${context.token(3, '0123456789')}`;
        Object.assign(inner, { ts, event_ts: ts, client_msg_id: context.uuid() });
      }
    }
    if (payload.type === 'url_verification') payload.challenge = context.token(48, ALPHANUMERIC);
    const body = Buffer.from(JSON.stringify(payload));
    return {
      body,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
        'X-Slack-Request-Timestamp': String(now),
        'X-Slack-Signature': slackSignature(secret, body, now),
      },
    };
  },
};

/** Every provider `hook trigger` knows, in the order `hook trigger --list` shows them. */
export const PROVIDERS: readonly Provider[] = [github, stripe, shopify, slack];
