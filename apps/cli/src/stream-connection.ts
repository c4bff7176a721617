/**
 * What `hook listen` and `hook events tail` share: waiting out a relay that is not up
 * yet, saying honestly where the stream's connection is, and stopping on Ctrl-C or
 * SIGTERM.
 *
 * While the stream is down, a person sees how long it has been down, never a new line
 * per try: on a terminal one status line rewritten in place every second; in a pipe a
 * line when it drops, a reminder now and then (REMINDER_FIRST_MS, gaps doubling up to
 * REMINDER_MAX_GAP_MS) and a line when it is back. The line that says it is back says
 * for how long it was down and how many events arrived meanwhile (counted with
 * `GET /v1/events`): listen's missed deliveries follow it, tail shows the missed events.
 * In --json mode the same reports are `{"type":"connection",…}` lines on stderr, fields
 * documented in docs/cli.md#connection-state:
 *
 *   {"type":"connection","state":"connecting","attempt":1}
 *   {"type":"connection","state":"open","session_id":"…","reconnected":false}
 *   {"type":"connection","state":"reconnecting","reason":"the connection was lost","down_since":"…","down_for_ms":0,"attempt":1,"retry_in_ms":212}
 *   {"type":"connection","state":"open","session_id":"…","reconnected":true,"down_since":"…","down_for_ms":4210,"missed":3}
 */
import { countOf, type EventStatus, idTimeMs } from '@hook/core';
import { HookApiError, HookNetworkError } from '@hook/client/errors';
import { backoffDelayMs, type EventSummary, type HookClient, type HookStream, type StreamState } from '@hook/client';
import type { HelloMessage, ServerMessage } from '@hook/core';
import type { HeldRecords, Output } from './output/index.ts';
import type { Line } from './output/view.ts';

/** In a pipe or --json: the first reminder that the stream is still down, this long after it dropped… */
export const REMINDER_FIRST_MS = 30_000;
/** …then each gap twice the one before, up to this. */
export const REMINDER_MAX_GAP_MS = 300_000;
/** How often the terminal's status line is redrawn while down (it counts seconds). */
const STATUS_REFRESH_MS = 1000;
/** Most missed events a reconnect looks at: beyond this it says "more than". */
export const MISSED_EVENTS_MAX = 1000;
/** How long counting the missed events may hold the stream's output back. */
const MISSED_COUNT_TIMEOUT_MS = 10_000;
/** Heartbeats before the drop whose events may have been lost unnoticed (a dead connection takes up to 3 to notice). */
const UNNOTICED_HEARTBEATS = 3;
/**
 * Ids of events already shown, so a catch-up does not show them again: a catch-up looks
 * back UNNOTICED_HEARTBEATS heartbeats before the drop, so ids are kept that long and this
 * much more…
 */
const SEEN_EVENTS_MARGIN_MS = 10_000;
/** …and at most this many (a catch-up shows at most MISSED_EVENTS_MAX anyway): at thousands of events a second, two minutes of ids took tens of MB. */
const SEEN_EVENTS_MAX = 20_000;

/** `42 s`, `3 min 5 s`, `2 h 4 min`: a duration for people. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 === 0 ? `${minutes} min` : `${minutes} min ${seconds % 60} s`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
}

function delayText(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** When the `n`th reminder (1, 2, …) that the stream is still down is due, in ms after the drop. */
export function reminderAtMs(n: number): number {
  let at = REMINDER_FIRST_MS;
  let gap = REMINDER_FIRST_MS;
  for (let i = 1; i < n; i++) {
    gap = Math.min(gap * 2, REMINDER_MAX_GAP_MS);
    at += gap;
  }
  return at;
}

/** A connection report on stderr: JSON in --json mode, a sentence otherwise. */
export function noteConnection(out: Output, report: Record<string, unknown> & { state: string }, text: string): void {
  out.note(out.json ? JSON.stringify({ type: 'connection', ...report }) : text);
}

/** A connection report that stays: on a terminal it replaces the status line, cut to the width like it (the most important words come first). */
function reportConnection(out: Output, report: Record<string, unknown> & { state: string }, text: string): void {
  if (!out.status(text, { keep: true })) noteConnection(out, report, text);
}

/**
 * A stretch of time without a connection: the terminal's status line says how long it
 * has lasted; elsewhere a line at the start and reminders at growing gaps.
 */
