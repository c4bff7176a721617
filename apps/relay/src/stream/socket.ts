import type { WebSocket } from 'ws';
import { HookError, STREAM_PROTOCOL_VERSION, type ServerMessage } from '@hook/core';

/** Sends one message; false when the socket is no longer open. */
export function sendMessage(socket: WebSocket, message: ServerMessage): boolean {
  if (socket.readyState !== socket.OPEN) return false;
  socket.send(JSON.stringify(message));
  return true;
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


