import type { QueueDestinationType } from './destination-options.ts';
/**
 * The live stream's message protocol (`GET /v1/stream`, a WebSocket): JSON text
 * messages, each with a `type` and the protocol `version`. Shared by the relay, which
 * speaks it, and the client, CLI and MCP server, which listen to it.
 *
 * Modes (query `mode`):
 * - `tail`: the server pushes `event.received` and `attempt.finished` for the account
 *   (optionally one endpoint, `endpoint_id`, and one resulting status, `status`). An
 *   `attempt.finished` names its destination and that delivery's own status beside the
 *   event's, so attempts of one event to several destinations can be told apart.
 * - `listen` (`endpoint_id` required): the server pushes `delivery` messages, at most
 *   `max_in_flight` unanswered, and the client answers each with a `result`. For an
 *   endpoint with a `cli` destination the session claims that destination's deliveries
 *   from the queue: each result is recorded as an attempt (trigger `listen`, or
 *   `replay`) and drives the delivery's status and retries; deliveries that waited while
 *   no listener was connected come on connect, oldest first (retrying ones at once),
 *   unless `skip_missed=true`. Several listeners of one destination share its
 *   deliveries, and each also gets the others' as `mirror` copies whose results are
 *   not recorded. For an endpoint without a `cli` destination, listening mirrors new
 *   events.
 *   After recording a listener's result the relay answers with a `recorded` message
 *   (the delivery's status after it and when the next attempt is due), so the listener
 *   can say what its answer decided. Not for mirror copies, whose results are not
 *   recorded. `types=a,b` (listen) takes only events of those types: the others stay
 *   waiting for a listener that takes them, and are not mirrored to this one.
 *
 * Clients ignore message types and fields they do not know (a newer relay's), so the
 * relay may add types and fields within one protocol version; a field added so is
 * optional to clients, which may meet an older relay.
 *
 * Batches (query `batch=true`, answered by `batch: true` in hello): several messages in
 * one WebSocket frame, `{"type":"batch","version":1,"messages":[…]}`, in order. A side
 * batches only what is ready at the same moment (under load: a claim's deliveries, a
 * group commit's `recorded` messages, the answers that came in together), never waiting
 * for more, so a lone message goes alone and at once. The relay sends batches only to a
 * client that asked, and the client sends them only to a relay whose hello said `batch`:
 * an older client or relay on either side gets one message per frame, as before.
 *
 * Liveness: both sides send WebSocket pings every `heartbeat_interval_ms`; a side that
 * misses two pongs in a row closes the socket. A delivery whose listener disconnects
 * before answering is offered again, not counted as a failed attempt.
 */
import type { AttemptTrigger, EventStatus } from './events.ts';
import type { VerificationResult } from './providers/index.ts';

export const STREAM_PROTOCOL_VERSION = 1;
/** How often each side pings; two missed pongs close the socket. */
export const STREAM_HEARTBEAT_INTERVAL_MS = 5000;
/** Unanswered deliveries a listener has at once, unless it asks for fewer (query `max_in_flight`). */
export const STREAM_DEFAULT_MAX_IN_FLIGHT = 32;
export const STREAM_MAX_IN_FLIGHT_LIMIT = 256;
/** Event types one listen session may ask for (query `types`). */
export const STREAM_EVENT_TYPES_MAX = 50;
/** WebSocket close codes the relay uses (4000–4999 are free for applications). */
export const STREAM_CLOSE_CODES = {
  /** The relay is shutting down; reconnect. */
  goingAway: 1001,
  /** No pong for two heartbeats. */
  heartbeatTimeout: 4000,
  /** A message the relay could not understand. */
  protocolError: 4002,
  /** A tail that fell too far behind (try again later). */
  tooSlow: 1013,
  /** The endpoint was deleted or disabled while listening. */
  endpointGone: 4004,
  /** The stream's API key was revoked (or its member or account removed) while streaming. */
  keyRevoked: 4001,
} as const;

export type StreamMode = 'tail' | 'listen';

/** An event as the stream shows it: everything but the body, which only deliveries carry. */
export interface StreamEventSummary {
  id: string;
  endpoint_id: string;
  type: string | null;
  method: string;
  path: string;
  query: string;
  content_type: string | null;
  size: number;
  received_at: string;
  status: EventStatus;
  /** What the endpoint's signature verification found (docs/sources.md); null or absent when it verifies nothing. */
  verification?: VerificationResult | null;
}

