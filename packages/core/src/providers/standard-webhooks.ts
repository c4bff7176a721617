/**
 * Standard Webhooks (https://www.standardwebhooks.com/: Svix, Hook itself, and others):
 * `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256("<id>.<ts>."
 * + body)>[ v1,…]` (space-separated during a rotation), keyed by the base64 after `whsec_`,
 * the timestamp within tolerance. The type is the body's `type`; `webhook-id` is the same
 * when a message is resent. Hook signs its own deliveries this way (signing.ts), and
 * `hook send --resign standard-webhooks` signs with that same code.
 */
import { createSecretKey } from 'node:crypto';
import { signPayload } from '../signing.ts';
import { anyMatches, decodeSignature, hmacOf, isBase64, isUnixSeconds, withinTolerance } from '../verification.ts';
import { defineProvider } from './provider.ts';

const ID = 'webhook-id';
const TIMESTAMP = 'webhook-timestamp';
const SIGNATURE = 'webhook-signature';

/** The Standard Webhooks key: the base64 after `whsec_` (or the whole secret when it has no prefix). */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

export const standardWebhooks = defineProvider({
  name: 'standard-webhooks',
  title: 'Standard Webhooks',
  verification: {
    checkSecret(secret) {
      const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
      return !isBase64(encoded) || standardWebhooksKey(secret).length === 0 ? "a Standard Webhooks secret is 'whsec_' followed by base64" : null;
    },
    create(settings, secret, { ok, fail }) {
      const key = createSecretKey(standardWebhooksKey(secret));
      return (headers, body, nowMs) => {
        for (const name of [ID, TIMESTAMP, SIGNATURE]) if (headers[name] === undefined) return fail('missing_header', name);
        const id = headers[ID]!.trim();
        const timestamp = headers[TIMESTAMP]!.trim();
        if (!isUnixSeconds(timestamp)) return fail('malformed_header', TIMESTAMP);
        const signatures: Buffer[] = [];
        for (const item of headers[SIGNATURE]!.trim().split(' ')) {
          const [version, text] = item.split(',', 2);
          const signature = version === 'v1' && text !== undefined ? decodeSignature(text, 'base64') : null;
          if (signature) signatures.push(signature);
        }
        if (signatures.length === 0) return fail('malformed_header', SIGNATURE);
        if (!anyMatches(hmacOf('sha256', key, `${id}.${timestamp}.`, body), signatures)) return fail('no_signature_matches', SIGNATURE);
        return withinTolerance(timestamp, settings.tolerance_seconds, nowMs) ? ok : fail('timestamp_outside_tolerance', TIMESTAMP);
      };
    },
  },
  signer: {
    description: 'webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">',
    headers: [SIGNATURE, ID],
    signsTimestamp: true,
    // The message id is signed too, and kept: a receiver that drops repeats by it sees the same message.
    sign: (secret, body, t, captured) => ({ [ID]: captured[ID]!, [TIMESTAMP]: String(t), [SIGNATURE]: signPayload(secret, captured[ID]!, t, body) }),
  },
  dedupe: { header: ID },
});
