/**
 * `PATCH /v1/account`: the account's settings — the IP allowlist, the custom domain of
 * its endpoint URLs (a claim, in effect once verified: custom-domain.ts), its own
 * retention (enterprise) and the contact email. Admins only.
 */
import { randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  ALLOWLIST_EXCLUDES_CALLER, CUSTOM_DOMAIN_TAKEN, HookError, PLAN_LIMITS, PLAN_LIMIT_REACHED, PLANS, retentionDaysOf, VALIDATION_FAILED,
  type FieldError, type Plan, type PlanLimits,
} from '@hook/core';
import { Account, ensureClassPartitions } from '@hook/db';
import { requireAdmin } from '../../plugins/auth.ts';
import { addressAllowed, canonicalCidr } from '../../plugins/ip-allowlist.ts';
import { AccountDetailsSchema, AccountUpdateSchema, errorResponses } from '../../schemas.ts';
import type { CustomDomainCache } from '../ingest/custom-domains.ts';
import { accountDetails } from './index.ts';

const security = [{ bearerAuth: [] }];

const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A custom domain in canonical form (lower case, ASCII, no trailing dot), or why it is
 * not one: only a hostname of at least two labels, no scheme, port or path, not an IP
 * literal, not a loopback name (*.localhost) and none of the hosts the relay answers on.
 */
