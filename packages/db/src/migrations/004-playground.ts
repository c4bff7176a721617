import { Migration } from '@mikro-orm/migrations';

/**
 * Playground sessions: a temporary account made from /playground with no sign-up. The
 * page holds a token (stored here only as a hash) instead of an API key. `expires_at`
 * is set while the account is temporary and cleared when it is claimed; the expiry job
 * removes accounts whose session has expired (the row goes with its account).
 */
export class Playground extends Migration {
  override name = '004-playground';

  override up(): void {
    this.addSql(`
      create table playground_session (
        account_id text primary key references account (id) on delete cascade deferrable initially deferred,
        endpoint_id text not null,
        token_hash text not null unique,
        created_at timestamptz not null,
        expires_at timestamptz null,
        claimed_at timestamptz null
      );`);
    this.addSql('create index playground_session_expiry_idx on playground_session (expires_at) where expires_at is not null;');
  }
}
