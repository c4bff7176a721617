/**
 * Which stored event holds each of a batch's dedupe keys (insert-events.ts): one statement
 * through `event_dedupe_key_idx`, run for each batch with keys. It runs on the queue's
 * connections (`movesDeliveries`: their sessions plan no table scans), because a cached
 * plan made while `event` was small would otherwise scan the whole table for every batch.
 */
import type { Orm } from '../../orm.ts';
import { runStatement } from '../executor.ts';

const FIND = {
  movesDeliveries: true,
  name: 'hook_find_dedupe_originals',
  text: `select e.endpoint_id, e.dedupe_key, e.id
         from unnest($1::text[], $2::text[]) as k(endpoint_id, dedupe_key)
         join event e on e.endpoint_id = k.endpoint_id and e.dedupe_key = k.dedupe_key and e.dedupe_key is not null`,
};

/** FIND for one account's keys, the account a scalar, so that it is routed to its shard on a distributed PostgreSQL (docs/scaling.md). */
const FIND_IN_ACCOUNT = {
  movesDeliveries: true,
  name: 'hook_find_dedupe_originals_account',
  text: `${FIND.text} and e.account_id = $3`,
};

/**
 * The stored event under each key, by `endpointId + "\u0000" + key`; a key whose event is
 * gone (retention) is absent. `account`: the keys' one account (distributed), or null.
 */
export async function findOriginals(orm: Orm, keys: readonly { endpointId: string; key: string }[], account: string | null = null): Promise<Map<string, string>> {
  const columns = [keys.map((k) => k.endpointId), keys.map((k) => k.key)];
  const rows = await runStatement<{ endpoint_id: string; dedupe_key: string; id: string }>(orm, account === null ? FIND : FIND_IN_ACCOUNT, account === null ? columns : [...columns, account]);
  return new Map(rows.map((row) => [`${row.endpoint_id}\u0000${row.dedupe_key}`, row.id]));
}
