import type { WebSocket } from 'ws';
import { ENDPOINT_GONE, HookError, newUlid, STREAM_CLOSE_CODES, STREAM_PROTOCOL_VERSION, STREAM_TOO_SLOW, type EventStatus } from '@hook/core';
import { Endpoint, type Orm } from '@hook/db';
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
  /** Looks up the endpoint watched (`endpointId`) every heartbeat: a tail of an endpoint that was deleted ends. */
  orm: Orm;
  onError: (error: unknown) => void;
}

/** Bytes a tail may fall behind by before it is closed (its client reconnects and carries on from the live edge). */
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;

/**
 * One `hook events tail` connection: the account's events and attempts as they happen, in
 * every relay process sharing the database (peers.ts). A tail of one endpoint ends when
 * the endpoint is deleted (close code 4004 after an `endpoint_gone` error), so its client
 * stops instead of watching nothing forever.
 */
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
          // Absent from facts of a relay process older than these fields (peers.ts): omitted then.
          status: finished.deliveryStatus,
          destination: finished.destination,
          attempt: finished.attempt,
        });
      },
    });
    let endpointCheck: NodeJS.Timeout | undefined;
    if (endpointId) {
      endpointCheck = setInterval(() => void this.#closeIfEndpointGone(endpointId), this.#options.heartbeatIntervalMs);
      endpointCheck.unref();
    }
    const stop = (): void => {
      unsubscribe();
      clearInterval(endpointCheck);
    };
    socket.on('close', stop);
    socket.on('error', stop);
    sendMessage(socket, {
      type: 'hello',
      version: STREAM_PROTOCOL_VERSION,
      mode: 'tail',
      account_id: accountId,
      session_id: this.sessionId,
      heartbeat_interval_ms: this.#options.heartbeatIntervalMs,
    });
  }

  async #closeIfEndpointGone(endpointId: string): Promise<void> {
    const { socket, orm } = this.#options;
    try {
      const endpoint = await orm.em.fork().findOne(Endpoint, { id: endpointId, deletedAt: null }, { fields: ['id'] });
      if (!endpoint && socket.readyState === socket.OPEN) closeWithError(socket, STREAM_CLOSE_CODES.endpointGone, new HookError(ENDPOINT_GONE, [endpointId]));
    } catch (error) {
      this.#options.onError(error);
    }
  }
}
