/**
 * What `hook listen` and `hook events tail` share: waiting out a relay that is not up
 * yet, reporting the stream's connection state on stderr, and stopping on Ctrl-C or
 * SIGTERM. Connection reports are text for people and JSON lines in --json mode:
 *
 *   {"type":"connection","state":"open","session_id":"…","reconnected":false}
 *   {"type":"connection","state":"reconnecting","reason":"the connection was lost","retry_in_ms":412,"attempt":2}
 *   {"type":"connection","state":"waiting_for_relay","reason":"connection refused: …","retry_in_ms":1000,"attempt":1}
 */
import { HookNetworkError } from '@hook/client/errors';
import type { StreamState } from '@hook/client';
import type { Output } from './output/index.ts';

/** Waits between tries while the relay does not answer at all, doubling up to the stream's own cap. */
const RELAY_WAIT_INITIAL_MS = 500;
const RELAY_WAIT_MAX_MS = 10_000;

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A connection report on stderr: JSON in --json mode, a sentence otherwise. */
export function noteConnection(out: Output, report: Record<string, unknown> & { state: string }, text: string): void {
  out.note(out.json ? JSON.stringify({ type: 'connection', ...report }) : text);
}

/**
 * Runs `call` until the relay answers: a relay that is down (HookNetworkError) is waited
 * for with backoff, saying so on stderr; any other error (a bad key, say) is thrown.
 */
export async function untilRelayAnswers<T>(out: Output, apiUrl: string, call: () => Promise<T>, stop: StopSignal): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof HookNetworkError) || stop.isStopped()) throw error;
      const delayMs = Math.min(RELAY_WAIT_MAX_MS, RELAY_WAIT_INITIAL_MS * 2 ** (attempt - 1));
      noteConnection(
        out,
        { state: 'waiting_for_relay', reason: error.reason, retry_in_ms: delayMs, attempt },
        `Cannot reach the relay at ${apiUrl} (${error.reason}); trying again in ${seconds(delayMs)}`,
      );
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, delayMs))), stop.stopped]);
      clearTimeout(timer);
      if (stop.isStopped()) return undefined;
    }
  }
}

/** Reports a stream state change on stderr (the closed state is reported by whoever closed it). */
export function reportStreamState(out: Output, state: StreamState, what: { connectedText: string; apiUrl: string }): void {
  switch (state.state) {
    case 'connecting':
      if (state.attempt === 1) noteConnection(out, { state: 'connecting' }, `Connecting to ${what.apiUrl}…`);
      break;
    case 'open':
      noteConnection(
        out,
        { state: 'open', session_id: state.hello.session_id, reconnected: state.reconnected },
        state.reconnected ? 'Reconnected.' : what.connectedText,
      );
      break;
    case 'reconnecting':
      noteConnection(
        out,
        { state: 'reconnecting', reason: state.reason, retry_in_ms: state.delayMs, attempt: state.attempt },
        `Disconnected (${state.reason}); reconnecting in ${seconds(state.delayMs)}${state.attempt > 2 ? ` (try ${state.attempt})` : ''}…`,
      );
      break;
    case 'closed':
      break;
  }
}

/**
 * Resolves on the first SIGINT or SIGTERM; `onForce` runs on a second one (stop waiting
 * for in-flight work). `dispose` removes the handlers.
 */
export interface StopSignal {
  /** Resolves with the first signal. */
  stopped: Promise<NodeJS.Signals>;
  isStopped(): boolean;
  dispose(): void;
}

export function stopSignal(onForce: () => void = () => undefined): StopSignal {
  let resolveStopped!: (signal: NodeJS.Signals) => void;
  const stopped = new Promise<NodeJS.Signals>((resolve) => (resolveStopped = resolve));
  let count = 0;
  const handler = (signal: NodeJS.Signals): void => {
    count++;
    if (count === 1) resolveStopped(signal);
    else onForce();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    stopped,
    isStopped: () => count > 0,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
