/**
 * Provider event types (docs/api.md#event-type): every sample `hook trigger` sends is
 * stored with the type its provider names — GitHub's X-GitHub-Event (with the body's
 * action), Shopify's X-Shopify-Topic, GitLab's X-Gitlab-Event, Stripe's and Standard
 * Webhooks' JSON type, Slack's event.type — and `hook events wait --type push` finds a triggered GitHub push on an
 * endpoint that verifies GitHub. The real `hook` binary against a real relay.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signedUpUser } from '../support/cli.ts';

const signedUp = signedUpUser();
const { user } = signedUp;

/** Per `hook trigger` sample, the type the relay stores it with. */
const TYPE_OF_SAMPLE: Record<string, string> = {
  'github push': 'push',
  'github pull_request': 'pull_request.opened',
  'github ping': 'ping',
  'stripe payment_intent.succeeded': 'payment_intent.succeeded',
  'stripe checkout.session.completed': 'checkout.session.completed',
  'stripe invoice.paid': 'invoice.paid',
  'shopify orders/create': 'orders/create',
  'shopify products/update': 'products/update',
  'slack app_mention': 'app_mention',
  'slack url_verification': 'url_verification',
  'gitlab push': 'Push Hook',
  'gitlab merge_request': 'Merge Request Hook',
};

describe('provider event types', () => {
  it('stores every hook trigger sample, and a Standard Webhooks message, with the type its provider names', async () => {
    await user.json(['endpoints', 'create', 'providers']);
    const listing = await user.json(['trigger', '--list']);
    const samples: string[] = listing.providers.flatMap((provider: any) => provider.events.map((event: any) => `${provider.provider} ${event.event}`));
    // A new sample needs its row here.
    expect(samples.sort()).toEqual(Object.keys(TYPE_OF_SAMPLE).sort());
    const stored: Record<string, string | null> = {};
    for (const sample of samples) {
      const sent = await user.json(['trigger', ...sample.split(' '), '--endpoint', 'providers']);
      stored[sample] = (await user.json(['events', 'get', sent.event_id])).type;
    }
    expect(stored).toEqual(TYPE_OF_SAMPLE);

    const message = await user.json(['send', 'providers', '--data', '{"type":"contact.created","timestamp":"2026-01-01T00:00:00Z","data":{"id":1}}',
      '-H', 'webhook-id: msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', '-H', 'webhook-timestamp: 1767225600', '-H', 'webhook-signature: v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=']);
    expect((await user.json(['events', 'get', message.id])).type).toBe('contact.created');

    // A person's list shows the types too, not `-`.
    const listed = await user.run(['events', 'list', '--endpoint', 'providers', '--limit', '20']);
    expect(listed.code).toBe(0);
    for (const type of ['push', 'pull_request.opened', 'orders/create', 'app_mention']) expect(listed.stdout).toContain(type);
  }, 75_000); // 12 samples (60 s was set for 10), each a trigger and a get

  it('finds a GitHub push triggered at an endpoint that verifies GitHub with hook events wait --type push', async () => {
    const secretFile = join(user.home, 'github-secret.txt');
    writeFileSync(secretFile, 'github-endpoint-secret\n');
    await user.json(['endpoints', 'create', 'github-verified', '--verify', 'github', '--verify-secret-file', secretFile]);
    const ping = await user.json(['trigger', 'github', 'ping', '--endpoint', 'github-verified', '--secret', 'github-endpoint-secret']);
    // From the ping on (which is no push), so the wait cannot miss the push however fast it is stored.
    const waiting = user.run(['events', 'wait', '--endpoint', 'github-verified', '--type', 'push', '--since', ping.event_id, '--timeout', '20s', '--json'], { timeoutMs: 30_000 });
    const push = await user.json(['trigger', 'github', 'push', '--endpoint', 'github-verified', '--secret', 'github-endpoint-secret']);
    const waited = await waiting;
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ id: push.event_id, type: 'push', verification: { provider: 'github', verified: true } });
  }, 40_000);
});
