import { isIP } from 'node:net';
import type { Orm } from '@hook/db';

export interface CustomDomainCacheOptions {
  /** Hostnames that are the relay's own (HOOK_PUBLIC_URL's, HOOK_INGEST_URL's): never an account's, never looked up. */
  ownHosts?: readonly string[];
  /** How long a looked-up host is trusted; also the longest another relay process may take to see a change. Default 5 s. */
  ttlMs?: number;
  /** Most hosts kept; the oldest entry goes first. */
  maxEntries?: number;
}

interface Entry {
  accountId: string | null;
  expiresAtMs: number;
}

/**
 * Request hosts resolved to the account whose verified `custom_domain` they are, so ingest can
 * refuse another account's ingest ids on a custom domain at the cost of a map lookup.
 * Hosts that are no account's are cached too (ingest to the relay's own host must not
 * query each time); an attacker's random Host headers can only evict entries, which
 * costs a query. Changes made through this process (PATCH /v1/account) invalidate at
 * once; other relay processes see them within `ttlMs`. Concurrent misses share a query.
 */
export class CustomDomainCache {
  readonly #orm: Orm;
  readonly #ownHosts: ReadonlySet<string>;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, Entry>();
  readonly #loading = new Map<string, Promise<string | null>>();
  /** Bumped by invalidate, so a lookup that started before a change does not store its stale answer. */
  #generation = 0;

  constructor(orm: Orm, options: CustomDomainCacheOptions = {}) {
    this.#orm = orm;
    this.#ownHosts = new Set(options.ownHosts?.map((host) => host.toLowerCase()));
    this.#ttlMs = options.ttlMs ?? 5000;
    this.#maxEntries = options.maxEntries ?? 10_000;
  }

  /** The id of the account whose custom domain `hostname` (no port) is, or null when it is none's. */
  async accountOf(hostname: string): Promise<string | null> {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    // IP literals and the relay's own host can never be a custom domain (PATCH /v1/account and its verification refuse both).
    if (host === '' || this.#ownHosts.has(host) || isIP(host.replace(/^\[|\]$/g, '')) !== 0) return null;
    const entry = this.#entries.get(host);
    if (entry && entry.expiresAtMs > Date.now()) return entry.accountId;
    let loading = this.#loading.get(host);
    if (!loading) {
      const started: Promise<string | null> = this.#load(host).finally(() => {
        if (this.#loading.get(host) === started) this.#loading.delete(host);
      });
      this.#loading.set(host, started);
      loading = started;
    }
    return loading;
  }

  /** Forgets a host after an account took or gave up it as its custom domain. */
  invalidate(hostname: string): void {
    this.#generation++;
    this.#entries.delete(hostname.toLowerCase());
    this.#loading.delete(hostname.toLowerCase());
  }

  async #load(host: string): Promise<string | null> {
    const generation = this.#generation;
    // A pending claim is no account's domain yet: only a verified one (one account at most, by its unique index) restricts the host.
    const rows = await this.#orm.em.fork().getConnection().execute<{ id: string }[]>(
      'select id from account where custom_domain = ? and custom_domain_verified_at is not null', [host]);
    const accountId = rows[0]?.id ?? null;
    if (generation !== this.#generation) return accountId;
    this.#entries.delete(host);
    this.#entries.set(host, { accountId, expiresAtMs: Date.now() + this.#ttlMs });
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    return accountId;
  }
}
