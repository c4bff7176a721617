/**
 * X (Twitter) Challenge-Response Check (docs: "Securing webhooks"): `GET ?crc_token=…`,
 * answered with `{"response_token": "sha256=" + base64 HMAC-SHA256(consumer secret, crc_token)}`.
 */
import { createHmac } from 'node:crypto';
import { HANDSHAKE_JSON } from '../handshakes.ts';
import { defineProvider } from './provider.ts';

export const twitter = defineProvider({
  name: 'twitter',
  title: 'X (Twitter)',
  handshake: {
    needsSecret: true,
    create: (secret) => (request) => {
      if (request.method !== 'GET') return null;
      const token = new URLSearchParams(request.query).get('crc_token');
      if (token === null) return null;
      const digest = createHmac('sha256', secret ?? '').update(token).digest('base64');
      return { kind: 'answer', status: 200, contentType: HANDSHAKE_JSON, body: JSON.stringify({ response_token: `sha256=${digest}` }) };
    },
  },
});
