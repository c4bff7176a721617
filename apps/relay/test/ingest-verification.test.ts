/**
 * Signature verification at ingest (docs/sources.md) against a real relay and PostgreSQL:
 * requests signed by the providers' own SDKs (Stripe, GitHub's @octokit/webhooks-methods,
 * standardwebhooks), Shopify and Slack by their documented algorithms, GitLab's token as GitLab
 * sends it.
 */
import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { sign as signGitHub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, expectProblem, signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
let key: string;

beforeAll(async () => {
  relay = await startTestRelay();
  ({ key } = await signUp(relay.baseUrl, { plan: 'pro' }));
});
afterAll(async () => relay.close());

const stripe = new Stripe('sk_test_unused');
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface ProviderCase {
  provider: string;
  secret: string;
  otherSecret: string;
  extra?: Record<string, unknown>;
  body: string;
  contentType: string;
  /** Headers a sender holding `secret` sends for `body` at `timestamp`. */
  sign(secret: string, body: string, timestamp: number): Promise<Record<string, string>> | Record<string, string>;
  /** The header whose absence is reported. */
  required: string;
  timestamped: boolean;
  /** false: the body is not signed (GitLab sends a token), so a changed body is no failure. */
  bodySigned?: false;
}

// Payloads after the providers' published examples.
const cases: ProviderCase[] = [
  {
    provider: 'github', secret: "It's a Secret to Everybody", otherSecret: 'not it', required: 'x-hub-signature-256', timestamped: false,
    contentType: 'application/json',
    body: '{"zen":"Keep it logically awesome.","hook_id":12345678,"hook":{"type":"Repository","id":12345678,"name":"web","active":true,"events":["push"]}}',
    sign: async (secret, body) => ({ 'x-github-event': 'ping', 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958', 'x-hub-signature-256': await signGitHub(secret, body) }),
  },
  {
    provider: 'stripe', secret: 'whsec_test_secret', otherSecret: 'whsec_other', required: 'stripe-signature', timestamped: true,
    contentType: 'application/json; charset=utf-8',
    body: JSON.stringify({ id: 'evt_3MtwBwLkdIwHu7ix28a3tqPa', object: 'event', api_version: '2022-11-15', type: 'payment_intent.succeeded', data: { object: { id: 'pi_3MtwBwLkdIwHu7ix28a3tqPa', object: 'payment_intent', amount: 2000, currency: 'usd', status: 'succeeded' } } }, null, 2),
    sign: (secret, body, timestamp) => ({ 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp }) }),
  },
  {
    provider: 'shopify', secret: 'shpss_0123456789abcdef', otherSecret: 'shpss_other', required: 'x-shopify-hmac-sha256', timestamped: false,
    contentType: 'application/json',
    body: '{"id":820982911946154508,"email":"jon@example.com","total_price":"403.00","currency":"USD","financial_status":"paid"}',
    sign: (secret, body) => ({ 'x-shopify-topic': 'orders/create', 'x-shopify-hmac-sha256': createHmac('sha256', secret).update(body, 'utf8').digest('base64') }),
  },
  {
    provider: 'slack', secret: '8f742231b10e8888abcd99yyyzzz85a5', otherSecret: '00000000000000000000000000000000', required: 'x-slack-signature', timestamped: true,
    contentType: 'application/x-www-form-urlencoded',
    body: 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebbot&text=',
    sign: (secret, body, timestamp) => ({
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`,
    }),
  },
  {
    provider: 'standard-webhooks', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', otherSecret: 'whsec_dGhpcyBpcyBub3QgdGhlIHNlY3JldA==', required: 'webhook-signature', timestamped: true,
    contentType: 'application/json',
    body: '{"type":"contact.created","timestamp":"2022-11-03T20:26:10.344522Z","data":{"id":"1f81eb52-5198-4599-803e-771906343485","type":"contact"}}',
    sign: (secret, body, timestamp) => ({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': new Webhook(secret).sign('msg_p5jXN8AQM9LWM0D4loKWxJek', new Date(timestamp * 1000), body),
    }),
  },
  {
    // GitLab's docs: the secret token, sent as it is in X-Gitlab-Token.
    provider: 'gitlab', secret: 'glwt-secret-token-1234', otherSecret: 'glwt-secret-token-1235', required: 'x-gitlab-token', timestamped: false, bodySigned: false,
    contentType: 'application/json',
    body: '{"object_kind":"push","event_name":"push","ref":"refs/heads/main","project":{"path_with_namespace":"acme-inc/storefront"}}',
    sign: (secret) => ({ 'x-gitlab-event': 'Push Hook', 'idempotency-key': '9f2c4b0e-5a7d-4c1e-8b3f-6d2a1e0c9b7a', 'x-gitlab-token': secret }),
  },
  {
    provider: 'hmac', secret: 'generic-secret', otherSecret: 'other', required: 'x-signature', timestamped: true,
    extra: { header: 'X-Signature', algorithm: 'sha512', encoding: 'base64', prefix: 'sha512=', signed: 'timestamp.body', timestamp_header: 'X-Timestamp' },
    contentType: 'application/json',
    body: '{"event":"order.paid","id":42}',
    sign: (secret, body, timestamp) => ({ 'x-timestamp': String(timestamp), 'x-signature': `sha512=${createHmac('sha512', secret).update(`${timestamp}.${body}`).digest('base64')}` }),
  },
];

async function endpointWith(name: string, verification: Record<string, unknown> | null) {
  const response = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name, verification } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { id: string; url: string; verification: any };
}

async function send(url: string, body: string, headers: Record<string, string>) {
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

async function storedCount(endpointId: string): Promise<number> {
  return Number((await sqlRows(relay, 'select count(*) as n from event where endpoint_id = ?', [endpointId]))[0].n);
}

async function storedVerification(eventId: string) {
  const response = await api(relay.baseUrl, 'GET', `/v1/events/${eventId}`, { key });
  expect(response.status).toBe(200);
  return response.body.verification;
}

/** The same request with one byte of the body changed. */
function altered(body: string): string {
  const at = Math.floor(body.length / 2);
  return body.slice(0, at) + (body[at] === 'x' ? 'y' : 'x') + body.slice(at + 1);
}

for (const c of cases) {
  describe(c.provider, () => {
    const failures = async () => {
      const ts = nowSeconds();
      const signed = await c.sign(c.secret, c.body, ts);
      const list: [string, string, Record<string, string>, string][] = [
        ['wrong secret', 'no_signature_matches', await c.sign(c.otherSecret, c.body, ts), c.body],
        ['missing header', 'missing_header', Object.fromEntries(Object.entries(signed).filter(([name]) => name !== c.required)), c.body],
      ];
      if (c.bodySigned !== false) list.splice(1, 0, ['altered byte', 'no_signature_matches', signed, altered(c.body)]);
      if (c.timestamped) list.push(['stale timestamp', 'timestamp_outside_tolerance', await c.sign(c.secret, c.body, ts - 301), c.body]);
      return list;
    };

    it('reject mode: a request signed as the provider signs is stored, verified; each failure gets 401 signature_invalid and nothing is stored', async () => {
      const endpoint = await endpointWith(`${c.provider} reject`, { provider: c.provider, secret: c.secret, mode: 'reject', ...c.extra });
      const good = await send(endpoint.url, c.body, { 'content-type': c.contentType, ...(await c.sign(c.secret, c.body, nowSeconds())) });
      expect(good.status, JSON.stringify(good.body)).toBe(200);
      expect(await storedVerification(good.body.id)).toEqual({ provider: c.provider, verified: true, reason: null });

      for (const [label, reason, headers, body] of await failures()) {
        const answer = await send(endpoint.url, body, { 'content-type': c.contentType, ...headers });
        const problem = expectProblem(answer, 401, 'signature_invalid');
        expect(problem.errors, label).toEqual([{ field: expect.stringMatching(/^headers\./), message: reason }]);
        expect(problem.detail, label).toContain(reason.replace(/_/g, ' '));
      }
      expect(await storedCount(endpoint.id)).toBe(1);
    });

    it('flag mode: every request is stored; failures are marked unverified with the reason', async () => {
      const endpoint = await endpointWith(`${c.provider} flag`, { provider: c.provider, secret: c.secret, mode: 'flag', ...c.extra });
      for (const [label, reason, headers, body] of await failures()) {
        const answer = await send(endpoint.url, body, { 'content-type': c.contentType, ...headers });
        expect(answer.status, label).toBe(200);
        expect(await storedVerification(answer.body.id), label).toEqual({ provider: c.provider, verified: false, reason });
      }
      expect(await storedCount(endpoint.id)).toBe((await failures()).length);
      const listed = await api(relay.baseUrl, 'GET', `/v1/events?endpoint_id=${endpoint.id}`, { key });
      expect(listed.body.data.map((event: any) => event.verification.verified)).toEqual((await failures()).map(() => false));
    });
  });
}

describe('settings', () => {
  it('the secret is never shown and is sealed in the database', async () => {
    const secret = 'whsec_test_secret_never_shown';
    const endpoint = await endpointWith('sealed', { provider: 'stripe', secret });
    expect(endpoint.verification).toEqual({ provider: 'stripe', mode: 'reject', tolerance_seconds: 300, secret_set: true, secret_hint: 'hown' });
    const read = await api(relay.baseUrl, 'GET', `/v1/endpoints/${endpoint.id}`, { key });
    const listed = await api(relay.baseUrl, 'GET', '/v1/endpoints', { key });
    expect(JSON.stringify(read.body)).not.toContain(secret);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    const [row] = await sqlRows(relay, 'select verification, verification_secret from endpoint where id = ?', [endpoint.id]);
    expect(row.verification_secret).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(row.verification_secret).not.toContain(secret);
    expect(JSON.stringify(row.verification)).not.toContain(secret);
  });

  it('an update takes effect at once, and null turns verification off', async () => {
    const endpoint = await endpointWith('updated', null);
    const body = '{"zen":"Design for failure."}';
    const plain = await send(endpoint.url, body, { 'content-type': 'application/json' });
    expect(plain.status).toBe(200);
    expect(await storedVerification(plain.body.id)).toBeNull();

    const updated = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { verification: { provider: 'github', secret: 'first' } } });
    expect(updated.status).toBe(200);
    expectProblem(await send(endpoint.url, body, { 'content-type': 'application/json' }), 401, 'signature_invalid');
    expect((await send(endpoint.url, body, { 'x-hub-signature-256': await signGitHub('first', body) })).status).toBe(200);

    await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { verification: { provider: 'github', secret: 'second' } } });
    expectProblem(await send(endpoint.url, body, { 'x-hub-signature-256': await signGitHub('first', body) }), 401, 'signature_invalid');

    const off = await api(relay.baseUrl, 'PATCH', `/v1/endpoints/${endpoint.id}`, { key, json: { verification: null } });
    expect(off.body.verification).toBeNull();
    expect((await send(endpoint.url, body, { 'content-type': 'application/json' })).status).toBe(200);
  });

  it('a bad provider or a generic HMAC without its header is a 400 naming the field', async () => {
    const bad = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'bad', verification: { provider: 'paypal', secret: 's' } } });
    expectProblem(bad, 400, 'validation_failed');
    expect(JSON.stringify(bad.body.errors)).toContain('body.verification');
    const hmac = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'bad', verification: { provider: 'hmac', secret: 's', signed: 'timestamp.body' } } });
    const problem = expectProblem(hmac, 400, 'validation_failed');
    expect(problem.errors.map((error: any) => error.field).sort()).toEqual(['body.verification.header', 'body.verification.timestamp_header']);
    const misplaced = await api(relay.baseUrl, 'POST', '/v1/endpoints', { key, json: { name: 'bad', verification: { provider: 'github', secret: 's', header: 'x-sig' } } });
    expect(expectProblem(misplaced, 400, 'validation_failed').errors).toEqual([{ field: 'body.verification.header', message: expect.stringContaining("provider 'hmac' only") }]);
  });

  it('rejections are counted in the ingest metrics', async () => {
    const metrics = await fetch(`${relay.baseUrl}/metrics`);
    if (metrics.status !== 200) return expect.unreachable(`metrics answered ${metrics.status}`);
    expect(await metrics.text()).toMatch(/hook_ingest_requests_total\{outcome="signature_invalid"\} [1-9]/);
  });
});
