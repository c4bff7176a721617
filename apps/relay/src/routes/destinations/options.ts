/**
 * A destination's options beyond its URL (docs/delivery.md): where a queue destination
 * publishes, how it signs in (auth), its TLS settings, its signature scheme, ordering and
 * delay. Checked and applied here for every route that creates or changes a destination
 * (the destinations routes, and the endpoint routes for an endpoint's first), and shown
 * here, secrets never.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  generateSigningKey, generateSigningSecret, HookError, SECRET_ROTATION_GRACE_MS, isQueueDestinationType, normaliseDedupe, signingPublicKey, VALIDATION_FAILED,
  type DestinationType, type FieldError, type OrderingSettings, type QueueTarget, type SignatureScheme,
} from '@hook/core';
import { openCredentials, sealCredentials, sealSigningSecret, splitAuth, type DestinationEntity, type DestinationSecrets, type StoredTls } from '@hook/db';
import { checkDestinationUrl } from '../../delivery/destinations.ts';
import type { Static } from 'typebox';
import { DESTINATION_TARGET_FIELDS, type AuthInput } from '../../schemas.ts';

/** Where events go, as the API takes it (its schema: Destination in @hook/core/schemas). */
export interface DestinationInput {
  type: string;
  url?: string;
  exchange?: string;
  routing_key?: string;
  subject?: string;
  stream?: string;
  max_len?: number | null;
  topic?: string;
}

/** The options a create or update may carry; undefined leaves one as it is, null removes it. */
export interface DestinationOptionsInput {
  auth?: Static<typeof AuthInput> | undefined;
  tls?: { client_certificate?: string | null; client_key?: string | null; ca?: string | null } | null | undefined;
  signature_scheme?: SignatureScheme | undefined;
  ordering?: { key?: OrderingSettings['key'] | undefined; on_give_up?: OrderingSettings['on_give_up'] | undefined } | null | undefined;
  delay_seconds?: number | null | undefined;
}

/** The columns a destination's target sets: its type, URL (the receiver's, or the broker's) and a queue destination's target on the broker. */
export function destinationColumns(destination: DestinationInput): { type: DestinationType; url: string | null; target: QueueTarget | null } {
  switch (destination.type) {
    case 'url':
      return { type: 'url', url: destination.url!, target: null };
    case 'amqp':
      return { type: 'amqp', url: destination.url!, target: { type: 'amqp', exchange: destination.exchange!, routing_key: destination.routing_key! } };
    case 'nats':
      return { type: 'nats', url: destination.url!, target: { type: 'nats', subject: destination.subject! } };
    case 'redis':
      return { type: 'redis', url: destination.url!, target: { type: 'redis', stream: destination.stream!, max_len: destination.max_len ?? null } };
    case 'mqtt':
      return { type: 'mqtt', url: destination.url!, target: { type: 'mqtt', topic: destination.topic! } };
    default:
      return { type: 'cli', url: null, target: null };
  }
}

/** A destination's target as the API shows it. */
export function presentDestinationTarget(destination: Pick<DestinationEntity, 'type' | 'url' | 'target'>) {
  const { type, url, target } = destination;
  if (type === 'url') return { type: 'url' as const, url: url! };
  if (target?.type === 'amqp') return { type: 'amqp' as const, url: url!, exchange: target.exchange, routing_key: target.routing_key };
  if (target?.type === 'nats') return { type: 'nats' as const, url: url!, subject: target.subject };
  if (target?.type === 'redis') return { type: 'redis' as const, url: url!, stream: target.stream, max_len: target.max_len };
  if (target?.type === 'mqtt') return { type: 'mqtt' as const, url: url!, topic: target.topic };
  return { type: 'cli' as const };
}

