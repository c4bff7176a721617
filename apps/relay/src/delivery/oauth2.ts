/**
 * OAuth2 access tokens for destinations that sign in with the client credentials grant
 * (RFC 6749 §4.4). One token per destination, kept until shortly before it expires; a
 * receiver's 401 gets one new token (the sender retries once). Concurrent attempts for one
 * destination share one token request.
 *
 * Client authentication: HTTP Basic (RFC 6749 §2.3.1, the method every server must
 * support), with client_id and client_secret form-encoded before base64. A server that
 * answers that with `invalid_client` is asked once more with the credentials in the form
 * body (§2.3.1's alternative, which some servers want instead); when that works, the
 * destination's later token requests go that way at once.
 */
import { createHash } from 'node:crypto';
import { DELIVERY_TIMEOUT_MARKER, isSuccessStatus, transportFailureKind, type AttemptKind, type DestinationAuth } from '@hook/core';

export type OAuth2Auth = Extract<DestinationAuth, { type: 'oauth2' }>;

/** What the token endpoint answered: `status` null with `error` (and why, `kind`) when no answer came. */
export interface TokenEndpointAnswer {
  status: number | null;
  kind: AttemptKind;
  body: string | null;
  error: string | null;
}

/** POSTs a form to a token endpoint: the sender's own connection rules (private addresses refused, its time limit). */
export type PostTokenRequest = (url: string, headers: Record<string, string>, body: Buffer) => Promise<TokenEndpointAnswer>;

/**
 * An access token, or why there is none: the attempt's error and kind. No answer from the
 * token endpoint keeps that failure's kind (timeout, connection_refused, dns, tls…); an
 * answer without a token is a `network_error`: the receiver was never reached, so no
 * status of the receiver's can stand for it.
 */
export type TokenOutcome = { token: string } | { error: string; kind: AttemptKind };

/** Most destinations whose tokens are kept; beyond, the one cached first is dropped (it costs one token request). */
const CACHED_DESTINATIONS_MAX = 10_000;
/** A token is renewed this long before it expires at most (less for short-lived tokens: EXPIRY_MARGIN_SHARE of its life). */
const EXPIRY_MARGIN_MAX_MS = 30_000;
/** Share of a token's lifetime kept as margin, when that is under EXPIRY_MARGIN_MAX_MS. */
const EXPIRY_MARGIN_SHARE = 0.1;
/** How long a token that came without `expires_in` is kept (a 401 renews it sooner). */
const LIFETIME_UNSTATED_MS = 3_600_000;
/** The part of an error answer quoted when it is not an OAuth2 error document. */
const ERROR_BODY_QUOTED_CHARS = 200;

interface DestinationToken {
  /** A hash of the auth settings the token was got with: a changed setting gets a new token. */
  settings: string;
  token: string | null;
  /** performance.now() after which the token is not used. */
  renewAtMs: number;
  /** The token request under way, which concurrent attempts wait on. */
  pending: Promise<TokenOutcome> | null;
  /** The server refused Basic client authentication and took the credentials in the body. */
  credentialsInBody: boolean;
}

function settingsHash(auth: OAuth2Auth): string {
  return createHash('sha256').update(JSON.stringify([auth.token_url, auth.client_id, auth.client_secret, auth.scope, auth.audience])).digest('base64url');
}

/** application/x-www-form-urlencoded, as RFC 6749 §2.3.1 has client_id and client_secret encoded before Basic. */
function formEncoded(value: string): string {
  return new URLSearchParams([['', value]]).toString().slice(1);
}

function parseJsonObject(text: string | null): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text ?? '');
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A token endpoint's answer read (RFC 6749 §5.1, §5.2): the token and its lifetime, or what went wrong. */
function readTokenAnswer(answer: TokenEndpointAnswer): { token: string; lifetimeMs: number | null } | { problem: string; oauthError: string | null; kind?: AttemptKind } {
  if (answer.status === null) return { problem: answer.error ?? 'no answer', oauthError: null, kind: answer.kind };
  const document = parseJsonObject(answer.body);
  if (!isSuccessStatus(answer.status)) {
    const oauthError = typeof document?.error === 'string' ? document.error : null;
    const description = typeof document?.error_description === 'string' ? document.error_description : null;
    const detail = oauthError !== null ? [oauthError, description].filter((part) => part !== null).join(': ') : JSON.stringify((answer.body ?? '').slice(0, ERROR_BODY_QUOTED_CHARS));
    return { problem: `${answer.status} ${detail}`, oauthError };
  }
  if (document === null) return { problem: `${answer.status}, but the answer is not a JSON object`, oauthError: null };
  if (typeof document.access_token !== 'string' || document.access_token === '') return { problem: `${answer.status}, but the answer has no access_token`, oauthError: null };
  if (typeof document.token_type === 'string' && document.token_type.toLowerCase() !== 'bearer') {
    return { problem: `token_type ${JSON.stringify(document.token_type)} is not supported (Bearer only)`, oauthError: null };
  }
  // Some servers send expires_in as a string.
  const expiresIn = Number(document.expires_in);
  return { token: document.access_token, lifetimeMs: document.expires_in !== undefined && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : null };
}

