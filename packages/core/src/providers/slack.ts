/**
 * Slack (docs: "Verifying requests from Slack"): `X-Slack-Request-Timestamp: <ts>` and
 * `X-Slack-Signature: v0=<hex HMAC-SHA256("v0:<ts>:" + body)>` under the app's signing
 * secret, the timestamp within tolerance. Its handshake is the Events API's
 * `{"type":"url_verification","challenge":…}`, answered with the challenge as plain text.
 * An `event_callback` envelope's type is its inner `event.type`; `event_id` is unique per
 * event and kept on Slack's retries.
 */
import { createHmac, createSecretKey } from 'node:crypto';
import { HANDSHAKE_TEXT, handshakeJson } from '../handshakes.ts';
import { anyMatches, decodeSignature, hmacOf, isUnixSeconds, withinTolerance } from '../verification.ts';
import { ALPHANUMERIC, defineProvider, objectAt, UPPER_ALPHANUMERIC, unixSeconds, type ProviderSigner } from './provider.ts';

const SIGNATURE = 'x-slack-signature';
const TIMESTAMP = 'x-slack-request-timestamp';

const signer = {
  description: 'X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<X-Slack-Request-Timestamp>:<body>">',
  headers: [SIGNATURE],
  signsTimestamp: true,
  sign: (secret, body, t) => ({ [TIMESTAMP]: String(t), [SIGNATURE]: `v0=${createHmac('sha256', secret).update(`v0:${t}:`).update(body).digest('hex')}` }),
} satisfies ProviderSigner;

function textOf(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

export const slack = defineProvider({
  name: 'slack',
  title: 'Slack',
  verification: {
    create(settings, secret, { ok, fail }) {
      const key = createSecretKey(Buffer.from(secret, 'utf8'));
      return (headers, body, nowMs) => {
        const value = headers[SIGNATURE];
        const sent = headers[TIMESTAMP];
        if (value === undefined) return fail('missing_header', SIGNATURE);
        if (sent === undefined) return fail('missing_header', TIMESTAMP);
        const timestamp = sent.trim();
        if (!isUnixSeconds(timestamp)) return fail('malformed_header', TIMESTAMP);
        const text = value.trim();
        const signature = text.startsWith('v0=') ? decodeSignature(text.slice(3), 'hex') : null;
        if (signature === null || signature.length !== 32) return fail('malformed_header', SIGNATURE);
        if (!anyMatches(hmacOf('sha256', key, `v0:${timestamp}:`, body), [signature])) return fail('no_signature_matches', SIGNATURE);
        return withinTolerance(timestamp, settings.tolerance_seconds, nowMs) ? ok : fail('timestamp_outside_tolerance', TIMESTAMP);
      };
    },
  },
  signer,
  handshake: {
    needsSecret: false,
    // Events API: POST {"type":"url_verification","challenge":…} → the challenge, as plain text.
    create: () => (request) => {
      const body = handshakeJson(request);
      if (!body || body.type !== 'url_verification' || typeof body.challenge !== 'string') return null;
      return { kind: 'answer', status: 200, contentType: HANDSHAKE_TEXT, body: body.challenge };
    },
  },
  typeFromBody(json) {
    if (json.type !== 'event_callback') return null;
    const inner = json.event;
    return inner && typeof inner === 'object' ? textOf((inner as Record<string, unknown>).type) : null;
  },
  dedupe: { json_field: 'event_id' },
  samples: {
    defaultSecret: 'hook-test-slack-signing-secret',
    deliveryIdHeader: 'the event\'s "event_id" (Ev…)',
    events: [
      { name: 'app_mention', description: 'An Events API event_callback: the app mentioned in a channel' },
      { name: 'url_verification', description: 'The challenge Slack sends when a Request URL is saved (answer with the challenge)' },
    ],
    request(_event, payload, secret, context) {
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
      const signed = signer.sign(secret, body, now);
      return {
        body,
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
          'X-Slack-Request-Timestamp': signed[TIMESTAMP],
          'X-Slack-Signature': signed[SIGNATURE],
        },
      };
    },
  },
});
