import { openListenConnection } from './listen-connection.ts';
import { DUE_CHANNEL } from './queue/types.ts';

export interface DueListener {
  close(): Promise<void>;
}

/**
 * Calls `onDue` whenever an event may have become due (NOTIFY on DUE_CHANNEL), and once
 * each time the connection is (re)established, for anything that became due meanwhile. A
 * hint only: workers poll as well, so a notification lost while this reconnects costs
 * latency, never an event.
 */
export async function listenForDueEvents(databaseUrl: string, onDue: () => void, onError: (error: Error) => void = () => undefined): Promise<DueListener> {
  return openListenConnection({ databaseUrl, channel: DUE_CHANNEL, onNotification: () => onDue(), onConnected: onDue, onError });
}
