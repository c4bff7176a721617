/**
 * Handshakes answered at the ingest URL (docs/sources.md, Handshakes): the challenge a
 * provider sends before (or while) it delivers, answered at once as that provider's
 * documentation says. A handshake is stored as an event marked with its provider and is
 * not delivered.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const HANDSHAKE_PROVIDERS = ['slack', 'meta', 'graph', 'dropbox', 'zoom', 'twitter'] as const;
export type HandshakeProvider = (typeof HANDSHAKE_PROVIDERS)[number];

/** Providers whose handshake needs a secret: Meta's verify token, Zoom's secret token, X's consumer secret. */
export const HANDSHAKE_SECRET_PROVIDERS: readonly HandshakeProvider[] = ['meta', 'zoom', 'twitter'];

/** An endpoint's handshake as stored (the secret kept apart, sealed). */
export interface HandshakeSettings {
  provider: HandshakeProvider;
  /** The secret's last 4 characters, when there is one. */
  secret_hint?: string;
}

/** What to answer a request that is a handshake. */
export type HandshakeAnswer =
  | { kind: 'answer'; status: 200; contentType: string; headers?: Record<string, string>; body: string }
  | { kind: 'refuse'; reason: string };

export interface HandshakeRequest {
  method: string;
  /** The raw query string, without `?`. */
  query: string;
  contentType: string | null;
  body: Buffer;
}

/** Checks a request against a provider's handshake: an answer, a refusal, or null when it is not a handshake. */
export type HandshakeResponder = (request: HandshakeRequest) => HandshakeAnswer | null;

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

function jsonBody(request: HandshakeRequest): Record<string, unknown> | null {
  if (request.method !== 'POST' || request.body.length === 0 || request.body.length > 65_536) return null;
  try {
    const parsed: unknown = JSON.parse(request.body.toString('utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed as Record<string, unknown> : null;
  } catch {
    return null;
  }
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The responder for an endpoint's handshake; `secret` is required for meta, zoom and twitter. */
export function createHandshakeResponder(provider: HandshakeProvider, secret: string | null): HandshakeResponder {
  switch (provider) {
    case 'slack':
      // Events API: POST {"type":"url_verification","challenge":…} → the challenge, as plain text.
      return (request) => {
        const body = jsonBody(request);
        if (!body || body.type !== 'url_verification' || typeof body.challenge !== 'string') return null;
        return { kind: 'answer', status: 200, contentType: TEXT, body: body.challenge };
      };
    case 'meta':
      // GET ?hub.mode=subscribe&hub.verify_token=…&hub.challenge=… → the challenge when the token matches, 403 otherwise.
      return (request) => {
        if (request.method !== 'GET') return null;
        const query = new URLSearchParams(request.query);
        if (query.get('hub.mode') !== 'subscribe' || !query.has('hub.challenge')) return null;
        if (!sameText(query.get('hub.verify_token') ?? '', secret ?? '')) return { kind: 'refuse', reason: 'hub.verify_token does not match the endpoint\'s verify token' };
        return { kind: 'answer', status: 200, contentType: TEXT, body: query.get('hub.challenge')! };
      };
    case 'graph':
      // Microsoft Graph: POST (or GET) ?validationToken=… → the token, URL-decoded, as text/plain.
      return (request) => {
        if (request.method !== 'POST' && request.method !== 'GET') return null;
        const token = new URLSearchParams(request.query).get('validationToken');
        return token === null ? null : { kind: 'answer', status: 200, contentType: 'text/plain', body: token };
      };
    case 'dropbox':
      // Dropbox: GET ?challenge=… → the challenge as text/plain with X-Content-Type-Options: nosniff.
      return (request) => {
        if (request.method !== 'GET') return null;
        const challenge = new URLSearchParams(request.query).get('challenge');
        return challenge === null ? null : { kind: 'answer', status: 200, contentType: 'text/plain', headers: { 'x-content-type-options': 'nosniff' }, body: challenge };
      };
    case 'zoom':
      // Zoom: POST {"event":"endpoint.url_validation","payload":{"plainToken":…}} → {plainToken, encryptedToken: hex HMAC-SHA256(secret token, plainToken)}.
      return (request) => {
        const body = jsonBody(request);
        const payload = body?.payload as Record<string, unknown> | undefined;
        if (!body || body.event !== 'endpoint.url_validation' || typeof payload?.plainToken !== 'string') return null;
        const plainToken = payload.plainToken;
        const encryptedToken = createHmac('sha256', secret ?? '').update(plainToken).digest('hex');
        return { kind: 'answer', status: 200, contentType: JSON_TYPE, body: JSON.stringify({ plainToken, encryptedToken }) };
      };
    case 'twitter':
      // X (Twitter) CRC: GET ?crc_token=… → {"response_token": "sha256=" + base64 HMAC-SHA256(consumer secret, crc_token)}.
      return (request) => {
        if (request.method !== 'GET') return null;
        const token = new URLSearchParams(request.query).get('crc_token');
        if (token === null) return null;
        const digest = createHmac('sha256', secret ?? '').update(token).digest('base64');
        return { kind: 'answer', status: 200, contentType: JSON_TYPE, body: JSON.stringify({ response_token: `sha256=${digest}` }) };
      };
  }
}
