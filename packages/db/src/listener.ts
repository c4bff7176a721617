import pg from 'pg';
import { DUE_CHANNEL } from './queue-sql.ts';

export interface DueListener {
  close(): Promise<void>;
}

/** Wait between reconnection attempts after the listening connection fails. */
const RECONNECT_DELAY_MS = 1000;

/**
 * Calls `onDue` whenever an event may have become due (NOTIFY on DUE_CHANNEL). A hint
 * only: workers poll as well, so a notification lost while this reconnects costs
 * latency, never an event. Holds one dedicated connection (LISTEN cannot share a pool).
 */
export async function listenForDueEvents(databaseUrl: string, onDue: () => void, onError: (error: Error) => void = () => undefined): Promise<DueListener> {
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on('notification', () => onDue());
    next.on('error', (error) => {
      onError(error);
      void next.end().catch(() => undefined);
      if (client === next) client = undefined;
      scheduleReconnect();
    });
    await next.connect();
    await next.query(`listen ${DUE_CHANNEL}`);
    if (closed) {
      await next.end();
      return;
    }
    client = next;
    onDue(); // anything that became due while not listening
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
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}
