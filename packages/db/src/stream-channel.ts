import { sql } from 'kysely';
import type { VerificationResult } from '@hook/core';
import { openListenConnection } from './listen-connection.ts';
import { eventSummaryColumns } from './event-summaries.ts';
import type { Orm } from './orm.ts';

/** The NOTIFY channel relay processes share their live stream on (apps/relay/src/stream/peers.ts). */
export const STREAM_CHANNEL = 'hook_stream';

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; senders stay under this. */
export const STREAM_PAYLOAD_MAX_BYTES = 7900;

/** The longest a send (or the LISTEN) may take. */
const SEND_TIMEOUT_MS = 10_000;

export interface StreamChannelOptions {
  databaseUrl: string;
  /** A payload another session sent on the channel (this process's own come back too). */
  onMessage: (payload: string) => void;
  /** Each time the channel is (re)established: what was sent meanwhile is gone. */
  onConnected?: () => void;
  onError?: (error: Error) => void;
}

export interface StreamChannel {
  /**
   * Sends payloads, in this order, in one statement. Dropped while the connection is being
   * re-established: the stream is a live view, and what it missed is in the database.
   */
  send(payloads: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * One dedicated connection that LISTENs on STREAM_CHANNEL and also sends on it, so one
 * process's payloads leave in the order it sent them (a pool would interleave them).
 */
export async function openStreamChannel(options: StreamChannelOptions): Promise<StreamChannel> {
  const connection = await openListenConnection({
    databaseUrl: options.databaseUrl,
    channel: STREAM_CHANNEL,
    onNotification: options.onMessage,
    onConnected: options.onConnected,
    onError: options.onError,
    // A send that hangs (a dropped connection not yet noticed) fails after SEND_TIMEOUT_MS rather than holding the facts behind it.
    clientOptions: { keepAlive: true, query_timeout: SEND_TIMEOUT_MS },
  });
  return {
    async send(payloads) {
      const client = connection.client;
      if (!client || payloads.length === 0) return;
      // pg_notify of several payloads in one statement: one round trip, delivered in `ordinality` order.
      await client.query('select pg_notify($1, payload) from unnest($2::text[]) with ordinality as sent(payload, n) order by n', [STREAM_CHANNEL, payloads]);
    },
    close: () => connection.close(),
  };
}

/** How the live stream shows an event (no body), as read back for a fact too large to NOTIFY. */
export interface StreamEventRow {
  id: string; account_id: string; endpoint_id: string; type: string | null; method: string; path: string; query: string;
  content_type: string | null; size: number; received_at: Date; status: string; verification: VerificationResult | null;
}

/**
 * The stream summaries of these events, in the order asked. Only for the rare event whose
 * summary (a long path or query) does not fit in a NOTIFY payload: one primary-key lookup per batch.
 */
export async function readStreamEvents(orm: Orm, ids: readonly string[]): Promise<StreamEventRow[]> {
  const result = await sql<Omit<StreamEventRow, 'received_at'> & { received_at: string | Date }>`
    select e.id, e.account_id, e.endpoint_id, e.type, e.method, e.path, e.query, e.content_type, e.size, e.received_at, e.verification, s.status
    from event e cross join lateral (select ${sql.raw(eventSummaryColumns('e.account_id'))} from delivery l
                                     where l.event_id = e.id and l.account_id = e.account_id and l.retention_class = e.retention_class) s
    where e.id = any(${ids}::text[])`.execute(orm.em.getKysely());
  const byId = new Map(result.rows.map((row) => [row.id, { ...row, received_at: new Date(row.received_at) }]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}
