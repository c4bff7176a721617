// One LISTEN connection held open, on a raw `pg` client: why, in ../README.md (How SQL is written here).
import pg from 'pg';

/** Wait between reconnection attempts after a listening connection fails. */
const RECONNECT_DELAY_MS = 1000;

export interface ListenConnectionOptions {
  databaseUrl: string;
  channel: string;
  /** A notification on the channel. */
  onNotification: (payload: string) => void;
  /** Each time the connection is (re)established and listening: what was sent meanwhile was missed. */
  onConnected?: () => void;
  onError?: (error: Error) => void;
  /** node-postgres client options beyond the connection string (keep-alive, timeouts). */
  clientOptions?: Omit<pg.ClientConfig, 'connectionString'>;
}

export interface ListenConnection {
  /** The live client, or undefined while it is being re-established. */
  readonly client: pg.Client | undefined;
  close(): Promise<void>;
}

/**
 * One dedicated connection that LISTENs on a channel (LISTEN cannot share a pool) and
 * comes back by itself, a second after any failure, for as long as it is open. Resolves
 * once the first connection listens; rejects if that first one fails.
 */
export async function openListenConnection(options: ListenConnectionOptions): Promise<ListenConnection> {
  const onError = options.onError ?? (() => undefined);
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ ...options.clientOptions, connectionString: options.databaseUrl });
    next.on('notification', (message) => {
      if (message.channel === options.channel) options.onNotification(message.payload ?? '');
    });
    next.on('error', (error) => {
      onError(error);
      void next.end().catch(() => undefined);
      if (client === next) client = undefined;
      scheduleReconnect();
    });
    await next.connect();
    await next.query(`listen ${options.channel}`);
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
    get client() {
      return client;
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}
