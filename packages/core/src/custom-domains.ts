/**
 * How an account proves it controls its custom domain: a DNS TXT record at a fixed name
 * under the domain holding the claim's token. A name under the domain (not the domain
 * itself) leaves the domain free to be a CNAME to the relay, which may have no other records.
 */

/** The label the TXT record sits under: `_hook-challenge.hooks.example.com`. */
export const CUSTOM_DOMAIN_CHALLENGE_LABEL = '_hook-challenge';

/** What the TXT record's value starts with, before the claim's token. */
export const CUSTOM_DOMAIN_CHALLENGE_PREFIX = 'hook-domain-verification=';

/** The DNS record that proves `domain` is the claiming account's: where, and what it must hold. */
export interface CustomDomainChallenge {
  type: 'TXT';
  name: string;
  value: string;
}

export function customDomainChallenge(domain: string, token: string): CustomDomainChallenge {
  return { type: 'TXT', name: `${CUSTOM_DOMAIN_CHALLENGE_LABEL}.${domain}`, value: `${CUSTOM_DOMAIN_CHALLENGE_PREFIX}${token}` };
}
