import { createHandshakeResponder, createVerifier, servableResponseHeaders, type DedupeSettings, type EndpointResponse, type DestinationType, type HandshakeProvider, type HandshakeResponder, type VerificationMode, type Verifier } from '@hook/core';
import { Destination, Endpoint, openSigningSecret, type Orm } from '@hook/db';
import { LRUCache } from 'lru-cache';

/** What ingest needs to know about the endpoint behind an ingest id. */
export interface IngestTarget {
  id: string;
  accountId: string;
  status: string;
  /**
   * The endpoint's only destination when it has one and it is active (a URL one without
   * limits of its own): ingest may then store the event's delivery claimed by this
   * process's worker (a slot it reserves: DeliverySlots, claimer.ts) or one of its listen sessions
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

/** A load's answer for an id that is no endpoint's, when the load was cut short by `invalidate` (lru-cache would report that as an error). */
const UNKNOWN = Symbol('unknown ingest id');

/**
 * Ingest ids resolved to endpoints, kept for a short time so that a burst to one URL
 * costs one query, not one per request. Changes made through this process invalidate
 * at once, including a load in flight (its answer is not kept); changes made by another
 * relay process show within `ttlMs`. Concurrent misses for one id share a single query.
 */
export class IngestTargetCache {
  readonly #orm: Orm;
  readonly #cache: LRUCache<string, IngestTarget | typeof UNKNOWN>;

  constructor(orm: Orm, options: IngestTargetCacheOptions = {}) {
    this.#orm = orm;
    this.#cache = new LRUCache({
      ttl: options.ttlMs ?? 1000,
      max: options.maxEntries ?? 10_000,
      ttlResolution: 0, // an entry's age is read from performance.now() each time, not a 1 ms memo of it
      // A load that `invalidate` (or eviction) cuts short still answers the requests waiting on it,
      // with what it read, but lru-cache does not keep that answer: the next request reads again.
      ignoreFetchAbort: true,
      // Unknown ids are not cached (undefined): an attacker's random ids must not evict real ones.
      fetchMethod: async (ingestId, _stale, { signal }) => (await this.#load(ingestId)) ?? (signal.aborted ? UNKNOWN : undefined),
    });
  }

  /** The endpoint receiving at `ingestId`, or null when none does (deleted or unknown). */
  async get(ingestId: string): Promise<IngestTarget | null> {
    const target = await this.#cache.fetch(ingestId);
    return target === undefined || target === UNKNOWN ? null : target;
  }

  /** Forgets an ingest id after its endpoint changed, so the next request reads it fresh (a load in flight is not kept). */
  invalidate(ingestId: string): void {
    this.#cache.delete(ingestId);
  }

  /** Forgets an endpoint known only by id (its receiver answered 410, say). */
  invalidateEndpoint(endpointId: string): void {
    const ingestIds = [...this.#cache.entries()].flatMap(([ingestId, target]) => (target !== UNKNOWN && target.id === endpointId ? [ingestId] : []));
    for (const ingestId of ingestIds) this.#cache.delete(ingestId);
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
    return target;
  }
}