export function canonicalHostname(text: string, ownHosts: readonly string[]): { host: string } | { error: string } {
  const value = text.trim().toLowerCase();
  const bare = (): string => {
    try {
      return new URL(/^[a-z][a-z0-9+.-]*:\/\//.test(value) ? value : `http://${value}`).hostname;
    } catch {
      return '';
    }
  };
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(value) || /[/?#@]/.test(value) || (value.includes(':') && isIP(value.replace(/^\[|\]$/g, '')) === 0)) {
    const host = bare();
    return { error: `must be a hostname only, without scheme, port or path${host ? ` (like ${host})` : ''}` };
  }
  const withoutDot = value.replace(/\.$/, '');
  if (isIP(withoutDot.replace(/^\[|\]$/g, '')) !== 0) return { error: 'must be a hostname, not an IP address' };
  const host = domainToASCII(withoutDot);
  const labels = host.split('.');
  if (!host || host.length > 253 || labels.some((label) => !HOST_LABEL.test(label))) {
    return { error: 'must be a hostname such as hooks.example.com: letters, digits and hyphens, labels of 1 to 63 characters' };
  }
  if (labels.length < 2 || /^\d+$/.test(labels.at(-1)!)) return { error: 'must be a full domain name such as hooks.example.com' };
  if (labels.at(-1) === 'localhost') return { error: 'is a loopback name (*.localhost); use a domain of your own that points at the relay' };
  if (ownHosts.some((own) => own.toLowerCase().replace(/\.$/, '') === host)) return { error: "is the relay's own host; use a domain of your own that points at the relay" };
  return { host };
}

/** "pro and enterprise": the plans that have a feature. */
function plansWith(feature: keyof Pick<PlanLimits, 'ipAllowlist' | 'customDomain' | 'customRetention'>): string {
  const plans = PLANS.filter((plan) => PLAN_LIMITS[plan][feature]);
  return plans.length === 1 ? `only the ${plans[0]} plan includes it` : `the ${plans.join(' and ')} plans include it`;
}

function refuseUnlessPlanHas(plan: Plan, feature: 'ipAllowlist' | 'customDomain' | 'customRetention', what: string): void {
  if (!PLAN_LIMITS[plan][feature]) throw new HookError(PLAN_LIMIT_REACHED, [`The ${plan} plan does not include ${what}; ${plansWith(feature)}.`]);
}

function validationFailed(errors: FieldError[]): HookError {
  return new HookError(VALIDATION_FAILED, [errors.length, errors.map((error) => `${error.field} ${error.message}`).join('; ')], errors);
}

export interface AccountSettingsOptions {
  /** The hosts of HOOK_PUBLIC_URL and HOOK_INGEST_URL: never an account's custom domain. */
  ownHosts: readonly string[];
  /** Ingest's host → account cache, told at once when a custom domain changes. */
  domains: CustomDomainCache;
}

/**
 * Hosts the relay answers on, which no account may take: HOOK_PUBLIC_URL's, HOOK_INGEST_URL's
 * and the one this request came in on (the only ones it knows of; with HOOK_PUBLIC_URL unset
 * it may answer on others, which the DNS proof keeps from being taken).
 */
export function relayHosts(request: FastifyRequest, options: Pick<AccountSettingsOptions, 'ownHosts'>): string[] {
  return [...options.ownHosts, request.hostname];
}

/** A new claim's token, which its TXT record must hold: 128 random bits, hex so every DNS provider's form takes it as typed. */
function newClaimToken(): string {
  return randomBytes(16).toString('hex');
}

export async function accountSettingsRoutes(app: FastifyInstance, options: AccountSettingsOptions): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().patch('/v1/account', {
    schema: {
      tags: ['accounts'],
      summary: 'Change the account settings: allowed_ips, custom_domain, retention_days, email (admins only)',
      security,
      body: AccountUpdateSchema,
      response: { 200: AccountDetailsSchema, ...errorResponses },
    },
  }, async (request) => {
    requireAdmin(request, 'change the account settings');
    const body = request.body;
    const errors: FieldError[] = [];
    let allowedIps: string[] | undefined;
    if (body.allowed_ips !== undefined) {
      const canonical = new Set<string>();
      body.allowed_ips.forEach((text, i) => {
        const result = canonicalCidr(text);
        if ('error' in result) errors.push({ field: `body.allowed_ips.${i}`, message: result.error });
        else canonical.add(result.cidr);
      });
      allowedIps = [...canonical];
    }
    let customDomain: string | null | undefined;
    if (body.custom_domain !== undefined && body.custom_domain !== null) {
      const result = canonicalHostname(body.custom_domain, relayHosts(request, options));
      if ('error' in result) errors.push({ field: 'body.custom_domain', message: result.error });
      else customDomain = result.host;
    } else if (body.custom_domain === null) {
      customDomain = null;
    }
    if (errors.length > 0) throw validationFailed(errors);

    const account = await request.em.findOneOrFail(Account, { id: request.accountId });
    // Setting a feature needs a plan that has it; clearing one never does (after a downgrade, say).
    if (allowedIps !== undefined && allowedIps.length > 0) refuseUnlessPlanHas(account.plan, 'ipAllowlist', 'an IP allowlist (allowed_ips)');
    if (customDomain) refuseUnlessPlanHas(account.plan, 'customDomain', 'a custom domain (custom_domain)');
    if (body.retention_days !== undefined && body.retention_days !== null) refuseUnlessPlanHas(account.plan, 'customRetention', 'its own retention period (retention_days)');
    // Lockout protection: the caller must still be let in by the list it sets.
    if (allowedIps !== undefined && allowedIps.length > 0 && !addressAllowed(allowedIps, request.callerAddress)) {
      throw new HookError(ALLOWLIST_EXCLUDES_CALLER, [request.callerAddress]);
    }

    const previousDomain = account.customDomain ?? null;
    const domainChanged = customDomain !== undefined && customDomain !== previousDomain;
    // A name another account has proven is refused now rather than at verification, which would refuse it anyway.
    // Pending claims by others do not count: a claim proves nothing, so it cannot keep the name's owner out.
    if (domainChanged && customDomain && await request.em.count(Account, { customDomain, customDomainVerifiedAt: { $ne: null }, id: { $ne: account.id } }) > 0) {
      throw new HookError(CUSTOM_DOMAIN_TAKEN, [customDomain]);
    }
    if (allowedIps !== undefined) account.allowedIps = allowedIps;
    // Each claim starts pending with its own token: setting the same domain again keeps the claim as it is.
    if (domainChanged) {
      account.customDomain = customDomain;
      account.customDomainToken = customDomain ? newClaimToken() : null;
      account.customDomainVerifiedAt = null;
    }
    if (body.retention_days !== undefined) account.retentionDays = body.retention_days;
    if (body.email !== undefined) account.email = body.email;
    await request.em.flush();
    // a retention of its own is a retention class: its next event finds its partition (docs/retention.md#partitions)
    if (body.retention_days !== undefined) await ensureClassPartitions(request.em, retentionDaysOf(account.plan, account.retentionDays ?? null));
    // A new claim is pending, so only the domain given up can have been in effect.
    if (domainChanged && previousDomain) options.domains.invalidate(previousDomain);
    return accountDetails(request.em, account);
  });
}
