/**
 * `POST /v1/account/custom-domain/verify`: a claimed custom domain takes effect once the
 * DNS TXT record its claim names is found (docs/api.md#post-v1accountcustom-domainverify). The
 * record is looked up when asked, through the relay's resolver (HOOK_DNS_SERVERS), so a
 * claim is proven by whoever controls the domain's DNS and by nobody else.
 */
import type { Resolver } from 'node:dns/promises';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import {
  CUSTOM_DOMAIN_NOT_CLAIMED, CUSTOM_DOMAIN_TAKEN, CUSTOM_DOMAIN_UNVERIFIED, customDomainChallenge, HookError, VALIDATION_FAILED,
} from '@hook/core';
import { Account } from '@hook/db';
import { requireAdmin } from '../../plugins/auth.ts';
import { AccountDetailsSchema, errorResponses } from '../../schemas.ts';
import { accountDetails } from './index.ts';
import { canonicalHostname, relayHosts, type AccountSettingsOptions } from './settings.ts';

export interface CustomDomainOptions extends AccountSettingsOptions {
  /** Asks for the TXT records (HOOK_DNS_SERVERS, else the system's resolvers). */
  resolver: Resolver;
}

/** Most TXT values quoted back in an error: enough to spot a typo, not a wall of SPF records. */
const MAX_VALUES_SHOWN = 5;

/** The TXT records at `name` (each record's strings joined, as DNS splits long values), or why there are none. */
async function txtValuesAt(resolver: Resolver, name: string): Promise<{ values: string[] } | { missing: string }> {
  try {
    return { values: (await resolver.resolveTxt(name)).map((chunks) => chunks.join('')) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND') return { missing: 'no such name' };
    if (code === 'ENODATA') return { missing: 'no TXT record' };
    return { missing: `no answer from DNS (${code ?? 'lookup failed'})` };
  }
}

function describeFound(found: { values: string[] } | { missing: string }): string {
  if ('missing' in found) return found.missing;
  if (found.values.length === 0) return 'no TXT record';
  const shown = found.values.slice(0, MAX_VALUES_SHOWN).map((value) => JSON.stringify(value.slice(0, 200)));
  return `${shown.join(', ')}${found.values.length > MAX_VALUES_SHOWN ? ` and ${found.values.length - MAX_VALUES_SHOWN} more` : ''}`;
}

export async function customDomainRoutes(app: FastifyInstance, options: CustomDomainOptions): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post('/v1/account/custom-domain/verify', {
    schema: {
      tags: ['accounts'],
      summary: "Verify the account's custom_domain: look up its TXT record now; once found, the domain is in effect (admins only)",
      security: [{ bearerAuth: [] }],
      response: { 200: AccountDetailsSchema, ...errorResponses },
    },
  }, async (request) => {
    requireAdmin(request, 'verify the custom domain');
    const account = await request.em.findOneOrFail(Account, { id: request.accountId });
    const domain = account.customDomain;
    if (!domain) throw new HookError(CUSTOM_DOMAIN_NOT_CLAIMED);
    if (account.customDomainVerifiedAt) return accountDetails(request.em, account);
    // Checked again here: the relay may have been given this host (HOOK_PUBLIC_URL, HOOK_INGEST_URL) since the claim.
    const checked = canonicalHostname(domain, relayHosts(request, options));
    if ('error' in checked) {
      throw new HookError(VALIDATION_FAILED, [1, `custom_domain ${checked.error}`], [{ field: 'custom_domain', message: checked.error }]);
    }
    const challenge = customDomainChallenge(domain, account.customDomainToken!);
    const found = await txtValuesAt(options.resolver, challenge.name);
    if (!('values' in found) || !found.values.includes(challenge.value)) {
      const described = describeFound(found);
      throw new HookError(CUSTOM_DOMAIN_UNVERIFIED, [challenge.name, challenge.value, described, domain], [
        { field: `dns.${challenge.name}`, message: `expected a TXT record holding ${JSON.stringify(challenge.value)}; found ${described}` },
      ]);
    }
    try {
      // Only the claim that was looked up is marked: a change of domain meanwhile (new token) is left pending.
      await request.em.nativeUpdate(Account, { id: account.id, customDomain: domain, customDomainToken: account.customDomainToken, customDomainVerifiedAt: null }, { customDomainVerifiedAt: new Date() });
    } catch (error) {
      // The unique index over verified domains decides, so two accounts verifying one name at once cannot both win.
      if (error instanceof UniqueConstraintViolationException) throw new HookError(CUSTOM_DOMAIN_TAKEN, [domain]);
      throw error;
    }
    options.domains.invalidate(domain);
    return accountDetails(request.em, await request.em.refreshOrFail(account));
  });
}
