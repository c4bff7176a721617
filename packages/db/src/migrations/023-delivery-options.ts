import { Migration } from '@mikro-orm/migrations';

/**
 * The delivery options of issue 31 (docs/delivery.md):
 * - `destination.target`: a queue destination's target on its broker (exchange and routing
 *   key, subject, stream, topic); its broker URL is `url`.
 * - `destination.auth` and `destination.tls`: how it signs in and the client certificate it
 *   presents, as shown; their secret parts (password, token, header values, client secret,
 *   client key) are in `destination.credentials`, sealed like signing secrets.
 * - `destination.signature_scheme`: `v1` (HMAC, whsec_ secrets) or `v1a` (ed25519, whsk_),
 *   and `public_key`, the whpk_ key receivers verify v1a with (shown without opening the secret).
 * - `destination.ordering`, `delivery.ordering_key` and `ordering_seq`: an ordered
 *   destination's settings, and each of its deliveries' key (read from the event when it
 *   was stored) and place in it, numbered from the key's row in `ordering_key_seq` in the
 *   order ingest committed them (ordering.ts); the index finds each key's first open
 *   delivery (claim-due.ts). `ordering_block`: the keys held by an event that gave up,
 *   until a person replays or unblocks it.
 * - `destination.delay_seconds`: how long each event waits before its first attempt.
 *
 * Nullable columns (and one with a constant default) rewrite nothing; the index is on the
 * open deliveries only (delivery_open), built before any destination is ordered.
 */
/**
 * The columns and table the statements of this release read (all but the index, which
 * needs 021's delivery_open). Idempotent, so that a test of an older migration whose
 * ingest is this release's statement can give the older schema them ahead
 * (online-upgrade.test.ts); here they are simply added.
 */
export const DELIVERY_OPTIONS_COLUMNS = `
  alter table destination
    add column if not exists target jsonb,
    add column if not exists auth jsonb,
    add column if not exists tls jsonb,
    add column if not exists credentials text,
    add column if not exists signature_scheme text not null default 'v1',
    add column if not exists public_key text,
    add column if not exists ordering jsonb,
    add column if not exists delay_seconds integer;
  alter table delivery add column if not exists ordering_key text, add column if not exists ordering_seq bigint;
  create table if not exists ordering_key_seq (
    destination_id text not null,
    ordering_key text not null,
    account_id text not null,
    last_seq bigint not null,
    primary key (destination_id, ordering_key)
  );
  create table if not exists ordering_block (
    destination_id text not null,
    ordering_key text not null,
    account_id text not null,
    event_id text not null,
    blocked_at timestamptz not null default now(),
    primary key (destination_id, ordering_key)
  );`;

export class DeliveryOptions extends Migration {
  override name = '023-delivery-options';

  override up(): void {
    this.addSql(DELIVERY_OPTIONS_COLUMNS);
    // Whether a key has an open delivery or is held, as committed now (a volatile function
    // takes a snapshot of its own): ingest asks it once it holds the key's row, so it sees
    // what another ingest of the key committed meanwhile (insert-events.ts).
    this.addSql(`
      create or replace function hook_ordering_busy(p_destination text, p_key text) returns boolean
      language plpgsql volatile as $fn$
      begin
        return exists (select 1 from delivery o where o.destination_id = p_destination and o.ordering_key = p_key
                         and o.layout = 1 and (o.status in ('pending', 'retrying') or o.next_trigger = 'replay') is true)
            or exists (select 1 from ordering_block b where b.destination_id = p_destination and b.ordering_key = p_key);
      end
      $fn$;`);
    this.addSql('create index if not exists delivery_ordered_idx on delivery_open (destination_id, ordering_key, ordering_seq) where ordering_key is not null;');
  }
}
