import { Migration } from '@mikro-orm/migrations';

/**
 * Web console sessions (docs/console.md#how-it-works): signing in with an API key gives
 * the browser an HttpOnly cookie holding a random token; only its SHA-256 is kept here.
 * A session belongs to the key it was opened with and goes when the key goes (revoked,
 * its member removed, its account deleted: each cascades). `expires_at` slides: 12 hours
 * after last use, never past 7 days after sign-in.
 *
 * `hook_body_text` reads an event body for the console's search: the body as UTF-8 text,
 * or when it is not valid UTF-8 (binary, NUL bytes) its `escape` encoding, whose ASCII
 * runs stay searchable. It never raises, so a search over binary bodies cannot fail.
 */
export class ConsoleSessions extends Migration {
  override name = '010-console-sessions';

  override up(): void {
    this.addSql(`
      create table console_session (
        token_hash text primary key,
        key_id text not null references api_key (id) on delete cascade deferrable initially deferred,
        account_id text not null references account (id) on delete cascade deferrable initially deferred,
        created_at timestamptz not null,
        last_used_at timestamptz not null,
        expires_at timestamptz not null
      );`);
    this.addSql('create index console_session_key_idx on console_session (key_id);');
    this.addSql('create index console_session_expiry_idx on console_session (expires_at);');
    this.addSql(`
      create function hook_body_text(body bytea) returns text
      language plpgsql immutable strict parallel safe as $$
      begin
        return convert_from(body, 'UTF8');
      exception when others then
        return encode(body, 'escape');
      end;
      $$;`);
  }
}
