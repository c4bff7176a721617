// The one tail-mode WebSocket the console keeps open while signed in; pages subscribe
// to its messages with useStream.
import { useEffect, useRef } from 'preact/hooks';
// By path, like rules.tsx's filters: neither file imports anything at run time, so the bundle takes only them.
import { backoffDelayMs } from '../../../../../packages/client/src/backoff.ts';
import { STREAM_CLOSE_CODES } from '../../../../../packages/core/src/stream-protocol.ts';

export type StreamListener = (message: any) => void;
const streamListeners = new Set<StreamListener>();
let streamSocket: WebSocket | undefined;

/** Closes the stream for good (sign-out); the close handler then does not reconnect. */
export function closeStream(): void {
  const socket = streamSocket;
  streamSocket = undefined;
  socket?.close();
}

/**
 * One tail-mode WebSocket for the whole page; pages subscribe to its messages. A lost
 * one is opened again with the client's backoff; `retry` counts the tries since it was
 * last open.
 */
export function openStream(onState: (live: boolean) => void, retry = 0): void {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const socket = new WebSocket(`${scheme}://${location.host}/v1/stream?mode=tail`);
  streamSocket = socket;
  socket.addEventListener('open', () => { onState(true); retry = 0; });
  socket.addEventListener('message', (message) => {
    const data = JSON.parse(message.data as string);
    for (const listener of streamListeners) listener(data);
  });
  socket.addEventListener('close', (close) => {
    onState(false);
    if (streamSocket !== socket || close.code === STREAM_CLOSE_CODES.keyRevoked) return; // signed out or key revoked
    setTimeout(() => openStream(onState, retry + 1), backoffDelayMs(retry + 1));
  });
}

export function useStream(listener: StreamListener): void {
  const ref = useRef(listener);
  ref.current = listener;
  useEffect(() => {
    const forward: StreamListener = (message) => ref.current(message);
    streamListeners.add(forward);
    return () => { streamListeners.delete(forward); };
  }, []);
}

