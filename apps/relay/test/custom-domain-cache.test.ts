import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomDomainCache } from '../src/routes/ingest/custom-domains.ts';
import { signUp, sqlRows, startTestRelay, type TestRelay } from '@hook/test/relay';

let relay: TestRelay;
let accountId: string;
beforeAll(async () => {
  relay = await startTestRelay();
  ({ accountId } = await signUp(relay.baseUrl));
});
afterAll(async () => relay.close());

type Orm = TestRelay['orm'];

/** The relay's ORM as the cache sees it, its lookups counted; each, once it has queried, waits for `hold` (when given) before it answers. */
function watchedOrm(hold?: Promise<void>): { orm: Orm; lookups: () => number; queried: Promise<void> } {
  let lookups = 0;
  const queried = Promise.withResolvers<void>();
  const fork = () => {
    const connection = relay.orm.em.fork().getConnection();
    return {
      getConnection: () => ({
        execute: async (...args: Parameters<typeof connection.execute>) => {
          lookups++;
          const rows = await connection.execute(...args);
          queried.resolve();
          await hold;
          return rows;
        },
      }),
    };
  };
  const orm = Object.create(relay.orm, { em: { value: { fork } } }) as Orm;
  return { orm, lookups: () => lookups, queried: queried.promise };
}

/** Makes `domain` the account's verified custom domain, or gives its domain up (null). */
async function customDomain(domain: string | null): Promise<void> {
  await sqlRows(relay, `update account set custom_domain = ?, custom_domain_verified_at = ${domain ? 'now()' : 'null'} where id = ?`, [domain, accountId]);
}

describe('CustomDomainCache', () => {
  it('caches a host that is no account\'s, and never looks up its own hosts or IP literals', async () => {
    const { orm, lookups } = watchedOrm();
    const cache = new CustomDomainCache(orm, { ownHosts: ['relay.example'], ttlMs: 60_000 });
    expect(await cache.accountOf('nobody.example')).toBeNull();
    expect(await cache.accountOf('NOBODY.example.')).toBeNull();
    expect(await cache.accountOf('relay.example')).toBeNull();
    expect(await cache.accountOf('[::1]')).toBeNull();
    expect(lookups()).toBe(1);
  });

  it('does not keep a lookup that an invalidate overtook: the next one reads the change', async () => {
    const domain = `cache-${accountId.toLowerCase().replace(/_/g, '-')}.example`;
    await customDomain(null);
    const hold = Promise.withResolvers<void>();
    const { orm, lookups, queried } = watchedOrm(hold.promise);
    const cache = new CustomDomainCache(orm, { ttlMs: 60_000 });
    const [first, second] = [cache.accountOf(domain), cache.accountOf(domain)];
    await queried; // the shared lookup has read the host as no account's
    await customDomain(domain);
    cache.invalidate(domain);
    hold.resolve();
    // The requests that waited get what it read; the cache does not keep it.
    expect(await first).toBeNull();
    expect(await second).toBeNull();
    expect(lookups()).toBe(1);
    expect(await cache.accountOf(domain)).toBe(accountId);
    expect(await cache.accountOf(domain)).toBe(accountId);
    expect(lookups()).toBe(2);
    await customDomain(null);
  });
});
