import { isIP } from 'node:net';
import type { Orm } from '@hook/db';
import { LRUCache } from 'lru-cache';

export interface CustomDomainCacheOptions {
  /** Hostnames that are the relay's own (HOOK_PUBLIC_URL's, HOOK_INGEST_URL's): never an account's, never looked up. */
  ownHosts?: readonly string[];
  /** How long a looked-up host is trusted; also the longest another relay process may take to see a change. Default 5 s. */
  ttlMs?: number;
  /** Most hosts kept; the oldest entry goes first. */
  maxEntries?: number;
}

/**
 * Request hosts resolved to the account whose verified `custom_domain` they are, so ingest can
 * refuse another account's ingest ids on a custom domain at the cost of a map lookup.
 * Hosts that are no account's are cached too (ingest to the relay's own host must not
 * query each time); an attacker's random Host headers can only evict entries, which
 * costs a query. Changes made through this process (PATCH /v1/account) invalidate at
 * once, including a lookup in flight (its answer is not kept); other relay processes see
 * them within `ttlMs`. Concurrent misses share a query.
 */
export class CustomDomainCache {
  readonly #orm: Orm;
  readonly #ownHosts: ReadonlySet<string>;
  /** The owner is wrapped because lru-cache keeps no null values. */
  readonly #cache: LRUCache<string, { accountId: string | null }>;

  constructor(orm: Orm, options: CustomDomainCacheOptions = {}) {
    this.#orm = orm;
    this.#ownHosts = new Set(options.ownHosts?.map((host) => host.toLowerCase()));
    this.#cache = new LRUCache({
      ttl: options.ttlMs ?? 5000,
      max: options.maxEntries ?? 10_000,
      ttlResolution: 0, // an entry's age is read from performance.now() each time, not a 1 ms memo of it
      // A lookup that `invalidate` (or eviction) cuts short still answers the requests waiting on it,
      // but lru-cache does not keep that answer: the next request reads again.
      ignoreFetchAbort: true,
      fetchMethod: async (host) => ({ accountId: await this.#load(host) }),
    });
  }

  /** The id of the account whose custom domain `hostname` (no port) is, or null when it is none's. */
  async accountOf(hostname: string): Promise<string | null> {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    // IP literals and the relay's own host can never be a custom domain (PATCH /v1/account and its verification refuse both).
    if (host === '' || this.#ownHosts.has(host) || isIP(host.replace(/^\[|\]$/g, '')) !== 0) return null;
    return (await this.#cache.fetch(host))?.accountId ?? null;
  }

  /** Forgets a host after an account took or gave up it as its custom domain. */
  invalidate(hostname: string): void {
    this.#cache.delete(hostname.toLowerCase());
  }

  async #load(host: string): Promise<string | null> {
    // A pending claim is no account's domain yet: only a verified one (one account at most, by its unique index) restricts the host.
    const rows = await this.#orm.em.fork().getConnection().execute<{ id: string }[]>(
      'select id from account where custom_domain = ? and custom_domain_verified_at is not null', [host]);
    return rows[0]?.id ?? null;
  }
}
