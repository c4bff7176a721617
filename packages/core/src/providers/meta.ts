/**
 * Meta: WhatsApp, Messenger, Instagram (docs: "Getting started with webhooks"). Its
 * handshake is `GET ?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…`, answered with
 * the challenge when the verify token is the endpoint's (compared in constant time),
 * refused (403) otherwise.
 */
import { HANDSHAKE_TEXT } from '../handshakes.ts';
import { sameText } from '../verification.ts';
import { defineProvider } from './provider.ts';

export const meta = defineProvider({
  name: 'meta',
  title: 'Meta (WhatsApp, Messenger, Instagram)',
  handshake: {
    needsSecret: true,
    create: (secret) => (request) => {
      if (request.method !== 'GET') return null;
      const query = new URLSearchParams(request.query);
      if (query.get('hub.mode') !== 'subscribe' || !query.has('hub.challenge')) return null;
      if (!sameText(query.get('hub.verify_token') ?? '', secret ?? '')) return { kind: 'refuse', reason: 'hub.verify_token does not match the endpoint\'s verify token' };
      return { kind: 'answer', status: 200, contentType: HANDSHAKE_TEXT, body: query.get('hub.challenge')! };
    },
  },
});
