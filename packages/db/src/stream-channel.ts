import { CompiledQuery } from 'kysely';
import pg from 'pg';
import type { Orm } from './orm.ts';

/** The NOTIFY channel relay processes share their live stream on (apps/relay/src/stream/peers.ts). */
export const STREAM_CHANNEL = 'hook_stream';

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; senders stay under this. */
export const STREAM_PAYLOAD_MAX_BYTES = 7900;

/** Wait between reconnection attempts after the channel's connection fails. */
const RECONNECT_DELAY_MS = 1000;
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
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const onError = options.onError ?? (() => undefined);

  const connect = async (): Promise<void> => {
    // A send that hangs (a dropped connection not yet noticed) fails after SEND_TIMEOUT_MS rather than holding the facts behind it.
    const next = new pg.Client({ connectionString: options.databaseUrl, keepAlive: true, query_timeout: SEND_TIMEOUT_MS });
    next.on('notification', (message) => {
      if (message.channel === STREAM_CHANNEL) options.onMessage(message.payload ?? '');
    });
    next.on('error', (error) => {
      onError(error);
      void next.end().catch(() => undefined);
      if (client === next) client = undefined;
      scheduleReconnect();
    });
    await next.connect();
    await next.query(`listen ${STREAM_CHANNEL}`);
    if (closed) {
      await next.end();
      return;
    }
    client = next;
    options.onConnected?.();
  };

  const scheduleReconnect = (): void => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch((error: Error) => {
        onError(error);
        scheduleReconnect();
      });
    }, RECONNECT_DELAY_MS);
  };

  await connect();
  return {
    async send(payloads) {
      if (!client || payloads.length === 0) return;
      // pg_notify of several payloads in one statement: one round trip, delivered in `ordinality` order.
      await client.query('select pg_notify($1, payload) from unnest($2::text[]) with ordinality as sent(payload, n) order by n', [STREAM_CHANNEL, payloads]);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}

/** How the live stream shows an event (no body), as read back for a fact too large to NOTIFY. */
export interface StreamEventRow {
  id: string; account_id: string; endpoint_id: string; type: string | null; method: string; path: string; query: string;
  content_type: string | null; size: number; received_at: Date; status: string;
}

/**
 * The stream summaries of these events, in the order asked. Only for the rare event whose
 * summary (a long path or query) does not fit in a NOTIFY payload: one primary-key lookup per batch.
 */
export async function readStreamEvents(orm: Orm, ids: readonly string[]): Promise<StreamEventRow[]> {
  const result = await orm.em.getKysely().executeQuery<Omit<StreamEventRow, 'received_at'> & { received_at: string | Date }>(CompiledQuery.raw(`
    select id, account_id, endpoint_id, type, method, path, query, content_type, size, received_at, status
    from event where id = any($1::text[])`, [ids]));
  const byId = new Map(result.rows.map((row) => [row.id, { ...row, received_at: new Date(row.received_at) }]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}
