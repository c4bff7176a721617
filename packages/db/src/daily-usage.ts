/**
 * An account's events and delivery outcomes per UTC day, for the console's usage chart.
 * Read from the events and deliveries themselves (no counters to keep in step): each day
 * is a range of event ids (ids begin with their receive time), walked in event_account_idx
 * order, with each event's deliveries found by primary key.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { firstIdAt } from '@hook/core';

const DAY_MS = 24 * 60 * 60 * 1000;

/** One UTC day's numbers. */
export interface DailyUsage {
  /** The UTC day, `YYYY-MM-DD`. */
  date: string;
  /** Events received that day. */
  events: number;
  /** Deliveries of those events (one per destination; those a filter skipped are not counted). */
  deliveries: number;
  /** Of those, delivered (a 2xx) by now. */
  delivered: number;
  /** Of those, failed for good (retries spent) by now. */
  failed: number;
}

/**
 * The last `days` UTC days up to and including `now`'s, oldest first, days without events
 * included. Events of the endpoints in `excludeEndpointIds` (account notifications) are
 * not counted, as the event list does not show them.
 */
export async function readDailyUsage(em: EntityManager, options: { accountId: string; days: number; now: Date; excludeEndpointIds: readonly string[] }): Promise<DailyUsage[]> {
  const today = Math.floor(options.now.getTime() / DAY_MS) * DAY_MS;
  const starts = Array.from({ length: options.days }, (_, index) => today - (options.days - 1 - index) * DAY_MS);
  const dates = starts.map((start) => new Date(start).toISOString().slice(0, 10));
  const lows = starts.map((start) => firstIdAt('event', start));
  const highs = starts.map((start) => firstIdAt('event', start + DAY_MS));
  // Array literals, not JavaScript arrays: em.execute would spread those into parameters. Ids and dates hold no quotes or commas.
  const literal = (values: readonly string[]) => `{${values.join(',')}}`;
  const excluded = options.excludeEndpointIds.length === 0 ? null : literal(options.excludeEndpointIds);
  const rows = await em.execute<DailyUsage[]>(`
    select b.date::text as date, n.events, d.deliveries, d.delivered, d.failed
    from unnest(?::date[], ?::text[], ?::text[]) as b(date, low_id, high_id)
    cross join lateral (
      select count(*)::int as events from event e
      where e.account_id = ? and e.id >= b.low_id and e.id < b.high_id and (?::text[] is null or e.endpoint_id <> all(?::text[]))
    ) n
    cross join lateral (
      select count(*) filter (where l.status <> 'filtered')::int as deliveries,
             count(*) filter (where l.status = 'delivered')::int as delivered,
             count(*) filter (where l.status = 'failed')::int as failed
      from event e join delivery l on l.event_id = e.id
      where e.account_id = ? and e.id >= b.low_id and e.id < b.high_id and (?::text[] is null or e.endpoint_id <> all(?::text[]))
    ) d
    order by b.date`,
  [literal(dates), literal(lows), literal(highs), options.accountId, excluded, excluded, options.accountId, excluded, excluded]);
  return rows;
}
