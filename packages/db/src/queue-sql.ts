/**
 * The relay's hand-written SQL, one named statement per function. Everything else goes
 * through the ORM; these exist where the ORM's statement would cost a hot path dearly.
 */
import { sql } from 'kysely';
import type { Orm } from './orm.ts';

/** One received request, ready to store. */
export interface NewEvent {
  id: string;
  accountId: string;
  endpointId: string;
  type: string | null;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: Buffer;
  contentType: string | null;
  size: number;
  receivedAt: Date;
  status: 'pending';
  nextAttemptAt: Date | null;
}

/**
 * Stores a batch of events in one statement and one commit. Shaped as INSERT … SELECT
 * FROM unnest(arrays): each column travels as one bound array parameter. Bodies are the
 * exception: one parameter each, in an ARRAY[…] constructor, because node-postgres sends
 * a Buffer parameter as raw binary but would hex-encode it inside an array parameter.
 * (The ORM's insertMany writes every value into the SQL text, bodies as hex literals,
 * which halved ingest throughput.)
 */
export async function insertEvents(orm: Orm, events: readonly NewEvent[]): Promise<void> {
  const column = <T>(pick: (event: NewEvent) => T): T[] => events.map(pick);
  const bodies = sql.join(events.map((event) => sql`${event.body}`));
  await sql`
    insert into event (id, account_id, endpoint_id, type, method, path, query, headers, body,
                       content_type, size, received_at, status, attempt_count, next_attempt_at, locked_until)
    select id, account_id, endpoint_id, type, method, path, query, headers::jsonb, body,
           content_type, size, received_at, status, 0, next_attempt_at, null
    from unnest(
      ${column((e) => e.id)}::text[], ${column((e) => e.accountId)}::text[], ${column((e) => e.endpointId)}::text[],
      ${column((e) => e.type)}::text[], ${column((e) => e.method)}::text[], ${column((e) => e.path)}::text[],
      ${column((e) => e.query)}::text[], ${column((e) => JSON.stringify(e.headers))}::text[], array[${bodies}]::bytea[],
      ${column((e) => e.contentType)}::text[], ${column((e) => e.size)}::int[], ${column((e) => e.receivedAt)}::timestamptz[],
      ${column((e) => e.status)}::text[], ${column((e) => e.nextAttemptAt)}::timestamptz[]
    ) as batch(id, account_id, endpoint_id, type, method, path, query, headers, body,
               content_type, size, received_at, status, next_attempt_at)
  `.execute(orm.em.getKysely());
}
