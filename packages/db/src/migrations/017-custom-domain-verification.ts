import { Migration } from '@mikro-orm/migrations';

/**
 * Custom domains take effect only once their owner proves control of them with a DNS TXT
 * record (docs/api.md#post-v1accountcustom-domainverify):
 * - `account.custom_domain_token`: the random token of the account's current claim, which
 *   the TXT record `_hook-challenge.<domain>` must hold; a new claim gets a new one;
 * - `account.custom_domain_verified_at`: when the record was found; null while the claim is
 *   pending, when the domain takes no effect on ingest or endpoint URLs;
 * - the unique index covers verified domains only, so several accounts may claim one name
 *   while pending (nobody can squat a name before its owner proves it) and only one can
 *   verify it.
 * Claims made before this migration keep working: they are marked verified now, so an
 * upgrade changes no endpoint URL and no ingest host (CHANGELOG.md says how an operator can
 * send one back to pending). Small updates of one table; no downtime.
 */
export class CustomDomainVerification extends Migration {
  override name = '017-custom-domain-verification';

  override up(): void {
    this.addSql('alter table account add column custom_domain_token text null;');
    this.addSql('alter table account add column custom_domain_verified_at timestamptz null;');
    this.addSql(`update account set custom_domain_token = md5(random()::text || id), custom_domain_verified_at = now() where custom_domain is not null;`);
    this.addSql('drop index account_custom_domain_idx;');
    this.addSql('create unique index account_custom_domain_verified_idx on account (custom_domain) where custom_domain_verified_at is not null;');
  }
}
