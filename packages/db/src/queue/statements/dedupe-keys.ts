/**
 * Which stored event holds each of some dedupe keys: one probe of `event_dedupe_key`'s
 * primary key per key (migration 022), and a key found there is checked to have a living
 * event (hook_dedupe_holder). Ingest's keyed statement looks its keys up itself
 * (insert-events.ts); this is for the keyed events it refused over the allowance, which
 * are duplicates when their key was stored meanwhile. It runs on the queue's connections
 * (`movesDeliveries`: their sessions plan no table scans), because a cached plan made
 * while the table was small would otherwise scan it whole.
 */
import type { Orm } from '../../orm.ts';
import { runStatement } from '../executor.ts';

const FIND = {
  movesDeliveries: true,
  name: 'hook_find_dedupe_originals',
  text: `select k.endpoint_id, k.dedupe_key, hook_dedupe_holder(k.endpoint_id, k.dedupe_key, k.event_id) as id
         from unnest($1::text[], $2::text[]) as u(endpoint_id, dedupe_key)
         join event_dedupe_key k on k.endpoint_id = u.endpoint_id and k.dedupe_key = u.dedupe_key`,
};

/** FIND for one account's keys, the account a scalar, so that it is routed to its shard on a distributed PostgreSQL (docs/scaling.md). */
const FIND_IN_ACCOUNT = {
  movesDeliveries: true,
  name: 'hook_find_dedupe_originals_account',
  text: `${FIND.text} and k.account_id = $3`,
};

/**
 * The stored event under each key, by `endpointId + "\u0000" + key`; a key whose event is
 * gone (retention) is absent. `account`: the keys' one account (distributed), or null.
 */
export async function findOriginals(orm: Orm, keys: readonly { endpointId: string; key: string }[], account: string | null = null): Promise<Map<string, string>> {
  const columns = [keys.map((k) => k.endpointId), keys.map((k) => k.key)];
  const rows = await runStatement<{ endpoint_id: string; dedupe_key: string; id: string | null }>(orm, account === null ? FIND : FIND_IN_ACCOUNT, account === null ? columns : [...columns, account]);
  const originals = new Map<string, string>();
  for (const row of rows) if (row.id !== null) originals.set(`${row.endpoint_id}\u0000${row.dedupe_key}`, row.id);
  return originals;
}
