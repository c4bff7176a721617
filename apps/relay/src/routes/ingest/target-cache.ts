import { createHandshakeResponder, createVerifier, servableResponseHeaders, type DedupeSettings, type EndpointResponse, type DestinationType, type HandshakeProvider, type HandshakeResponder, type VerificationMode, type Verifier } from '@hook/core';
import { Destination, Endpoint, openSigningSecret, type Orm } from '@hook/db';

/** What ingest needs to know about the endpoint behind an ingest id. */
export interface IngestTarget {
  id: string;
  accountId: string;
  status: string;
  /**
   * The endpoint's only destination when it has one and it is active (a URL one without
   * limits of its own): ingest may then store the event's delivery claimed by this
   * process's worker (worker.ts LocalDelivery) or one of its listen sessions
   * (stream/listeners.ts), and deliver it at once.
   */
  soleDestination: { id: string; type: DestinationType } | null;
  /**
   * The endpoint's signature check, made once per load (secret opened, key imported) so a
   * request costs one HMAC; null when the endpoint verifies nothing.
   */
  verification: { mode: VerificationMode; verify: Verifier } | null;
  /** What a stored request is answered with; null: the default `{"id","status"}` JSON. */
  response: EndpointResponse | null;
  /** The provider's handshake, answered at once; null when the endpoint answers none. */
  handshake: { provider: HandshakeProvider; respond: HandshakeResponder } | null;
  /** Where a request's dedupe key is; null when every request is stored. */
  dedupe: DedupeSettings | null;
  /** The endpoint's ordered destinations and where each reads an event's ordering key (null: one key for all), so ingest stores each delivery with its key. */
  ordered: { destinationId: string; key: DedupeSettings | null }[];
}

export interface IngestTargetCacheOptions {
  /** How long a looked-up endpoint is trusted; also the longest another relay process may take to see a change. */
  ttlMs?: number;
  /** Most ingest ids kept; the oldest entry goes first. */
  maxEntries?: number;
}

interface Entry {
  target: IngestTarget | null;
  expiresAtMs: number;
}

/**
 * Ingest ids resolved to endpoints, kept for a short time so that a burst to one URL
 * costs one query, not one per request. Changes made through this process invalidate
 * at once; changes made by another relay process show within `ttlMs`. Concurrent
 * misses for one id share a single query.
 */
export class IngestTargetCache {
  readonly #orm: Orm;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, Entry>();
  readonly #loading = new Map<string, Promise<IngestTarget | null>>();

  constructor(orm: Orm, options: IngestTargetCacheOptions = {}) {
    this.#orm = orm;
    this.#ttlMs = options.ttlMs ?? 1000;
    this.#maxEntries = options.maxEntries ?? 10_000;
  }

  /** The endpoint receiving at `ingestId`, or null when none does (deleted or unknown). */
  async get(ingestId: string): Promise<IngestTarget | null> {
    const entry = this.#entries.get(ingestId);
    if (entry && entry.expiresAtMs > Date.now()) return entry.target;
    let loading = this.#loading.get(ingestId);
    if (!loading) {
      loading = this.#load(ingestId).finally(() => this.#loading.delete(ingestId));
      this.#loading.set(ingestId, loading);
    }
    return loading;
  }

  /** Forgets an ingest id after its endpoint changed, so the next request reads it fresh. */
  invalidate(ingestId: string): void {
    this.#entries.delete(ingestId);
  }

  /** Forgets an endpoint known only by id (its receiver answered 410, say). */
  invalidateEndpoint(endpointId: string): void {
    for (const [ingestId, entry] of this.#entries) if (entry.target?.id === endpointId) this.#entries.delete(ingestId);
  }

  async #load(ingestId: string): Promise<IngestTarget | null> {
    const em = this.#orm.em.fork();
    const endpoint = await em.findOne(
      Endpoint,
      { ingestId, kind: 'user', deletedAt: null }, // the notifications endpoint takes no events from outside
      { fields: ['id', 'accountId', 'status', 'verification', 'verificationSecret', 'response', 'handshake', 'handshakeSecret', 'dedupe'] },
    );
    const destinations = endpoint
      ? await em.find(Destination, { endpointId: endpoint.id, accountId: endpoint.accountId, deletedAt: null }, { fields: ['id', 'type', 'status', 'ratePerSecond', 'maxInFlight', 'ordering', 'delaySeconds'] })
      : [];
    const only = destinations.length === 1 ? destinations[0]! : undefined;
    // Delayed deliveries wait for their time, and queue destinations are claimed by the
    // workers; an ordered one takes the slot only when its key is idle (insert-events.ts).
    const sole = only && only.status === 'active' && only.delaySeconds === null && (only.ordering === null || only.type === 'url')
      && (only.type === 'cli' || (only.type === 'url' && only.ratePerSecond === null && only.maxInFlight === null)) ? { id: only.id, type: only.type } : null;
    const ordered = destinations.flatMap((destination) => (destination.ordering ? [{ destinationId: destination.id, key: destination.ordering.key }] : []));
    const settings = endpoint?.verification;
    const verification = settings && endpoint.verificationSecret
      ? { mode: settings.mode, verify: createVerifier(settings, openSigningSecret(this.#orm, endpoint.verificationSecret)) }
      : null;
    const handshake = endpoint?.handshake
      ? { provider: endpoint.handshake.provider, respond: createHandshakeResponder(endpoint.handshake.provider, endpoint.handshakeSecret ? openSigningSecret(this.#orm, endpoint.handshakeSecret) : null) }
      : null;
    // A response stored before the header allow list keeps only what may be served now.
    const response = endpoint?.response ? { ...endpoint.response, headers: servableResponseHeaders(endpoint.response.headers) } : null;
    const target = endpoint ? { id: endpoint.id, accountId: endpoint.accountId, status: endpoint.status, soleDestination: sole, verification, response, handshake, dedupe: endpoint.dedupe ?? null, ordered } : null;
    // Unknown ids are not cached: an attacker's random ids must not evict real ones.
    if (target) {
      this.#entries.delete(ingestId);
      this.#entries.set(ingestId, { target, expiresAtMs: Date.now() + this.#ttlMs });
      if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    }
    return target;
  }
}