class Outage {
  readonly sinceMs: number;
  /** Why it started. */
  readonly cause: string;
  /** Why the latest try failed (the cause, until one has). */
  reason: string;
  attempt = 0;
  retryInMs: number | null = null;
  #reminders = 0;
  #ticker: NodeJS.Timeout | undefined;
  readonly #out: Output;
  readonly #now: () => number;
  readonly #describe: (outage: Outage) => { state: string; status: string; reminder: string };

  constructor(out: Output, now: () => number, reason: string, describe: (outage: Outage) => { state: string; status: string; reminder: string }) {
    this.#out = out;
    this.#now = now;
    this.sinceMs = now();
    this.cause = reason;
    this.reason = reason;
    this.#describe = describe;
  }

  get downForMs(): number {
    return this.#now() - this.sinceMs;
  }

  /** The fields every report of this outage carries. */
  report(): Record<string, unknown> {
    return { reason: this.reason, down_since: new Date(this.sinceMs).toISOString(), down_for_ms: Math.round(this.downForMs), attempt: this.attempt, retry_in_ms: this.retryInMs };
  }

  /** Says it started (`first`), then keeps the status line or the reminders going. */
  begin(firstText: string): void {
    const described = this.#describe(this);
    if (!this.#out.status(described.status)) noteConnection(this.#out, { state: described.state, ...this.report() }, firstText);
    this.#ticker = setInterval(() => this.#tick(), STATUS_REFRESH_MS);
    this.#ticker.unref();
  }

  /** Something changed (a new try, a new reason): the status line shows it now. */
  refresh(): void {
    const described = this.#describe(this);
    this.#out.status(described.status);
  }

  #tick(): void {
    const described = this.#describe(this);
    if (this.#out.status(described.status)) return;
    if (this.downForMs < reminderAtMs(this.#reminders + 1)) return;
    this.#reminders++;
    noteConnection(this.#out, { state: described.state, ...this.report() }, described.reminder);
  }

  end(): void {
    clearInterval(this.#ticker);
    this.#out.status(null);
  }
}

/** How a relay that has not answered yet (at start) is shown: state `waiting_for_relay`. */
function describeRelayWait(apiUrl: string): (outage: Outage) => { state: string; status: string; reminder: string } {
  return (current) => ({
    state: 'waiting_for_relay',
    status: `Cannot reach the relay at ${apiUrl} for ${formatDuration(current.downForMs)}; trying again (try ${current.attempt + 1})… (${current.reason})`,
    reminder: `Still cannot reach the relay at ${apiUrl} after ${formatDuration(current.downForMs)} (${current.reason}); trying again…`,
  });
}

function relayWaitText(apiUrl: string, reason: string, delayMs: number): string {
  return `Cannot reach the relay at ${apiUrl} (${reason}); trying again in ${delayText(delayMs)}, and on until it answers (Ctrl-C to stop).`;
}

/**
 * Runs `call` until the relay answers: a relay that is down (HookNetworkError) is waited
 * for with backoff, saying so on stderr as an outage; any other error (a bad key, say)
 * is thrown.
 */
export async function untilRelayAnswers<T>(out: Output, apiUrl: string, call: () => Promise<T>, stop: StopSignal, now: () => number = Date.now): Promise<T | undefined> {
  await out.prepareStream();
  let outage: Outage | undefined;
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        if (!(error instanceof HookNetworkError) || stop.isStopped()) throw error;
        const delayMs = backoffDelayMs(attempt); // the stream's own policy (@hook/client's backoff.ts)
        const first = outage === undefined;
        outage ??= new Outage(out, now, error.reason, describeRelayWait(apiUrl));
        outage.reason = error.reason;
        outage.attempt = attempt;
        outage.retryInMs = delayMs;
        if (first) outage.begin(relayWaitText(apiUrl, error.reason, delayMs));
        else outage.refresh();
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, delayMs))), stop.stopped]);
        clearTimeout(timer);
        if (stop.isStopped()) return undefined;
      }
    }
  } finally {
    outage?.end();
  }
}

export interface WatchOptions {
  apiUrl: string;
  /** Counts (and for tail fetches) the events that arrived while the stream was down. */
  client: HookClient;
  /** Said once the stream is first open, e.g. "Connected. Forwarding events to …". */
  connectedText: string;
  /** Which events the stream shows: missed events are counted with the same filters. */
  endpointId?: string;
  status?: EventStatus;
  /**
   * Tail: shows the missed events, oldest first, with `write` (ahead of the live lines
   * held meanwhile). Without it (listen) they are only counted: their deliveries follow.
   */
  showMissed?: (events: readonly EventSummary[], write: (value: unknown, line: string | Line) => void) => void;
  /** The error the command reports for a fatal close, when it says it in its own words (the `closed` line gives its code and reason). */
  fatalError?: (fatal: HookApiError) => Error & { code?: string };
  now?: () => number;
}

