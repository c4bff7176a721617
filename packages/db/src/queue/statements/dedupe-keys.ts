/**
 * Which stored event holds each dedupe key a batch found taken (insert-events.ts): one
 * statement through `event_dedupe_key_idx`, run only when a batch had duplicates.
 */
import type { Orm } from '../../orm.ts';
import { runStatement } from '../executor.ts';

const FIND = {
  name: 'hook_find_dedupe_originals',
  text: `select e.endpoint_id, e.dedupe_key, e.id
         from unnest($1::text[], $2::text[]) as k(endpoint_id, dedupe_key)
         join event e on e.endpoint_id = k.endpoint_id and e.dedupe_key = k.dedupe_key`,
};

/** The stored event under each key, by `endpointId + "\u0000" + key`; a key whose event is gone (retention) is absent. */
export async function findOriginals(orm: Orm, keys: readonly { endpointId: string; key: string }[]): Promise<Map<string, string>> {
  const rows = await runStatement<{ endpoint_id: string; dedupe_key: string; id: string }>(orm, FIND, [keys.map((k) => k.endpointId), keys.map((k) => k.key)]);
  return new Map(rows.map((row) => [`${row.endpoint_id}\u0000${row.dedupe_key}`, row.id]));
}
