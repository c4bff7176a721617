/**
 * Ingest's dedupe keys outside the statement that claims them (insert-events.ts):
 * finding who holds a key a batch found taken, and giving keys back.
 *
 * Both run only on the rare paths: a duplicate (the lookup) and an event not stored after
 * its key was claimed (over the allowance, a usage row missing, or a claim found without
 * its event after a crash). Each is one statement through the `event_dedupe` primary key.
 */
import type { Orm } from '../../orm.ts';
import { runStatement } from '../executor.ts';

/** One claimed key: the event it was claimed for. */
export interface KeyClaim {
  endpointId: string;
  key: string;
  eventId: string;
}

const FIND = {
  name: 'hook_find_dedupe_keys',
  text: `select d.endpoint_id, d.key, d.event_id, exists (select 1 from event e where e.id = d.event_id) as stored
         from unnest($1::text[], $2::text[]) as k(endpoint_id, key)
         join event_dedupe d on d.endpoint_id = k.endpoint_id and d.key = k.key`,
};

/**
 * Who holds each key now, by `endpointId + "\u0000" + key`, and whether its event is
 * stored. A key's claim commits with its event, so a claim without one is left over.
 */
export async function findClaimedKeys(orm: Orm, keys: readonly { endpointId: string; key: string }[]): Promise<Map<string, { eventId: string; stored: boolean }>> {
  const rows = await runStatement<{ endpoint_id: string; key: string; event_id: string; stored: boolean }>(orm, FIND, [keys.map((k) => k.endpointId), keys.map((k) => k.key)]);
  return new Map(rows.map((row) => [`${row.endpoint_id}\u0000${row.key}`, { eventId: row.event_id, stored: row.stored }]));
}

const RELEASE = {
  name: 'hook_release_dedupe_keys',
  text: `delete from event_dedupe d
         using unnest($1::text[], $2::text[], $3::text[]) as k(endpoint_id, key, event_id)
         where d.endpoint_id = k.endpoint_id and d.key = k.key and d.event_id = k.event_id
           and not exists (select 1 from event e where e.id = d.event_id)`,
};

/** Gives keys back: each claim that is still its event's and whose event is not stored. */
export async function releaseKeys(orm: Orm, claims: readonly KeyClaim[]): Promise<void> {
  if (claims.length === 0) return;
  await runStatement(orm, RELEASE, [claims.map((c) => c.endpointId), claims.map((c) => c.key), claims.map((c) => c.eventId)]);
}
