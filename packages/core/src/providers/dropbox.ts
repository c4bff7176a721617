/**
 * Dropbox (docs: "Webhooks"): a webhook URL is verified with `GET ?challenge=…`, answered
 * with the challenge as `text/plain` with `X-Content-Type-Options: nosniff`.
 */
import { defineProvider } from './provider.ts';

export const dropbox = defineProvider({
  name: 'dropbox',
  title: 'Dropbox',
  handshake: {
    needsSecret: false,
    create: () => (request) => {
      if (request.method !== 'GET') return null;
      const challenge = new URLSearchParams(request.query).get('challenge');
      return challenge === null ? null : { kind: 'answer', status: 200, contentType: 'text/plain', headers: { 'x-content-type-options': 'nosniff' }, body: challenge };
    },
  },
});
