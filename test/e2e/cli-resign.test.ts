/**
 * `hook send --fixture <file> --resign <provider> --secret-file <path>` (docs/cli.md#hook-send):
 * a captured event whose signed timestamp is older than a verifying endpoint's tolerance is
 * refused as it is, and stored verified once signed again, its body byte for byte the
 * captured one. The real `hook` binary against a real relay; Stripe's own SDK checks the
 * new signature.
 */
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Stripe from 'stripe';
import { beforeAll, describe, expect, it } from 'vitest';
import { signedUpUser } from '../support/cli.ts';

const signedUp = signedUpUser();
const { user } = signedUp;
const TEN_MINUTES_S = 600;

// Five endpoints, more than the free plan's.
beforeAll(async () => {
  await user.json(['account', 'plan', 'pro']);
});

function hmacHex(secret: string | Buffer, ...parts: Array<string | Buffer>): string {
  const mac = createHmac('sha256', secret);
  for (const part of parts) mac.update(part);
  return mac.digest('hex');
}

/** A file in the user's home holding `text`; its path. */
function fileWith(name: string, text: string): string {
  const path = join(user.home, name);
  writeFileSync(path, text);
  return path;
}

/** The last JSON line on stderr: the problem of a failed `--json` run. */
function problemOf(stderr: string): any {
  return JSON.parse(stderr.trim().split('\n').at(-1)!);
}

/** Exports `eventId` to a fixture file, lets `age` rewrite its headers (as if captured long ago), and returns the path and the body bytes. */
async function capturedLongAgo(eventId: string, name: string, age: (headers: Record<string, string>, body: Buffer, then: number) => void): Promise<{ file: string; body: Buffer }> {
  const file = join(user.home, name);
  await user.json(['events', 'export', eventId, '--fixture', file]);
  const fixture = JSON.parse(readFileSync(file, 'utf8'));
  expect(fixture.body_encoding).toBe('utf8');
  const body = Buffer.from(fixture.body, 'utf8');
  age(fixture.headers, body, Math.floor(Date.now() / 1000) - TEN_MINUTES_S);
  writeFileSync(file, JSON.stringify(fixture, null, 2));
  return { file, body };
}

