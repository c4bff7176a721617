/**
 * Microsoft Graph (docs: "Set up notifications for changes in resource data"): a
 * subscription's notification URL is validated with `POST ?validationToken=…`, answered
 * with the token, URL-decoded, as `text/plain` within 10 seconds. GET is taken the same way.
 */
import { defineProvider } from './provider.ts';

export const graph = defineProvider({
  name: 'graph',
  title: 'Microsoft Graph',
  handshake: {
    needsSecret: false,
    create: () => (request) => {
      if (request.method !== 'POST' && request.method !== 'GET') return null;
      const token = new URLSearchParams(request.query).get('validationToken');
      return token === null ? null : { kind: 'answer', status: 200, contentType: 'text/plain', body: token };
    },
  },
});
