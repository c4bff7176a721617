/**
 * Handshakes answered at the ingest URL (docs/sources.md, Handshakes): the challenge a
 * provider sends before (or while) it delivers, answered at once as that provider's
 * documentation says. A handshake is stored as an event marked with its provider and is
 * not delivered. This file holds what every handshake shares; each provider's responder is
 * in its own file (packages/core/src/providers/<name>.ts), and the registry
 * (providers/index.ts) builds an endpoint's.
 */

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

export const HANDSHAKE_TEXT = 'text/plain; charset=utf-8';
export const HANDSHAKE_JSON = 'application/json; charset=utf-8';

/** A POST body's top-level JSON object (at most 64 KiB), else null: a handshake is small. */
export function handshakeJson(request: HandshakeRequest): Record<string, unknown> | null {
  if (request.method !== 'POST' || request.body.length === 0 || request.body.length > 65_536) return null;
  try {
    const parsed: unknown = JSON.parse(request.body.toString('utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed as Record<string, unknown> : null;
  } catch {
    return null;
  }
}