describe('hook send --resign', () => {
  it('re-signs a Stripe event captured ten minutes ago: refused as it is, stored verified after --resign stripe, the body unchanged', async () => {
    const secret = 'whsec_endpoint_stripe_secret';
    const secretFile = fileWith('stripe-secret.txt', `${secret}\n`);
    await user.json(['endpoints', 'create', 'stripe-verified', '--verify', 'stripe', '--verify-secret-file', secretFile]);
    const sent = await user.json(['trigger', 'stripe', 'invoice.paid', '--endpoint', 'stripe-verified', '--secret', secret]);
    const { file, body } = await capturedLongAgo(sent.event_id, 'invoice.json', (headers, bytes, then) => {
      headers['stripe-signature'] = `t=${then},v1=${hmacHex(secret, `${then}.`, bytes)}`;
    });

    const stale = await user.run(['send', '--fixture', file, '--endpoint', 'stripe-verified', '--json']);
    expect(stale.code).toBe(1);
    const refused = problemOf(stale.stderr);
    expect(refused).toMatchObject({ code: 'signature_invalid', detail: expect.stringContaining('timestamp outside tolerance') });
    expect(refused.fix).toContain('`hook send --fixture <file> --resign <provider> --secret-file <path>`');

    const resent = await user.run(['send', '--fixture', file, '--endpoint', 'stripe-verified', '--resign', 'stripe', '--secret-file', secretFile, '--json']);
    expect(resent.code, resent.stderr).toBe(0);
    expect(resent.stderr).toContain('Signed again as Stripe signs');
    const { id } = JSON.parse(resent.stdout);
    const stored = await user.json(['events', 'get', id]);
    expect(stored).toMatchObject({ type: 'invoice.paid', verification: { provider: 'stripe', verified: true, reason: null } });
    const storedBody = (await user.run(['events', 'get', id, '--body'])).stdoutBytes;
    expect(storedBody.equals(body)).toBe(true);
    // Stripe's SDK, with its own five-minute tolerance, accepts what was sent.
    const event = new Stripe('sk_test_hook_resign').webhooks.constructEvent(storedBody, stored.headers['stripe-signature'], secret);
    expect(event.type).toBe('invoice.paid');
    expect(Number(/t=(\d+)/.exec(stored.headers['stripe-signature'])![1])).toBeGreaterThan(Date.now() / 1000 - 60);
  }, 60_000);

  it('re-signs Slack and Standard Webhooks captures the same way', async () => {
    const slackSecret = 'endpoint-slack-signing-secret';
    const slackFile = fileWith('slack-secret.txt', slackSecret);
    await user.json(['endpoints', 'create', 'slack-verified', '--verify', 'slack', '--verify-secret-file', slackFile]);
    const mention = await user.json(['trigger', 'slack', 'app_mention', '--endpoint', 'slack-verified', '--secret', slackSecret]);
    const slack = await capturedLongAgo(mention.event_id, 'mention.json', (headers, bytes, then) => {
      headers['x-slack-request-timestamp'] = String(then);
      headers['x-slack-signature'] = `v0=${hmacHex(slackSecret, `v0:${then}:`, bytes)}`;
    });
    expect(problemOf((await user.run(['send', '--fixture', slack.file, '--endpoint', 'slack-verified', '--json'])).stderr).detail).toContain('timestamp outside tolerance');
    const slackId = (await user.json(['send', '--fixture', slack.file, '--endpoint', 'slack-verified', '--resign', 'slack', '--secret-file', slackFile])).id;
    expect((await user.json(['events', 'get', slackId])).verification).toEqual({ provider: 'slack', verified: true, reason: null });
    expect((await user.run(['events', 'get', slackId, '--body'])).stdoutBytes.equals(slack.body)).toBe(true);

    const key = Buffer.from('standard-webhooks-endpoint-key');
    const swSecret = `whsec_${key.toString('base64')}`;
    const swFile = fileWith('sw-secret.txt', swSecret);
    await user.json(['endpoints', 'create', 'sw-verified', '--verify', 'standard-webhooks', '--verify-secret-file', swFile]);
    const payload = '{"type":"contact.created","data":{"id":7}}';
    const now = Math.floor(Date.now() / 1000);
    const message = await user.json(['send', 'sw-verified', '--data', payload, '-H', 'webhook-id: msg_resign_1', '-H', `webhook-timestamp: ${now}`,
      '-H', `webhook-signature: v1,${createHmac('sha256', key).update(`msg_resign_1.${now}.${payload}`).digest('base64')}`]);
    const sw = await capturedLongAgo(message.id, 'contact.json', () => {});
    const swId = (await user.json(['send', '--fixture', sw.file, '--endpoint', 'sw-verified', '--resign', 'standard-webhooks', '--secret-file', swFile])).id;
    const swStored = await user.json(['events', 'get', swId]);
    expect(swStored).toMatchObject({ type: 'contact.created', verification: { provider: 'standard-webhooks', verified: true }, headers: { 'webhook-id': 'msg_resign_1' } });
    expect((await user.run(['events', 'get', swId, '--body'])).stdoutBytes.equals(sw.body)).toBe(true);
  }, 60_000);

  it('refuses clearly: a provider that signs no timestamp, a fixture the provider did not sign, and --resign without --fixture or --secret-file', async () => {
    const secretFile = fileWith('any-secret.txt', 'whsec_any');
    await user.json(['endpoints', 'create', 'plain']);
    const pushed = await user.json(['trigger', 'github', 'push', '--endpoint', 'plain']);
    const file = join(user.home, 'push.json');
    await user.json(['events', 'export', pushed.event_id, '--fixture', file]);

    const github = await user.run(['send', '--fixture', file, '--endpoint', 'plain', '--resign', 'github', '--secret-file', secretFile, '--json']);
    expect(github.code).toBe(2);
    expect(problemOf(github.stderr)).toMatchObject({ code: 'usage_error', detail: expect.stringContaining('GitHub signs no timestamp'), fix: expect.stringContaining('without --resign') });
    const notStripe = await user.run(['send', '--fixture', file, '--endpoint', 'plain', '--resign', 'stripe', '--secret-file', secretFile, '--json']);
    expect(notStripe.code).toBe(1);
    expect(problemOf(notStripe.stderr)).toMatchObject({ code: 'fixture_invalid', detail: expect.stringContaining('has no stripe-signature header'), fix: expect.stringContaining('x-github-event') });
    const unknown = await user.run(['send', '--fixture', file, '--endpoint', 'plain', '--resign', 'paypal', '--secret-file', secretFile]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('stripe, slack, standard-webhooks');
    const noSecret = await user.run(['send', '--fixture', file, '--endpoint', 'plain', '--resign', 'stripe']);
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toContain('--resign and --secret-file go together');
    const noFixture = await user.run(['send', 'plain', '--resign', 'stripe', '--secret-file', secretFile]);
    expect(noFixture.code).toBe(2);
    expect(noFixture.stderr).toContain('--resign signs a fixture again');
    // Nothing was sent by any of them.
    expect((await user.json(['events', 'list', '--endpoint', 'plain'])).data).toHaveLength(1);
  }, 60_000);
});
