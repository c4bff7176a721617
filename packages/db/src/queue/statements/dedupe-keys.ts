/**
 * Ingest's dedupe keys outside its statement (docs/sources.md, Duplicates; the statement's
 * own part is in insert-events.ts): the copies of a key within one batch, and the look-up
 * of keys after it.
 *
 * Which stored event holds each of some dedupe keys: one probe of `event_dedupe_key`'s
 * primary key per key (migration 022), and a key found there is checked to have a living
 * event (hook_dedupe_holder). Ingest's keyed statement looks its keys up itself; this is
 * for the keyed events it refused over the allowance, which are duplicates when their key
 * was stored meanwhile. It runs on the queue's connections (`movesDeliveries`: their
 * sessions plan no table scans), because a cached plan made while the table was small
 * would otherwise scan it whole.
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

/** What this file needs of an event. */
interface Keyed {
  id: string;
  endpointId: string;
  dedupeKey?: string | null;
}

const keyOf = (event: Keyed) => `${event.endpointId}\u0000${event.dedupeKey}`;

/**
 * Those of `events` whose dedupe key is stored already: each one's id, with the id of the
 * event holding its key (it is a duplicate of that). `account`: their one account
 * (distributed), or null.
 */
export async function duplicatesAmong(orm: Orm, account: string | null, events: readonly Keyed[]): Promise<Map<string, string>> {
  const duplicates = new Map<string, string>();
  const keyed = events.filter((event) => event.dedupeKey);
  if (keyed.length === 0) return duplicates;
  const originals = await findOriginals(orm, keyed.map((event) => ({ endpointId: event.endpointId, key: event.dedupeKey! })), account);
  for (const event of keyed) {
    const originalId = originals.get(keyOf(event));
    if (originalId) duplicates.set(event.id, originalId);
  }
  return duplicates;
}

/** What ingest's statement made of a batch's keyed events (insert-events.ts), by event id. */
export interface KeyOutcomes {
  /** Its key was held already: the event holding it. */
  held: ReadonlyMap<string, string>;
  /** It lost the race for its key to a copy stored meanwhile (it was not stored). */
  lost: ReadonlySet<string>;
  /** It was refused over the account's allowance. */
  refused: { has(id: string): boolean };
}

/**
 * A batch's events by their dedupe keys. The statement stores one copy of a key at a
 * time, so a later copy of a key in the batch (a `repeat`) waits for its first copy's
 * outcome: `events` are what the statement takes (the unkeyed events, and each key's first
 * copy).
 */
export class BatchKeys<E extends Keyed> {
  readonly events: readonly E[];
  readonly #repeats: E[];
  readonly #firstCopies = new Map<string, E>();

  constructor(batch: readonly E[]) {
    this.#repeats = batch.filter((event) => {
      if (!event.dedupeKey) return false;
      if (this.#firstCopies.has(keyOf(event))) return true;
      this.#firstCopies.set(keyOf(event), event);
      return false;
    });
    this.events = this.#repeats.length === 0 ? batch : batch.filter((event) => !this.#repeats.includes(event));
  }

  /**
   * After the statement: the repeats that are duplicates (by id, of the event their first
   * copy stored, or of the one holding the key), and the events to store again. Those are
   * the copies that lost a race and the repeats of a key that is still nobody's (its first
   * copy lost a race, or was refused over the allowance): tried again, the statement's
   * look-up finds the copy that won, or stores them as new if retention removed it meanwhile.
   */
  settle(outcomes: KeyOutcomes): { duplicates: Map<string, string>; again: E[] } {
    const duplicates = new Map<string, string>();
    const waiting = this.#repeats.filter((event) => {
      const first = this.#firstCopies.get(keyOf(event))!;
      const stored = !outcomes.held.has(first.id) && !outcomes.lost.has(first.id) && !outcomes.refused.has(first.id);
      const originalId = stored ? first.id : outcomes.held.get(first.id);
      if (originalId !== undefined) duplicates.set(event.id, originalId);
      return originalId === undefined;
    });
    return { duplicates, again: [...this.events.filter((event) => outcomes.lost.has(event.id)), ...waiting] };
  }
}
