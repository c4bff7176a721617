/**
 * An account's events and delivery outcomes per UTC day, for the console's usage chart.
 * Read from the events and deliveries themselves (no counters to keep in step): each day
 * is a range of event ids (ids begin with their receive time), walked in event_account_idx
 * order, with each event's deliveries found by primary key.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
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
  const excluded = options.excludeEndpointIds.length === 0 ? null : [...options.excludeEndpointIds];
  const { rows } = await sql<DailyUsage>`
    select b.date::text as date, n.events, d.deliveries, d.delivered, d.failed
    from unnest(${dates}::date[], ${lows}::text[], ${highs}::text[]) as b(date, low_id, high_id)
    cross join lateral (
      select count(*)::int as events from event e
      where e.account_id = ${options.accountId} and e.id >= b.low_id and e.id < b.high_id and (${excluded}::text[] is null or e.endpoint_id <> all(${excluded}::text[]))
    ) n
    cross join lateral (
      select count(*) filter (where l.status <> 'filtered')::int as deliveries,
             count(*) filter (where l.status = 'delivered')::int as delivered,
             count(*) filter (where l.status = 'failed')::int as failed
      from event e join delivery l on l.event_id = e.id
      where e.account_id = ${options.accountId} and e.id >= b.low_id and e.id < b.high_id and (${excluded}::text[] is null or e.endpoint_id <> all(${excluded}::text[]))
    ) d
    order by b.date`.execute(em.getKysely());
  return rows;
}