export interface ConnectionWatch {
  /** Stops the status line and timers (the stream's `closed` state does it too). */
  dispose(): void;
}

/** The events of the stream's filters received in [fromMs, toMs) (relay clock) and not `shown` already, oldest first. */
async function eventsReceivedBetween(
  client: HookClient,
  filter: { endpointId?: string; status?: EventStatus; types: readonly string[] | null },
  fromMs: number,
  toMs: number,
  shown: (eventId: string) => boolean,
): Promise<{ events: EventSummary[]; more: boolean }> {
  const found: EventSummary[] = [];
  let cursor: string | undefined;
  let looked = 0;
  for (;;) {
    const page = await client.events.list({ endpoint_id: filter.endpointId, status: filter.status, limit: 100, cursor });
    for (const event of page.data) {
      const receivedMs = Date.parse(event.received_at);
      if (receivedMs < fromMs) return { events: found.reverse(), more: false };
      if (++looked > MISSED_EVENTS_MAX) return { events: found.reverse(), more: true };
      if (receivedMs >= toMs || shown(event.id)) continue;
      if (filter.types && !filter.types.includes(event.type ?? '')) continue;
      found.push(event);
    }
    if (!page.next_cursor) return { events: found.reverse(), more: false };
    cursor = page.next_cursor;
  }
}

function eventIdOf(message: ServerMessage): string | undefined {
  switch (message.type) {
    case 'event.received':
      return message.event.id;
    case 'attempt.finished':
      return message.event_id;
    case 'delivery':
      return message.event.id;
    default:
      return undefined;
  }
}

/**
 * Reports `stream`'s connection on stderr for as long as it runs: connecting, open, each
 * outage (as above) and, on return, how long it was down and what was missed; a fatal
 * close as a `closed` line (--json) before the error itself.
 */
