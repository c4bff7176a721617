/**
 * Stripe (docs: "Check the webhook signatures"): `Stripe-Signature: t=<ts>,v1=<hex
 * HMAC-SHA256("<ts>." + body)>[,v1=…]` under the endpoint's signing secret (`whsec_…`, its
 * bytes as written), several `v1` during a secret roll, any one matching; `t` within
 * tolerance. The type is the body's `type`; the event's `id` (`evt_…`) is the same on
 * each of Stripe's retries.
 */
import { createHmac, createSecretKey } from 'node:crypto';
import { anyMatches, decodeSignature, hmacOf, isUnixSeconds, withinTolerance } from '../verification.ts';
import { ALPHANUMERIC, defineProvider, objectAt, unixSeconds, type ProviderSigner } from './provider.ts';

const SIGNATURE = 'stripe-signature';

const signer = {
  description: 'Stripe-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<body>">',
  headers: [SIGNATURE],
  signsTimestamp: true,
  sign: (secret, body, t) => ({ [SIGNATURE]: `t=${t},v1=${createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex')}` }),
} satisfies ProviderSigner;

export const stripe = defineProvider({
  name: 'stripe',
  title: 'Stripe',
  verification: {
    create(settings, secret, { ok, fail }) {
      const key = createSecretKey(Buffer.from(secret, 'utf8'));
      return (headers, body, nowMs) => {
        const value = headers[SIGNATURE];
        if (value === undefined) return fail('missing_header', SIGNATURE);
        let timestamp: string | undefined;
        const signatures: Buffer[] = [];
        for (const item of value.split(',')) {
          const at = item.indexOf('=');
          const name = item.slice(0, at).trim();
          const text = item.slice(at + 1).trim();
          if (name === 't') timestamp = text;
          else if (name === 'v1') {
            const signature = decodeSignature(text, 'hex');
            if (signature) signatures.push(signature);
          }
        }
        if (timestamp === undefined || !isUnixSeconds(timestamp) || signatures.length === 0) return fail('malformed_header', SIGNATURE);
        if (!anyMatches(hmacOf('sha256', key, `${timestamp}.`, body), signatures)) return fail('no_signature_matches', SIGNATURE);
        return withinTolerance(timestamp, settings.tolerance_seconds, nowMs) ? ok : fail('timestamp_outside_tolerance', SIGNATURE);
      };
    },
  },
  signer,
  dedupe: { json_field: 'id' },
  samples: {
    defaultSecret: 'whsec_hook_test_stripe_secret',
    deliveryIdHeader: 'the event\'s "id" (evt_…)',
    events: [
      { name: 'payment_intent.succeeded', description: 'A payment completed (a PaymentIntent for $49.90)' },
      { name: 'checkout.session.completed', description: 'A Checkout Session paid and complete' },
      { name: 'invoice.paid', description: 'A subscription invoice paid' },
    ],
    request(_event, payload, secret, context) {
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
          ...signer.sign(secret, body, now),
        },
      };
    },
  },
});
