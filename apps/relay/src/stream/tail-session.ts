import type { WebSocket } from 'ws';
import { HookError, newUlid, STREAM_CLOSE_CODES, STREAM_PROTOCOL_VERSION, STREAM_TOO_SLOW, type EventStatus } from '@hook/core';
import type { StreamHub } from './hub.ts';
import { closeWithError, sendMessage } from './socket.ts';

export interface TailSessionOptions {
  socket: WebSocket;
  hub: StreamHub;
  accountId: string;
  /** Only this endpoint's events and attempts. */
  endpointId?: string;
  /** Only events in this status: received events count as pending, attempts by the status they leave. */
  status?: EventStatus;
  heartbeatIntervalMs: number;
}

/** Bytes a tail may fall behind by before it is closed (its client reconnects and carries on from the live edge). */
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;

/** One `hook events tail` connection: the account's events and attempts as they happen, in every relay process sharing the database (peers.ts). */
export class TailSession {
  readonly sessionId = `ses_${newUlid()}`;
  readonly #options: TailSessionOptions;

  constructor(options: TailSessionOptions) {
    this.#options = options;
  }

  start(): void {
    const { socket, hub, accountId, endpointId, status } = this.#options;
    const wanted = (eventEndpointId: string, eventStatus: EventStatus): boolean =>
      (!endpointId || eventEndpointId === endpointId) && (!status || eventStatus === status);
    const send = (message: Parameters<typeof sendMessage>[1]): void => {
      if (socket.bufferedAmount > MAX_UNSENT_BYTES) {
        closeWithError(socket, STREAM_CLOSE_CODES.tooSlow, new HookError(STREAM_TOO_SLOW));
        return;
      }
      sendMessage(socket, message);
    };
    const unsubscribe = hub.subscribe({
      accountId,
      onEventSummary: (event) => {
        if (wanted(event.endpoint_id, event.status)) send({ type: 'event.received', version: STREAM_PROTOCOL_VERSION, event });
      },
      onAttempt: (finished) => {
        if (!wanted(finished.endpointId, finished.eventStatus)) return;
        send({
          type: 'attempt.finished',
          version: STREAM_PROTOCOL_VERSION,
          event_id: finished.eventId,
          endpoint_id: finished.endpointId,
          event_status: finished.eventStatus,
          attempt: finished.attempt,
        });
      },
    });
    socket.on('close', unsubscribe);
    socket.on('error', unsubscribe);
    sendMessage(socket, {
      type: 'hello',
      version: STREAM_PROTOCOL_VERSION,
      mode: 'tail',
      account_id: accountId,
      session_id: this.sessionId,
      heartbeat_interval_ms: this.#options.heartbeatIntervalMs,
    });
  }
}