/** A destination's options as the API shows them: no secret, only that one is set. */
export function presentDestinationOptions(destination: DestinationEntity) {
  const auth = destination.auth ? { ...destination.auth, secret_set: true as const } : null;
  const tls = destination.tls ? { client_certificate: destination.tls.client_certificate, client_key_set: destination.tls.client_key_set, ca: destination.tls.ca } : null;
  return {
    auth,
    tls,
    signature_scheme: destination.signatureScheme,
    public_key: destination.publicKey ?? null,
    ordering: destination.ordering ?? null,
    delay_seconds: destination.delaySeconds ?? null,
  };
}

/**
 * Checks a destination's target before it is stored: the fields it takes (each type its
 * own), and its URL, which must parse and, unless the relay allows private destinations,
 * not be or resolve to a private address (a broker's as a receiver's). A broker URL holds
 * no password: auth basic carries it, so it is never shown.
 */
export async function checkDestinationTarget(destination: DestinationInput | undefined, allowPrivate: boolean, field = 'body.destination'): Promise<void> {
  if (destination === undefined) return;
  const allowed = DESTINATION_TARGET_FIELDS[destination.type] ?? [];
  const errors: FieldError[] = Object.keys(destination)
    .filter((name) => name !== 'type' && !allowed.includes(name))
    .map((name) => ({ field: `${field}.${name}`, message: `is not a field of a ${destination.type} destination (it takes ${allowed.length === 0 ? 'no other field' : allowed.join(', ')})` }));
  if (isQueueDestinationType(destination.type) && destination.url !== undefined && URL.parse(destination.url)?.password) {
    errors.push({ field: `${field}.url`, message: 'holds a password; leave it out of the URL and give it as auth {"type":"basic","username":…,"password":…}, which is never shown' });
  }
  failOn(errors);
  if (destination.url !== undefined) await checkDestinationUrl(destination.url, `${field}.url`, { allowPrivate });
}

function failOn(errors: FieldError[]): void {
  if (errors.length > 0) throw new HookError(VALIDATION_FAILED, [errors.length, errors.map((error) => `${error.field} ${error.message}`).join('; ')], errors);
}

/** What a change of options asks of the queue once it is stored (the route does it after flushing). */
export interface OptionsChange {
  /** Ordering was removed or its key changed: the waiting deliveries go unordered (ordering.ts releaseOrdering). */
  releaseOrdering: boolean;
  /** Ordering no longer blocks: its blocked keys are freed. */
  freeBlockedKeys: boolean;
}

/**
 * Applies `input`'s options to `row` (new or stored; in `em`, to flush), after checking
 * them against the destination's type as it will be: a `cli` destination takes none of
 * them (`hook listen` forwards to localhost); a queue destination signs in with basic auth
 * only. Secrets are sealed; a changed signature scheme makes a new secret of that scheme,
 * the old one signing beside it for 24 hours, as a rotation does.
 */
