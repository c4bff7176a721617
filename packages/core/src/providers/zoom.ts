/**
 * Zoom (docs: "Validate your webhook endpoint"): `POST {"event":"endpoint.url_validation",
 * "payload":{"plainToken":…}}`, answered with `{plainToken, encryptedToken}`, the token's
 * hex HMAC-SHA256 under the app's secret token.
 */
import { createHmac } from 'node:crypto';
import { HANDSHAKE_JSON, handshakeJson } from '../handshakes.ts';
import { defineProvider } from './provider.ts';

export const zoom = defineProvider({
  name: 'zoom',
  title: 'Zoom',
  handshake: {
    needsSecret: true,
    create: (secret) => (request) => {
      const body = handshakeJson(request);
      const payload = body?.payload as Record<string, unknown> | undefined;
      if (!body || body.event !== 'endpoint.url_validation' || typeof payload?.plainToken !== 'string') return null;
      const plainToken = payload.plainToken;
      const encryptedToken = createHmac('sha256', secret ?? '').update(plainToken).digest('hex');
      return { kind: 'answer', status: 200, contentType: HANDSHAKE_JSON, body: JSON.stringify({ plainToken, encryptedToken }) };
    },
  },
});
