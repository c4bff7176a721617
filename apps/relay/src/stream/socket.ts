import type { WebSocket } from 'ws';
import { HookError, STREAM_PROTOCOL_VERSION, type ServerMessage, type SingleServerMessage } from '@hook/core';

/** Sends one message; false when the socket is no longer open. */
export function sendMessage(socket: WebSocket, message: ServerMessage): boolean {
  if (socket.readyState !== socket.OPEN) return false;
  socket.send(JSON.stringify(message));
  return true;
}

/**
 * A stream's messages on their way out. To a client that takes batches (it asked, query
 * `batch=true`), the first message of a turn of the event loop goes at once and those
 * that follow it in the same turn go together at its end, as one `batch` frame: under
 * load a claim's deliveries and a group commit's `recorded` messages are one frame, one
 * JSON text and one write, and at rest every message goes alone, as soon as it is made
 * (no message waits for the turn to end unless another went just before it). To other
 * clients, one frame per message as it comes.
 */
export class StreamOutbox {
  readonly #socket: WebSocket;
  readonly #batches: boolean;
  #queued: SingleServerMessage[] = [];
  /** Whether a message went out this turn: the next ones wait for its end (flush). */
  #sentThisTurn = false;

  constructor(socket: WebSocket, options: { batches: boolean }) {
    this.#socket = socket;
    this.#batches = options.batches;
  }

  /** Sends (or queues for this turn's frame) a message; false when the socket is no longer open. */
  send(message: SingleServerMessage): boolean {
    if (!this.#batches) return sendMessage(this.#socket, message);
    if (this.#socket.readyState !== this.#socket.OPEN) return false;
    if (this.#sentThisTurn) {
      this.#queued.push(message);
      return true;
    }
    this.#sentThisTurn = true;
    setImmediate(() => this.flush());
    return sendMessage(this.#socket, message);
  }

  /** Sends what is queued now (before closing, say); a socket closed meanwhile drops it, as it would drop a frame in flight. */
  flush(): void {
    this.#sentThisTurn = false;
    const queued = this.#queued;
    if (queued.length === 0) return;
    this.#queued = [];
    sendMessage(this.#socket, queued.length === 1 ? queued[0]! : { type: 'batch', version: STREAM_PROTOCOL_VERSION, messages: queued });
  }
}

/** Tells the client what is wrong (a registry error, as in problem documents), then closes with `closeCode`. */
export function closeWithError(socket: WebSocket, closeCode: number, error: HookError): void {
  sendMessage(socket, { type: 'error', version: STREAM_PROTOCOL_VERSION, code: error.code, detail: error.message, fix: error.definition.fix });
  socket.close(closeCode, error.code);
}

/**
 * Pings every `intervalMs`; a client that has not answered the previous two pings is
 * gone (a laptop asleep, a dropped network) and its socket is terminated, so its
 * session ends and its deliveries are offered again. Returns the function that stops it.
 */
export function keepAlive(socket: WebSocket, intervalMs: number): () => void {
  let unanswered = 0;
  const onPong = (): void => {
    unanswered = 0;
  };
  socket.on('pong', onPong);
  const timer = setInterval(() => {
    if (unanswered >= 2) {
      socket.terminate();
      return;
    }
    unanswered += 1;
    if (socket.readyState === socket.OPEN) socket.ping();
  }, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    socket.off('pong', onPong);
  };
}