export interface StreamAttempt {
  id: string;
  n: number;
  trigger: AttemptTrigger;
  started_at: string;
  duration_ms: number;
  response_status: number | null;
  error: string | null;
}

export interface HelloMessage {
  type: 'hello';
  version: number;
  mode: StreamMode;
  account_id: string;
  session_id: string;
  heartbeat_interval_ms: number;
  /** Listen mode: the endpoint and whether results drive its events' status (CLI destination) or it only mirrors them (URL destination). */
  endpoint?: { id: string; name: string; url: string; destination_type: 'url' | 'cli'; mirror: boolean };
  max_in_flight?: number;
  /** Listen mode: the event types the session takes (query `types`); null: every type. Absent from relays that cannot filter. */
  event_types?: string[] | null;
  /** Listen mode: this relay sends a `recorded` message after each recorded result. */
  recorded_messages?: true;
  /** The client asked for batches (query `batch=true`) and this relay speaks them: it may send `batch` messages and takes them. Absent otherwise. */
  batch?: true;
}

export interface EventReceivedMessage {
  type: 'event.received';
  version: number;
  event: StreamEventSummary;
}

/** Where an attempt went: one of the endpoint's destinations, as REST shows it (destinations have no names). */
/** Where an attempt went: a URL, a broker (a queue destination's URL) or `hook listen`. */
export type StreamAttemptDestination = { id: string } & ({ type: 'url' | QueueDestinationType; url: string } | { type: 'cli' });

export interface AttemptFinishedMessage {
  type: 'attempt.finished';
  version: number;
  event_id: string;
  endpoint_id: string;
  /**
   * The event's status after this attempt: the summary of all its deliveries, so with
   * several destinations it may still be pending or retrying after this one's 2xx.
   */
  event_status: EventStatus;
  /** The status of this attempt's delivery after it (the event's way to `destination`). Absent from older relays. */
  status?: EventStatus;
  /** The destination this attempt went to. Absent from older relays. */
  destination?: StreamAttemptDestination;
  attempt: StreamAttempt;
}

/** One event to forward. `headers` are the ones to send: the original ones that may travel plus the signature headers. */
export interface DeliveryMessage {
  type: 'delivery';
  version: number;
  delivery_id: string;
  /** 1 for the first attempt of the event, and so on. */
  attempt: number;
  event: StreamEventSummary;
  headers: Record<string, string>;
  /** The raw body, base64: bytes are bytes. */
  body_base64: string;
  /**
   * A copy of a delivery another listener of the destination claimed (or, on an endpoint
   * without a `cli` destination, of a new event): answer it like any other; the answer
   * is not recorded. Absent on the deliveries this listener's answers decide.
   */
  mirror?: true;
}

/**
 * Listen mode: what the relay made of a listener's `result`, sent once it is recorded.
 * `status` is the delivery's status after it (its way to this listener's destination);
 * null when the result was not recorded: it came after the delivery's lease ran out (the
 * relay had offered it again), or recording failed (`error` says why).
 */
export interface RecordedMessage {
  type: 'recorded';
  version: number;
  delivery_id: string;
  event_id: string;
  /** The attempt number, as in the `delivery` message. */
  attempt: number;
  /** What started the attempt: `listen` (the delivery's own turn) or `replay`. */
  trigger: AttemptTrigger;
  status: EventStatus | null;
  /** The event's status after (the summary of all its deliveries); null when not recorded. */
  event_status: EventStatus | null;
  /** When the delivery's next automatic attempt is due (ISO 8601); null when none will be made. */
  next_attempt_at: string | null;
  /** Why the result did not decide the delivery (`status` null), else null. */
  error: string | null;
  /**
   * Whether the answer is stored as an attempt of the event. It can be when it did not
   * decide the delivery (it came after the delivery's lease, or on a later connection
   * after the delivery was offered again); it is not when recording failed.
   */
  attempt_recorded?: boolean;
}

/** The relay refuses something and closes (bad query, say); the fields follow the API's problem documents. */
export interface StreamErrorMessage {
  type: 'error';
  version: number;
  code: string;
  detail: string;
  fix: string;
}

