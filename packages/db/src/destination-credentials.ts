/**
 * The secret parts of a destination's auth and TLS settings (docs/delivery.md): a
 * password, token, header values or OAuth2 client secret, and a client key. They are
 * stored together as one sealed JSON document (`destination.credentials`, the same
 * AES-256-GCM box as signing secrets: signing-secrets.ts), never shown; the rest of the
 * settings are stored in the clear (`destination.auth`, `destination.tls`) and shown.
 */
import type { DestinationAuth, DestinationTls } from '@hook/core';
import type { StoredAuth, StoredTls } from './entities/destination.ts';
import { signingSecretBox, type SecretBoxOwner } from './signing-secrets.ts';

/** What `credentials` holds. */
export interface DestinationSecrets {
  password?: string;
  token?: string;
  headers?: Record<string, string>;
  client_secret?: string;
  client_key?: string;
}

/** Most opened credentials kept; past it the cache starts over. */
const OPENED_MAX = 1000;
const opened = new Map<string, DestinationSecrets>();

export function sealCredentials(owner: SecretBoxOwner, secrets: DestinationSecrets): string | null {
  const present = Object.fromEntries(Object.entries(secrets).filter(([, value]) => value !== undefined));
  return Object.keys(present).length === 0 ? null : signingSecretBox(owner).seal(JSON.stringify(present));
}

/** The secrets in a stored `credentials` value (null: none); opened once per value, then kept. */
export function openCredentials(owner: SecretBoxOwner, stored: string | null): DestinationSecrets {
  if (stored === null) return {};
  let secrets = opened.get(stored);
  if (!secrets) {
    secrets = JSON.parse(signingSecretBox(owner).open(stored)) as DestinationSecrets;
    if (opened.size >= OPENED_MAX) opened.clear();
    opened.set(stored, secrets);
  }
  return secrets;
}

/** The input's auth split into what is shown and what is sealed. */
export function splitAuth(auth: DestinationAuth): { shown: StoredAuth; secrets: DestinationSecrets } {
  switch (auth.type) {
    case 'basic':
      return { shown: { type: 'basic', username: auth.username }, secrets: { password: auth.password } };
    case 'bearer':
      return { shown: { type: 'bearer' }, secrets: { token: auth.token } };
    case 'headers': {
      const headers = Object.fromEntries(Object.entries(auth.headers).map(([name, value]) => [name.toLowerCase(), value]));
      return { shown: { type: 'headers', header_names: Object.keys(headers) }, secrets: { headers } };
    }
    case 'oauth2':
      return {
        shown: { type: 'oauth2', token_url: auth.token_url, client_id: auth.client_id, scope: auth.scope ?? null, audience: auth.audience ?? null },
        secrets: { client_secret: auth.client_secret },
      };
  }
}

/** A destination's auth, whole, from what is stored. */
export function destinationAuthOf(shown: StoredAuth | null, secrets: DestinationSecrets): DestinationAuth | null {
  if (shown === null) return null;
  switch (shown.type) {
    case 'basic':
      return { type: 'basic', username: shown.username ?? '', password: secrets.password ?? '' };
    case 'bearer':
      return { type: 'bearer', token: secrets.token ?? '' };
    case 'headers':
      return { type: 'headers', headers: secrets.headers ?? {} };
    case 'oauth2':
      return { type: 'oauth2', token_url: shown.token_url ?? '', client_id: shown.client_id ?? '', client_secret: secrets.client_secret ?? '', scope: shown.scope ?? null, audience: shown.audience ?? null };
  }
}

/** A destination's TLS settings, whole, from what is stored. */
export function destinationTlsOf(shown: StoredTls | null, secrets: DestinationSecrets): DestinationTls | null {
  if (shown === null) return null;
  return { client_certificate: shown.client_certificate, client_key: secrets.client_key ?? null, ca: shown.ca };
}
