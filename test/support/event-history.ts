/**
 * A large event history written straight into PostgreSQL (INSERT … SELECT
 * generate_series), for the console's list tests and `npm run bench:console`: ids carry
 * their receive time as the relay makes them, each event has one delivery (and, once
 * attempted, its attempt), bodies are small JSON documents holding `seq-<g>` so a search
 * can find one event.
 */
import type pg from 'pg';

/** Crockford base32 of `n` in `len` characters (as ids are made), for ids made in SQL. */
const BASE32_FUNCTION = `
  create or replace function pg_temp.base32(n bigint, len int) returns text language sql immutable as $$
    select string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((n >> (5 * (len - 1 - i))) & 31)::int + 1, 1), '' order by i)
    from generate_series(0, len - 1) as i
  $$`;
/** Time, then the history's tag (two histories on one database never share an id), then g. */
const EVENT_ID = `'evt_' || pg_temp.base32(t, 10) || pg_temp.base32($5::bigint, 6) || pg_temp.base32(g, 10)`;
const STATUSES = `(array['delivered', 'delivered', 'delivered', 'failed', 'pending'])[g % 5 + 1]`;
/** The answer of the attempt each status had: none for pending. */
const ATTEMPT_STATUSES = `(array[200, 200, 200, 500, null])[g % 5 + 1]`;
const CHUNK_EVENTS = 50_000;

export interface EventHistory {
  accountId: string;
  endpointId: string;
  /** The endpoint's first destination (`dst_` + the endpoint's ULID). */
  destinationId: string;
  count: number;
  /** Receive time of event 0 (the oldest), in ms since the epoch. */
  startMs: number;
  /** Milliseconds between consecutive events. */
  stepMs: number;
  /** Distinguishes the ids of histories written on one database (0 to 2^30). */
  tag: number;
}

/**
 * Writes `count` events of one endpoint (event g received at startMs + g·stepMs; every fifth
 * failed with one attempt answered 500, every fifth pending with none, the rest delivered
 * with one answered 200), then ANALYZE, as autovacuum would.
 */
export async function writeEventHistory(client: pg.Client, history: EventHistory): Promise<void> {
  await client.query(BASE32_FUNCTION);
  const rows = `select g, ($1::bigint + floor(g * $2::float8))::bigint as t from generate_series($3::bigint, $4::bigint) as g`;
  for (let from = 0; from < history.count; from += CHUNK_EVENTS) {
    const to = Math.min(history.count, from + CHUNK_EVENTS) - 1;
    const params = [history.startMs, history.stepMs, from, to, history.tag, history.accountId, history.endpointId];
    await client.query(
      `insert into event (id, account_id, endpoint_id, type, method, path, query, headers, body, content_type, size, received_at)
       select ${EVENT_ID}, $6, $7, 'invoice.paid', 'POST', '', '', '{"content-type": "application/json"}'::jsonb,
              body, 'application/json', length(body), to_timestamp(t / 1000.0)
       from (select *, convert_to('{"type":"invoice.paid","id":"seq-' || g || '","amount":' || (g % 1000) || '}', 'UTF8') as body from (${rows}) r) b`,
      params,
    );
    await client.query(
      `insert into delivery (event_id, destination_id, account_id, endpoint_id, status, attempt_count)
       select ${EVENT_ID}, $8, $6, $7, ${STATUSES}, 1 from (${rows}) r`,
      [...params, history.destinationId],
    );
    await client.query(
      `insert into attempt (id, event_id, destination_id, account_id, n, trigger, started_at, duration_ms, response_status)
       select 'att_' || substr(${EVENT_ID}, 5), ${EVENT_ID}, $7, $6, 1, 'auto', to_timestamp(t / 1000.0), 12, ${ATTEMPT_STATUSES}
       from (${rows}) r where g % 5 <> 4`,
      [...params.slice(0, 6), history.destinationId],
    );
  }
  await client.query('analyze event');
  await client.query('analyze delivery');
  await client.query('analyze attempt');
}
