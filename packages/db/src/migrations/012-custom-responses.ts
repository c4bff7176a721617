import { Migration } from '@mikro-orm/migrations';

/**
 * Custom responses at ingest (docs/sources.md): `endpoint.response` holds the status,
 * headers and body an endpoint answers a stored request with instead of the default
 * `{"id","status"}` JSON; null keeps the default.
 */
export class CustomResponses extends Migration {
  override name = '012-custom-responses';

  override up(): void {
    this.addSql('alter table endpoint add column response jsonb;');
  }
}
