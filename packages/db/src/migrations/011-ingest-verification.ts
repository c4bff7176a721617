import { Migration } from '@mikro-orm/migrations';

/**
 * Signature verification at ingest (docs/sources.md). `endpoint.verification` holds the
 * settings as the API shows them (provider, mode, tolerance, the generic HMAC's fields);
 * the provider's secret is kept apart in `verification_secret`, sealed like destination
 * signing secrets (signing-secrets.ts), because the relay needs the secret itself to
 * compute the HMAC. `event.verification` records what the check found for each event
 * received while verification was on (`{provider, verified, reason}`), null otherwise.
 */
export class IngestVerification extends Migration {
  override name = '011-ingest-verification';

  override up(): void {
    this.addSql('alter table endpoint add column verification jsonb, add column verification_secret text;');
    this.addSql('alter table event add column verification jsonb;');
  }
}