export function watchConnection(out: Output, stream: HookStream, options: WatchOptions): ConnectionWatch {
  const now = options.now ?? Date.now;
  const { apiUrl } = options;
  /** Ids of events shown lately, with when: a catch-up leaves them out. */
  const seen = new Map<string, number>();
  let hello: HelloMessage | undefined;
  /** Relay clock minus ours, as of the last hello (its session id carries the relay's time). */
  let relayOffsetMs = 0;
  let outage: Outage | undefined;
  let opened = false;
  /** The live output held while a catch-up runs (released by it, or by dispose). */
  let holding: HeldRecords | undefined;

  const rememberSeen = (message: ServerMessage): void => {
    const id = eventIdOf(message);
    if (id === undefined) return;
    const at = now();
    seen.delete(id);
    seen.set(id, at);
    const keptMs = UNNOTICED_HEARTBEATS * (hello?.heartbeat_interval_ms ?? 0) + SEEN_EVENTS_MARGIN_MS;
    for (const [oldId, seenAt] of seen) {
      if (seenAt >= at - keptMs && seen.size <= SEEN_EVENTS_MAX) break;
      seen.delete(oldId);
    }
  };

  const describeOutage = (current: Outage): { state: string; status: string; reminder: string } => ({
    state: 'reconnecting',
    status: `Connection lost ${formatDuration(current.downForMs)} ago; reconnecting (try ${Math.max(1, current.attempt)})… (${current.reason})`,
    reminder: `Still disconnected after ${formatDuration(current.downForMs)} (${current.reason}); reconnecting (try ${Math.max(1, current.attempt)})…`,
  });

  /** What the line that says the stream is back adds about the missed events. */
  const missedText = (count: number | null, more: boolean, why: string | undefined): string => {
    if (count === null) return `could not count the events that arrived meanwhile (${why ?? 'unknown error'})`;
    const many = more ? `more than ${MISSED_EVENTS_MAX.toLocaleString('en-US')} events` : countOf(count, 'event', 'events');
    if (options.showMissed) return count === 0 ? 'no events were missed' : `${many} arrived meanwhile:`;
    if (count === 0) return 'no events were missed';
    if (hello?.endpoint?.mirror) return `${many} arrived meanwhile; this endpoint is mirrored here, so they are not forwarded (see them with \`hook events list --endpoint ${hello.endpoint.name}\`)`;
    return `${many} arrived meanwhile and ${count === 1 && !more ? 'follows' : 'follow'}`;
  };

  /** The stream is back after `ended`: count (tail: show) what arrived meanwhile, with the live output held until then. */
  const catchUp = async (ended: Outage, session: HelloMessage, previousOffsetMs: number): Promise<void> => {
    holding?.release();
    const held = out.holdRecords();
    holding = held;
    const downFor = formatDuration(ended.downForMs);
    out.status(`Reconnected after ${downFor} down; counting the events missed meanwhile…`);
    const types = (session as { event_types?: unknown }).event_types;
    const slackMs = UNNOTICED_HEARTBEATS * session.heartbeat_interval_ms;
    let result: { events: EventSummary[]; more: boolean } | null = null;
    let why: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      result = await Promise.race([
        eventsReceivedBetween(
          options.client,
          { endpointId: options.endpointId, status: options.status, types: Array.isArray(types) ? (types as string[]) : null },
          ended.sinceMs + previousOffsetMs - slackMs,
          idTimeMs(session.session_id),
          // Shown before the drop; what the new connection brought since is not "missed" (a listener's deliveries may be here already).
          (eventId) => (seen.get(eventId) ?? Infinity) < ended.sinceMs,
        ),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${MISSED_COUNT_TIMEOUT_MS / 1000} s`)), MISSED_COUNT_TIMEOUT_MS))),
      ]);
    } catch (error) {
      why = error instanceof Error ? error.message : String(error);
    } finally {
      clearTimeout(timer);
    }
    const count = result ? result.events.length : null;
    reportConnection(
      out,
      {
        state: 'open',
        session_id: session.session_id,
        reconnected: true,
        reason: ended.cause,
        down_since: new Date(ended.sinceMs).toISOString(),
        down_for_ms: Math.round(ended.downForMs),
        missed: count,
        missed_more: result?.more ?? false,
      },
      `Reconnected after ${downFor} down; ${missedText(count, result?.more ?? false, why)}`,
    );
    if (result && options.showMissed && result.events.length > 0) options.showMissed(result.events, held.first);
    held.release();
    if (holding === held) holding = undefined;
  };

  const onMessage = (message: ServerMessage): void => {
    if (message.type === 'hello') return;
    rememberSeen(message);
  };

  const onState = (state: StreamState): void => {
    switch (state.state) {
      case 'connecting':
        if (!opened && outage === undefined && state.attempt === 1) {
          if (!out.status(`Connecting to ${apiUrl}…`)) noteConnection(out, { state: 'connecting', attempt: 1 }, `Connecting to ${apiUrl}…`);
        } else if (outage) {
          outage.retryInMs = null;
          outage.refresh();
        }
        break;
      case 'open': {
        const previousOffsetMs = relayOffsetMs;
        hello = state.hello;
        relayOffsetMs = idTimeMs(state.hello.session_id) - now();
        if (!opened || outage === undefined) {
          opened = true;
          outage?.end();
          outage = undefined;
          reportConnection(out, { state: 'open', session_id: state.hello.session_id, reconnected: false }, options.connectedText);
          break;
        }
        const ended = outage;
        outage = undefined;
        ended.end();
        void catchUp(ended, state.hello, previousOffsetMs);
        break;
      }
      case 'reconnecting':
        if (outage) {
          // A try failed.
          outage.attempt++;
          outage.reason = state.reason;
          outage.retryInMs = state.delayMs;
          outage.refresh();
          break;
        }
        if (!opened) {
          // Never connected yet: the relay did not answer at start, as in untilRelayAnswers.
          outage = new Outage(out, now, state.reason, describeRelayWait(apiUrl));
          outage.attempt = 1;
          outage.retryInMs = state.delayMs;
          outage.begin(relayWaitText(apiUrl, state.reason, state.delayMs));
          break;
        }
        outage = new Outage(out, now, state.reason, describeOutage);
        outage.retryInMs = state.delayMs;
        outage.begin(`Connection lost (${state.reason}); reconnecting…`);
        break;
      case 'closed':
        outage?.end();
        outage = undefined;
        out.status(null);
        // The error itself follows on stderr (with its fix) for people and scripts alike; in --json a closed line comes first, so the state lines end.
        if (state.fatal && out.json) {
          const reported = options.fatalError?.(state.fatal) ?? state.fatal;
          const reason = reported instanceof HookApiError ? reported.detail : reported.message;
          noteConnection(out, { state: 'closed', reason, code: reported.code ?? null }, '');
        }
        break;
    }
  };

  stream.on('state', onState);
  stream.on('message', onMessage);
  return {
    dispose() {
      stream.off('state', onState);
      stream.off('message', onMessage);
      outage?.end();
      outage = undefined;
      holding?.release();
      holding = undefined;
      out.status(null);
    },
  };
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
