/**
 * Makes sure each (account, month) of an ingest batch has its usage row, so that ingest's
 * statement (insert-events.ts) can lock it: that statement meters against the row and
 * would store nothing of an account without one. A row is never deleted while its account
 * lives, so the caller remembers the rows made (`KnownUsageRows`, EventWriter keeps one)
 * and a batch of known accounts and months runs no statement at all; this runs for a
 * batch's first event of an account in a month, or again when the ingest statement found a
 * row missing after all (a database restored under a running relay).
 *
 * A separate statement, before the insert, committed on its own: a row two batches make
 * at once is made once (ON CONFLICT DO NOTHING), and neither waits for the other's insert.
 * On a PostgreSQL distributed by account, the account is a scalar parameter
 * (docs/scaling.md), so the statement is routed to its shard.
 */
import { usageMonth } from '@hook/core';
import type { Orm } from '../../orm.ts';
import { runStatement } from '../executor.ts';

/**
 * (account, month) usage rows known to exist (they are never deleted while the account
 * lives). The caller owns it (EventWriter keeps one), so batches can skip making them.
 */
export type KnownUsageRows = Set<string>;

const ENSURE = {
  name: 'hook_ensure_usage_rows',
  text: `insert into account_usage (account_id, month)
         select * from unnest($1::text[], $2::date[])
         on conflict do nothing`,
};

/** ENSURE for one account's months, the account a scalar (distributed, see above). */
const ENSURE_IN_ACCOUNT = {
  name: 'hook_ensure_usage_rows_account',
  text: `insert into account_usage (account_id, month)
         select $1::text, month from unnest($2::date[]) as m(month)
         on conflict do nothing`,
};

/**
 * Makes the usage rows of `events` that `known` does not list (all of them when `force`),
 * and lists them. `account`: the batch's one account (distributed), or null.
 */
export async function ensureUsageRows(
  orm: Orm,
  account: string | null,
  events: readonly { accountId: string; receivedAt: Date }[],
  known: KnownUsageRows,
  force: boolean,
): Promise<void> {
  if (known.size > 100_000) known.clear();
  const missing = new Map<string, { accountId: string; month: string }>();
  for (const event of events) {
    const month = usageMonth(event.receivedAt);
    const key = `${event.accountId}|${month}`;
    if (force || !known.has(key)) missing.set(key, { accountId: event.accountId, month });
  }
  if (missing.size === 0) return;
  const rows = [...missing.values()];
  const months = rows.map((row) => row.month);
  await (account === null
    ? runStatement(orm, ENSURE, [rows.map((row) => row.accountId), months])
    : runStatement(orm, ENSURE_IN_ACCOUNT, [account, months]));
  for (const key of missing.keys()) known.add(key);
}