/** Resolves with `late()` once `deadline` aborts, if `work` has not settled by then. */
function beforeDeadline<T>(work: Promise<T>, deadline: AbortSignal, late: () => T): Promise<T> {
  if (deadline.aborted) return Promise.resolve(late());
  return new Promise<T>((resolve) => {
    const onAbort = (): void => resolve(late());
    deadline.addEventListener('abort', onAbort, { once: true });
    void work.then((value) => {
      deadline.removeEventListener('abort', onAbort);
      resolve(value);
    });
  });
}

/** The OAuth2 tokens of one sender's destinations (see above). */
export class OAuth2Tokens {
  readonly #byDestination = new Map<string, DestinationToken>();
  readonly #post: PostTokenRequest;
  readonly #timeoutMs: number;

  /** `timeoutMs`: the attempt's time limit, named when waiting for a token used it up. */
  constructor(options: { post: PostTokenRequest; timeoutMs: number }) {
    this.#post = options.post;
    this.#timeoutMs = options.timeoutMs;
  }

  /** The destination's token: the cached one while it is fresh, else a new one (shared with concurrent callers), by `deadline`. */
  token(destinationId: string, auth: OAuth2Auth, deadline: AbortSignal): Promise<TokenOutcome> {
    const entry = this.#entry(destinationId, auth);
    if (entry.token !== null && performance.now() < entry.renewAtMs) return Promise.resolve({ token: entry.token });
    entry.pending ??= this.#request(entry, auth).finally(() => {
      entry.pending = null;
    });
    return beforeDeadline(entry.pending, deadline, () => ({ error: `oauth2 token request to ${auth.token_url} failed: no answer within ${this.#timeoutMs} ms ${DELIVERY_TIMEOUT_MARKER}`, kind: 'timeout' }));
  }

  /**
   * A new token after the receiver refused `refused` (revoked, rotated, or expired early).
   * Attempts refused together get one new token: only the first drops `refused`.
   */
  renew(destinationId: string, auth: OAuth2Auth, refused: string, deadline: AbortSignal): Promise<TokenOutcome> {
    const entry = this.#entry(destinationId, auth);
    if (entry.token === refused) entry.token = null;
    return this.token(destinationId, auth, deadline);
  }

  #entry(destinationId: string, auth: OAuth2Auth): DestinationToken {
    const settings = settingsHash(auth);
    const cached = this.#byDestination.get(destinationId);
    if (cached?.settings === settings) return cached;
    const entry: DestinationToken = { settings, token: null, renewAtMs: 0, pending: null, credentialsInBody: false };
    this.#byDestination.delete(destinationId);
    this.#byDestination.set(destinationId, entry);
    if (this.#byDestination.size > CACHED_DESTINATIONS_MAX) this.#byDestination.delete(this.#byDestination.keys().next().value!);
    return entry;
  }

  /** Asks the token endpoint (see the module comment for client authentication); never throws. */
  async #request(entry: DestinationToken, auth: OAuth2Auth): Promise<TokenOutcome> {
    try {
      const requestedAtMs = performance.now();
      let read = readTokenAnswer(await this.#ask(auth, entry.credentialsInBody));
      if ('problem' in read && read.oauthError === 'invalid_client' && !entry.credentialsInBody) {
        const inBody = readTokenAnswer(await this.#ask(auth, true));
        if ('token' in inBody) entry.credentialsInBody = true;
        read = inBody;
      }
      if ('problem' in read) return { error: `oauth2 token request to ${auth.token_url} failed: ${read.problem}`, kind: read.kind ?? 'network_error' };
      const lifetimeMs = read.lifetimeMs ?? LIFETIME_UNSTATED_MS;
      entry.token = read.token;
      // From when it was asked for: the server's clock started no later.
      entry.renewAtMs = requestedAtMs + lifetimeMs - Math.min(EXPIRY_MARGIN_MAX_MS, lifetimeMs * EXPIRY_MARGIN_SHARE);
      return { token: read.token };
    } catch (error) {
      return { error: `oauth2 token request to ${auth.token_url} failed: ${(error as Error).message}`, kind: transportFailureKind(error) };
    }
  }

  #ask(auth: OAuth2Auth, credentialsInBody: boolean): Promise<TokenEndpointAnswer> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (auth.scope !== null) form.set('scope', auth.scope);
    if (auth.audience !== null) form.set('audience', auth.audience);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (credentialsInBody) {
      form.set('client_id', auth.client_id);
      form.set('client_secret', auth.client_secret);
    } else {
      headers.authorization = `Basic ${Buffer.from(`${formEncoded(auth.client_id)}:${formEncoded(auth.client_secret)}`).toString('base64')}`;
    }
    return this.#post(auth.token_url, headers, Buffer.from(form.toString()));
  }
}
