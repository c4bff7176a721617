/**
 * `hook trigger` against a real relay: every sample it lists reaches a real local
 * receiver through a URL destination, with the provider's headers, and its signature
 * verifies the way a handler verifies it — with the provider's own SDK where npm has one
 * (stripe's constructEvent, @octokit/webhooks-methods' verify), with the algorithm the
 * provider documents for Shopify and Slack, GitLab's token compared as its docs say — and
 * fails with a wrong secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { verify as verifyGithub } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookUser } from '../support/cli.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../support/receiver.ts';
import { createEndpoint, startTestRelay, type TestRelay } from '../support/relay.ts';

let relay: TestRelay;
let receiver: Receiver;
let endpoint: any;
const user = new HookUser();
const stripe = new Stripe('sk_test_hook_trigger');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Slack refuses requests whose timestamp is more than five minutes off (its docs, and Bolt). */
const SLACK_MAX_AGE_S = 5 * 60;

beforeAll(async () => {
  relay = await startTestRelay({ allowPrivateDestinations: true }, { workerPollMs: 20 });
  receiver = await startReceiver();
  await user.json(['signup', '--api-url', relay.baseUrl]);
  endpoint = await user.json(['endpoints', 'create', 'provider-handlers', '--destination', receiver.url]);
});

afterAll(async () => {
  await receiver?.close();
  await relay?.close();
  user.remove();
});

/** The request the receiver got for a Hook event (its x-hook-event-id). */
async function delivered(eventId: string): Promise<ReceivedRequest> {
  await expect.poll(() => receiver.requests.some((request) => request.headers['x-hook-event-id'] === eventId), { timeout: 10_000 }).toBe(true);
  return receiver.requests.find((request) => request.headers['x-hook-event-id'] === eventId)!;
}

function header(request: ReceivedRequest, name: string): string {
  const value = request.headers[name];
  if (typeof value !== 'string') throw new Error(`no ${name} header: ${JSON.stringify(request.headers)}`);
  return value;
}

