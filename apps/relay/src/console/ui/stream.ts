// The one tail-mode WebSocket the console keeps open while signed in; pages subscribe
// to its messages with useStream.
import { useEffect, useRef } from 'preact/hooks';

export type StreamListener = (message: any) => void;
const streamListeners = new Set<StreamListener>();
let streamSocket: WebSocket | undefined;

/** Closes the stream for good (sign-out); the close handler then does not reconnect. */
export function closeStream(): void {
  const socket = streamSocket;
  streamSocket = undefined;
  socket?.close();
}

/** One tail-mode WebSocket for the whole page; pages subscribe to its messages. */
export function openStream(onState: (live: boolean) => void, delayMs = 500): void {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const socket = new WebSocket(`${scheme}://${location.host}/v1/stream?mode=tail`);
  streamSocket = socket;
  socket.addEventListener('open', () => { onState(true); delayMs = 500; });
  socket.addEventListener('message', (message) => {
    const data = JSON.parse(message.data as string);
    for (const listener of streamListeners) listener(data);
  });
  socket.addEventListener('close', (close) => {
    onState(false);
    if (streamSocket !== socket || close.code === 4001) return; // signed out or key revoked
    setTimeout(() => openStream(onState, Math.min(delayMs * 2, 10_000)), delayMs);
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

