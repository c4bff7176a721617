/**
 * Shopify (docs: "Verify webhooks"): `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256(body)>`
 * under the app's client secret. No timestamp is signed. The event is `X-Shopify-Topic`
 * (`orders/create`); `X-Shopify-Webhook-Id` is the same on Shopify's retries of one webhook.
 */
import { createHmac } from 'node:crypto';
import { bodyHmacSha256, defineProvider, type ProviderSigner } from './provider.ts';

const SIGNATURE = 'x-shopify-hmac-sha256';
const SHOP_DOMAIN = 'hook-test-shop.myshopify.com';
const API_VERSION = '2025-07';

const signer = {
  description: 'X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>',
  headers: [SIGNATURE],
  signsTimestamp: false,
  sign: (secret, body) => ({ [SIGNATURE]: createHmac('sha256', secret).update(body).digest('base64') }),
} satisfies ProviderSigner;

export const shopify = defineProvider({
  name: 'shopify',
  title: 'Shopify',
  verification: bodyHmacSha256(SIGNATURE, 'base64'),
  signer,
  typeHeader: { header: 'x-shopify-topic', withAction: false },
  dedupe: { header: 'x-shopify-webhook-id' },
  samples: {
    defaultSecret: 'hook-test-shopify-secret',
    deliveryIdHeader: 'X-Shopify-Webhook-Id',
    events: [
      { name: 'orders/create', description: 'An order placed (#1042, two mugs)' },
      { name: 'products/update', description: 'A product changed (Signature Mug, two variants)' },
    ],
    request(event, payload, secret, context) {
      const body = Buffer.from(JSON.stringify(payload));
      return {
        body,
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'Shopify-Captain-Hook',
          'X-Shopify-Topic': event,
          ...signer.sign(secret, body),
          'X-Shopify-Shop-Domain': SHOP_DOMAIN,
          'X-Shopify-API-Version': API_VERSION,
          'X-Shopify-Webhook-Id': context.uuid(),
          'X-Shopify-Event-Id': context.uuid(),
          'X-Shopify-Triggered-At': new Date(context.nowMs).toISOString(),
        },
      };
    },
  },
});
