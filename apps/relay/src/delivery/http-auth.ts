/**
 * The headers a URL destination's auth adds to its deliveries (docs/delivery.md): Basic,
 * Bearer, static headers, or an OAuth2 access token (oauth2.ts gets it).
 */
import { DELIVERY_HEADER_NAMES, REDACTED_HEADER_VALUE, type DestinationAuth } from '@hook/core';

/** The auth kinds whose headers need no request first. */
export type StaticDestinationAuth = Exclude<DestinationAuth, { type: 'oauth2' }>;

/** The headers `auth` adds to each delivery. */
export function destinationAuthHeaders(auth: StaticDestinationAuth): Record<string, string> {
  switch (auth.type) {
    case 'basic':
      // RFC 7617: user-id ":" password, UTF-8, base64.
      return { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}` };
    case 'bearer':
      return bearerAuthorization(auth.token);
    case 'headers':
      return auth.headers;
  }
}

/** `authorization: Bearer <token>` (RFC 6750 §2.1). */
export function bearerAuthorization(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** Headers that carry credentials whatever the destination's auth: never kept with an attempt. */
const CREDENTIAL_HEADER_NAMES = new Set(['authorization', 'proxy-authorization']);

/**
 * The headers of a delivery as its attempt keeps them (docs/api.md#attempts): as sent, but
 * with the values of Authorization, Proxy-Authorization and the destination's static auth
 * headers replaced by REDACTED_HEADER_VALUE, so reading an event never shows a
 * destination's secrets. The relay's own headers stay (a static header of that name was
 * not sent: withDestinationHeaders).
 */
export function redactedHeaders(headers: Record<string, string>, auth: DestinationAuth | null): Record<string, string> {
  const secret = auth?.type === 'headers'
    ? new Set([...CREDENTIAL_HEADER_NAMES, ...Object.keys(auth.headers).map((name) => name.toLowerCase()).filter((name) => !isRelayHeader(name))])
    : CREDENTIAL_HEADER_NAMES;
  let out: Record<string, string> | null = null;
  for (const name of Object.keys(headers)) {
    if (!secret.has(name.toLowerCase())) continue;
    out ??= { ...headers };
    out[name] = REDACTED_HEADER_VALUE;
  }
  return out ?? headers;
}

/** The relay's own headers (the signature headers, x-hook-*): what the receiver verifies a delivery by. */
function isRelayHeader(lowerName: string): boolean {
  return DELIVERY_HEADER_NAMES.includes(lowerName) || lowerName.startsWith('x-hook-');
}

/**
 * A delivery's `headers` with a destination's `added` on top: an added header replaces a
 * forwarded one of the same name (in any case), but the relay's own headers always win, so
 * a destination setting cannot break the signature its receiver checks. Nothing is refused
 * at send time: an added relay header is left out, and the delivery goes.
 */
export function withDestinationHeaders(headers: Record<string, string>, added: Record<string, string>): Record<string, string> {
  const replaced = new Set(Object.keys(added).map((name) => name.toLowerCase()).filter((name) => !isRelayHeader(name)));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!replaced.has(name.toLowerCase())) out[name] = value;
  for (const [name, value] of Object.entries(added)) if (replaced.has(name.toLowerCase())) out[name] = value;
  return out;
}