function sameBase64(a: string, b: string): boolean {
  const left = Buffer.from(a, 'base64');
  const right = Buffer.from(b, 'base64');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Checks the request as that provider's handler would, with `secret`: true when it verifies. */
async function verifiesWith(provider: string, request: ReceivedRequest, secret: string): Promise<boolean> {
  const body = request.body.toString('utf8');
  switch (provider) {
    case 'github':
      return verifyGithub(secret, body, header(request, 'x-hub-signature-256'));
    case 'stripe':
      try {
        stripe.webhooks.constructEvent(request.body, header(request, 'stripe-signature'), secret);
        return true;
      } catch (error) {
        expect((error as Error).constructor.name).toBe('StripeSignatureVerificationError');
        return false;
      }
    case 'shopify':
      // Shopify's documented check: the base64 HMAC-SHA256 of the raw body, compared in constant time.
      return sameBase64(createHmac('sha256', secret).update(request.body).digest('base64'), header(request, 'x-shopify-hmac-sha256'));
    case 'slack': {
      // Slack's documented check: a fresh timestamp, then v0= HMAC-SHA256 of "v0:<timestamp>:<body>".
      const timestamp = header(request, 'x-slack-request-timestamp');
      if (Math.abs(Date.now() / 1000 - Number(timestamp)) > SLACK_MAX_AGE_S) return false;
      const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`v0:${timestamp}:`).update(request.body).digest('hex')}`);
      const given = Buffer.from(header(request, 'x-slack-signature'));
      return expected.length === given.length && timingSafeEqual(expected, given);
    }
    case 'gitlab': {
      // GitLab's documented check: X-Gitlab-Token is the secret token itself.
      const given = Buffer.from(header(request, 'x-gitlab-token'));
      const expected = Buffer.from(secret);
      return expected.length === given.length && timingSafeEqual(expected, given);
    }
    default:
      throw new Error(`no verifier for ${provider}`);
  }
}

/** What the provider's payload and headers say the event is, as a handler would route it. */
function eventNameOf(provider: string, request: ReceivedRequest): string {
  const payload = JSON.parse(request.body.toString('utf8'));
  switch (provider) {
    case 'github':
      return header(request, 'x-github-event');
    case 'stripe':
      return stripe.webhooks.constructEvent(request.body, header(request, 'stripe-signature'), 'whsec_hook_test_stripe_secret').type;
    case 'shopify':
      return header(request, 'x-shopify-topic');
    case 'slack':
      return payload.type === 'event_callback' ? payload.event.type : payload.type;
    case 'gitlab':
      return payload.object_kind;
    default:
      throw new Error(`unknown provider ${provider}`);
  }
}

describe('hook trigger', () => {
  it('sends every listed sample, signed so the provider\'s own verification accepts it with the test secret and refuses a wrong one', async () => {
    const listing = await user.json(['trigger', '--list']);
    const samples = listing.providers.flatMap((provider: any) => provider.events.map((event: any) => ({ provider: provider.provider, secret: provider.default_secret, event: event.event })));
    expect(samples.map((sample: any) => `${sample.provider} ${sample.event}`)).toEqual([
      'github push', 'github pull_request', 'github ping',
      'stripe payment_intent.succeeded', 'stripe checkout.session.completed', 'stripe invoice.paid',
      'shopify orders/create', 'shopify products/update',
      'slack app_mention', 'slack url_verification',
      'gitlab push', 'gitlab merge_request',
    ]);
    for (const sample of samples) {
      const sent = await user.json(['trigger', sample.provider, sample.event, '--endpoint', 'provider-handlers']);
      expect(sent).toMatchObject({ event_id: expect.stringMatching(/^evt_/), status: 'pending', provider: sample.provider, event: sample.event, secret: sample.secret, endpoint_id: endpoint.id, endpoint_name: 'provider-handlers' });
      const request = await delivered(sent.event_id);
      expect(request.body.length, `${sample.provider} ${sample.event}`).toBe(sent.size);
      expect(await verifiesWith(sample.provider, request, sample.secret), `${sample.provider} ${sample.event} with its test secret`).toBe(true);
      expect(await verifiesWith(sample.provider, request, `${sample.secret}-wrong`), `${sample.provider} ${sample.event} with a wrong secret`).toBe(false);
      expect(eventNameOf(sample.provider, request)).toBe(sample.event);
    }
  }, 120_000);

  it('sends each provider\'s headers, ids and timestamps fresh on every send, and the body byte for byte as stored', async () => {
    const first = await user.json(['trigger', 'stripe', 'invoice.paid', '--endpoint', endpoint.id]);
    const second = await user.json(['trigger', 'stripe', 'invoice.paid', '--endpoint', endpoint.id]);
    const [a, b] = [await delivered(first.event_id), await delivered(second.event_id)];
    const [eventA, eventB] = [stripe.webhooks.constructEvent(a.body, header(a, 'stripe-signature'), first.secret), stripe.webhooks.constructEvent(b.body, header(b, 'stripe-signature'), second.secret)];
    expect(eventA.id).not.toBe(eventB.id);
    expect(Math.abs(eventA.created - Date.now() / 1000)).toBeLessThan(60);
    expect(header(a, 'content-type')).toBe('application/json; charset=utf-8');
    expect(header(a, 'user-agent')).toMatch(/^Stripe\/1\.0/);
    // The receiver got exactly the bytes the relay stored, which are exactly what was signed.
    const stored = await user.run(['events', 'get', first.event_id, '--body']);
    expect(stored.stdoutBytes.equals(a.body)).toBe(true);

    const push = await delivered((await user.json(['trigger', 'github', 'push', '--endpoint', endpoint.id])).event_id);
    expect(header(push, 'x-github-delivery')).toMatch(UUID);
    expect(header(push, 'user-agent')).toMatch(/^GitHub-Hookshot\//);
    expect(header(push, 'x-hub-signature')).toMatch(/^sha1=[0-9a-f]{40}$/);
    expect(JSON.parse(push.body.toString('utf8'))).toMatchObject({ ref: 'refs/heads/main', repository: { full_name: 'acme-inc/storefront' }, head_commit: { id: expect.any(String) } });

    const order = await delivered((await user.json(['trigger', 'shopify', 'orders/create', '--endpoint', endpoint.id])).event_id);
    expect(header(order, 'x-shopify-webhook-id')).toMatch(UUID);
    expect(header(order, 'x-shopify-shop-domain')).toMatch(/\.myshopify\.com$/);
    expect(header(order, 'x-shopify-api-version')).toMatch(/^\d{4}-\d{2}$/);

    const mentions = [await user.json(['trigger', 'slack', 'app_mention', '--endpoint', endpoint.id]), await user.json(['trigger', 'slack', 'app_mention', '--endpoint', endpoint.id])];
    const [m1, m2] = await Promise.all(mentions.map((sent) => delivered(sent.event_id)));
    const [p1, p2] = [JSON.parse(m1!.body.toString('utf8')), JSON.parse(m2!.body.toString('utf8'))];
    expect(p1.event_id).not.toBe(p2.event_id);
    expect(Math.abs(p1.event_time - Date.now() / 1000)).toBeLessThan(60);

    const pushes = [await user.json(['trigger', 'gitlab', 'push', '--endpoint', endpoint.id]), await user.json(['trigger', 'gitlab', 'push', '--endpoint', endpoint.id])];
    const [g1, g2] = await Promise.all(pushes.map((sent) => delivered(sent.event_id)));
    expect(header(g1!, 'x-gitlab-event')).toBe('Push Hook');
    expect(header(g1!, 'idempotency-key')).toMatch(UUID);
    expect(header(g1!, 'idempotency-key')).not.toBe(header(g2!, 'idempotency-key'));
    expect(header(g1!, 'user-agent')).toMatch(/^GitLab\//);
    expect(JSON.parse(g1!.body.toString('utf8'))).toMatchObject({ ref: 'refs/heads/main', project: { path_with_namespace: 'acme-inc/storefront' } });
  }, 60_000);

  it('signs with --secret instead, and prints the secret on stderr for a person', async () => {
    const custom = await user.json(['trigger', 'github', 'push', '--endpoint', endpoint.name, '--secret', 'my-own-secret']);
    expect(custom.secret).toBe('my-own-secret');
    const request = await delivered(custom.event_id);
    expect(await verifiesWith('github', request, 'my-own-secret')).toBe(true);
    expect(await verifiesWith('github', request, 'hook-test-github-secret')).toBe(false);

    const text = await user.run(['trigger', 'shopify', 'products/update', '--endpoint', endpoint.name]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Sent shopify products\/update to provider-handlers \(ep_\w+\): evt_\w+ pending, \d+ bytes\.\n$/);
    expect(text.stderr).toContain('hook-test-shopify-secret');
    expect(text.stderr).toContain('X-Shopify-Hmac-Sha256');
  });

  it('lists its samples without arguments, and refuses an unknown provider or event as a usage error', async () => {
    const bare = await user.run(['trigger']);
    expect(bare.code).toBe(0);
    expect(bare.stdout).toContain('stripe    payment_intent.succeeded');
    expect(bare.stdout).toContain('whsec_hook_test_stripe_secret');

    const help = await user.run(['trigger', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: hook trigger \[options\] \[provider\] \[event\]/);

    const provider = await user.run(['trigger', 'paypal', 'payment.completed', '--json']);
    expect(provider.code).toBe(2);
    expect(provider.stdout).toBe('');
    expect(JSON.parse(provider.stderr)).toMatchObject({ code: 'usage_error', detail: expect.stringContaining("'paypal'"), fix: expect.stringContaining('github, stripe, shopify, slack') });
    const event = await user.run(['trigger', 'stripe', 'charge.refunded']);
    expect(event.code).toBe(2);
    expect(event.stderr).toContain('payment_intent.succeeded, checkout.session.completed, invoice.paid');
    const missing = await user.run(['trigger', 'slack']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('app_mention, url_verification');
  });

  it('sends to the only endpoint, or the default one, without --endpoint; with several and no default it says how to choose', async () => {
    const other = new HookUser();
    try {
      const signup = await other.json(['signup', '--api-url', relay.baseUrl]);
      await createEndpoint(relay.baseUrl, signup.api_key, { name: 'first', destination: { type: 'url', url: receiver.url } });
      const only = await other.json(['trigger', 'slack', 'url_verification']);
      expect(only.endpoint_name).toBe('first');
      expect(await verifiesWith('slack', await delivered(only.event_id), only.secret)).toBe(true);

      await createEndpoint(relay.baseUrl, signup.api_key, { name: 'second', destination: { type: 'url', url: receiver.url } });
      const unsure = await other.run(['trigger', 'slack', 'url_verification', '--json']);
      expect(unsure.code).toBe(1);
      expect(JSON.parse(unsure.stderr)).toMatchObject({ code: 'endpoint_not_chosen', fix: expect.stringContaining('hook trigger slack url_verification --endpoint') });

      expect((await other.run(['endpoints', 'use', 'second'])).code).toBe(0);
      expect((await other.json(['trigger', 'slack', 'url_verification'])).endpoint_name).toBe('second');
    } finally {
      other.remove();
    }
  });
});
