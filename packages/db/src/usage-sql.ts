import type { EntityManager } from '@mikro-orm/core';
import { usageMonth } from '@hook/core';

/** An account's usage: this month's accepted events and what it has now. */
export interface AccountUsage {
  /** The calendar month (UTC) counted, `YYYY-MM`. */
  month: string;
  eventsAccepted: number;
  /** Live endpoints, not counting the hidden notifications endpoint. */
  endpoints: number;
  members: number;
}

/**
 * Reads an account's usage in one statement, so its figures come from one snapshot: the
 * event count is the metered one the ingest statement keeps (exact, see insertEvents).
 */
export async function readAccountUsage(em: EntityManager, accountId: string, now: Date): Promise<AccountUsage> {
  const month = usageMonth(now);
  const [row] = await em.getConnection().execute<{ events_accepted: string | null; endpoints: string; members: string }[]>(
    `select (select events_accepted from account_usage where account_id = ? and month = ?) as events_accepted,
            (select count(*) from endpoint where account_id = ? and deleted_at is null and kind = 'user') as endpoints,
            (select count(*) from member where account_id = ?) as members`,
    [accountId, month, accountId, accountId],
  );
  return { month: month.slice(0, 7), eventsAccepted: Number(row?.events_accepted ?? 0), endpoints: Number(row?.endpoints ?? 0), members: Number(row?.members ?? 0) };
}
