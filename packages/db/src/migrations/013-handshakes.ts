import { Migration } from '@mikro-orm/migrations';

/**
 * Handshakes at ingest (docs/sources.md, Handshakes). `endpoint.handshake` holds the
 * provider (and the secret's hint); a provider's verify token or secret is kept in
 * `handshake_secret`, sealed like destination signing secrets. `event.handshake` names the
 * provider whose handshake the event was: such an event has no deliveries (status filtered).
 */
export class Handshakes extends Migration {
  override name = '013-handshakes';

  override up(): void {
    this.addSql('alter table endpoint add column handshake jsonb, add column handshake_secret text;');
    this.addSql('alter table event add column handshake text;');
  }
}