export async function applyDestinationOptions(em: EntityManager, row: DestinationEntity, input: DestinationOptionsInput, now: Date, allowPrivate: boolean): Promise<OptionsChange> {
  const errors: FieldError[] = [];
  const type = row.type;
  const isCli = type === 'cli';
  const takesNothing = (field: string) => errors.push({ field: `body.${field}`, message: 'is not taken by a cli destination: hook listen forwards to your machine; remove it, or give the destination a url' });
  // What the destination will have: the input's value, or (undefined) what it has.
  const auth = input.auth !== undefined ? input.auth : row.auth;
  const tls = input.tls !== undefined ? input.tls : row.tls;
  const ordering = input.ordering !== undefined ? input.ordering : row.ordering;
  const delay = input.delay_seconds !== undefined ? input.delay_seconds : row.delaySeconds;
  if (isCli && auth) takesNothing('auth');
  if (isCli && tls) takesNothing('tls');
  if (isCli && ordering) takesNothing('ordering');
  if (isCli && delay) takesNothing('delay_seconds');
  if (isQueueDestinationType(type) && auth && auth.type !== 'basic') {
    errors.push({ field: 'body.auth.type', message: `is ${auth.type}; a ${type} destination signs in to its broker with basic (username and password) only` });
  }
  failOn(errors);
  // The token URL is reached as a receiver is: the same rule for private addresses.
  if (input.auth?.type === 'oauth2') await checkDestinationUrl(input.auth.token_url, 'body.auth.token_url', { allowPrivate });

  let secrets: DestinationSecrets = openCredentials(em, row.credentials ?? null);
  if (input.auth !== undefined) {
    const { password: _p, token: _t, headers: _h, client_secret: _c, ...kept } = secrets;
    if (input.auth === null) {
      row.auth = null;
      secrets = kept;
    } else {
      const given = input.auth;
      const split = splitAuth(given.type === 'oauth2' ? { ...given, scope: given.scope ?? null, audience: given.audience ?? null } : given);
      row.auth = split.shown;
      secrets = { ...kept, ...split.secrets };
    }
  }
  if (input.tls !== undefined) {
    if (input.tls === null) {
      row.tls = null;
      const { client_key: _k, ...kept } = secrets;
      secrets = kept;
    } else {
      const before = row.tls;
      const certificate = input.tls.client_certificate !== undefined ? input.tls.client_certificate : (before?.client_certificate ?? null);
      const ca = input.tls.ca !== undefined ? input.tls.ca : (before?.ca ?? null);
      const key = input.tls.client_key !== undefined ? input.tls.client_key : (secrets.client_key ?? null);
      if ((certificate === null) !== (key === null)) {
        failOn([{ field: certificate === null ? 'body.tls.client_certificate' : 'body.tls.client_key', message: 'is missing: a client certificate and its key go together; give both (or neither)' }]);
      }
      const tls: StoredTls = { client_certificate: certificate, ca, client_key_set: key !== null };
      row.tls = certificate === null && ca === null ? null : tls;
      const { client_key: _k, ...kept } = secrets;
      secrets = key === null ? kept : { ...kept, client_key: key };
    }
  }
  if (input.auth !== undefined || input.tls !== undefined) row.credentials = sealCredentials(em, secrets);

  if (input.signature_scheme !== undefined && input.signature_scheme !== row.signatureScheme) {
    const fresh = input.signature_scheme === 'v1a' ? generateSigningKey() : generateSigningSecret();
    if (row.secret) {
      row.previousSecret = row.secret;
      row.previousSecretExpiresAt = new Date(now.getTime() + SECRET_ROTATION_GRACE_MS);
    }
    row.secret = sealSigningSecret(em, fresh);
    row.signatureScheme = input.signature_scheme;
    row.publicKey = signingPublicKey(fresh);
  }

  const change: OptionsChange = { releaseOrdering: false, freeBlockedKeys: false };
  if (input.ordering !== undefined) {
    const before = row.ordering ?? null;
    const key = input.ordering?.key === undefined ? (before?.key ?? null) : input.ordering.key;
    const next: OrderingSettings | null = input.ordering === null ? null : {
      key: key === null ? null : normaliseDedupe(key),
      on_give_up: input.ordering.on_give_up ?? before?.on_give_up ?? 'block',
    };
    change.releaseOrdering = before !== null && (next === null || JSON.stringify(next.key) !== JSON.stringify(before.key));
    change.freeBlockedKeys = before?.on_give_up === 'block' && next?.on_give_up !== 'block';
    row.ordering = next;
  }
  if (input.delay_seconds !== undefined) row.delaySeconds = input.delay_seconds;
  row.updatedAt = now;
  return change;
}

/** The secrets of a new destination: a v1 (whsec_) secret or a v1a (whsk_) key. */
export function newSigningSecret(scheme: SignatureScheme): { secret: string; publicKey: string | null } {
  const secret = scheme === 'v1a' ? generateSigningKey() : generateSigningSecret();
  return { secret, publicKey: signingPublicKey(secret) };
}