/** One of the messages a relay sends on its own. */
export type SingleServerMessage = HelloMessage | EventReceivedMessage | AttemptFinishedMessage | DeliveryMessage | RecordedMessage | StreamErrorMessage;

/** Several messages in one frame, in order (batches are negotiated: see the module comment). Batches do not nest. */
export interface BatchMessage<M> {
  type: 'batch';
  version: number;
  messages: M[];
}

export type ServerMessage = SingleServerMessage | BatchMessage<SingleServerMessage>;

/** A listener's answer to a delivery: what the local server said (status) or why it could not be reached (error). */
export interface ResultMessage {
  type: 'result';
  version: number;
  delivery_id: string;
  /** The HTTP status of the local server, or null when there was no answer. */
  status: number | null;
  duration_ms: number;
  error?: string | null;
  /** The start of the local server's answer, for the attempt record (the relay truncates it). */
  response_body?: string | null;
  /**
   * A late result: the answer to a delivery of an earlier connection (lost while the
   * delivery was forwarded, say while the listener was stopped), sent on this one. The
   * relay does not know that connection's `delivery_id`, so the result names the event
   * and attempt of its `delivery` message and when it was forwarded.
   */
  late?: { event_id: string; attempt: number; forwarded_at: string };
}

export type ClientMessage = ResultMessage | BatchMessage<ResultMessage>;

/** Most messages one client batch may hold (a listener has at most STREAM_MAX_IN_FLIGHT_LIMIT deliveries to answer, and mirror copies). */
export const STREAM_BATCH_MAX_MESSAGES = 1024;

/** Parses a client message, a result or a batch of them (into its results, in order), or says what is wrong with it. */
export function parseClientMessages(text: string): { ok: true; messages: ResultMessage[] } | { ok: false; problem: string } {
  const value = jsonObject(text);
  if (typeof value === 'string') return { ok: false, problem: value };
  if (value.type !== 'batch') {
    const problem = resultProblem(value);
    return problem === null ? { ok: true, messages: [value as unknown as ResultMessage] } : { ok: false, problem };
  }
  const { messages } = value;
  if (!Array.isArray(messages) || messages.length > STREAM_BATCH_MAX_MESSAGES) return { ok: false, problem: `batch.messages must be an array of at most ${STREAM_BATCH_MAX_MESSAGES} results` };
  for (const [index, message] of messages.entries()) {
    const problem = typeof message === 'object' && message !== null ? resultProblem(message as Record<string, unknown>) : 'not a JSON object';
    if (problem !== null) return { ok: false, problem: `batch.messages[${index}]: ${problem}` };
  }
  return { ok: true, messages: messages as ResultMessage[] };
}

/** The JSON object a message is, or what is wrong with it. */
function jsonObject(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : 'not a JSON object';
}

/** What is wrong with a result, or null. */
function resultProblem(message: Record<string, unknown>): string | null {
  if (message.type !== 'result') return `unknown message type ${JSON.stringify(message.type)}; clients send only "result" (or, where batches were agreed, a "batch" of results)`;
  if (typeof message.delivery_id !== 'string') return 'result.delivery_id must be a string';
  if (message.status !== null && !(Number.isInteger(message.status) && (message.status as number) >= 100 && (message.status as number) <= 599)) {
    return 'result.status must be an HTTP status (100–599) or null';
  }
  if (typeof message.duration_ms !== 'number' || !(message.duration_ms >= 0)) return 'result.duration_ms must be a number ≥ 0';
  for (const field of ['error', 'response_body'] as const) {
    if (message[field] !== undefined && message[field] !== null && typeof message[field] !== 'string') return `result.${field} must be a string or null`;
  }
  if (message.late !== undefined) {
    const late = message.late as Record<string, unknown> | null;
    if (typeof late !== 'object' || late === null || typeof late.event_id !== 'string' || !(Number.isInteger(late.attempt) && (late.attempt as number) >= 1)
      || typeof late.forwarded_at !== 'string' || Number.isNaN(Date.parse(late.forwarded_at))) {
      return 'result.late must be {event_id, attempt (≥ 1), forwarded_at (ISO 8601)}';
    }
  }
  return null;
}
