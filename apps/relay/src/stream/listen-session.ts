import { channel } from 'node:diagnostics_channel';
import type { WebSocket } from 'ws';
import {
  answerKind, ENDPOINT_GONE, firstIdAt, HookError, keptResponseBody, MIRROR_HEADER, newUlid, randomToken, parseClientMessages, STREAM_PROTOCOL_ERROR, STREAM_CLOSE_CODES, STREAM_PROTOCOL_VERSION,
  type AttemptTrigger, type DeliveryMessage, type ResultMessage,
} from '@hook/core';
import { claimForListener, Destination, Endpoint, makeDestinationsDue, readDeliveries, type ClaimedDelivery, type ListenClaimCursor, type Orm } from '@hook/db';
import { attemptDelivery, recordLateAnswer, type AttemptContext, type AttemptOutcome, type OutgoingDelivery } from '../delivery/attempt.ts';
import type { SendResult } from '../delivery/sender.ts';
import { Claimer, type ReservedSlot } from '../delivery/claimer.ts';
import { deliveryMessage } from './copies.ts';
import type { EventSummary, StoredEvent, StreamHub } from './hub.ts';
import { LISTENER_PRESENCE_MS, type ListenerHandle, type ListenerRegistry } from './listeners.ts';
import { closeWithError, StreamOutbox } from './socket.ts';

/** The endpoint a session listens on, as found when it connected. */
export interface ListenEndpoint {
  id: string;
  accountId: string;
  name: string;
  url: string;
  /** The endpoint's first `cli` destination, which the session serves; null: it has none, so the session mirrors. */
  destinationId: string | null;
}

export interface ListenSessionOptions {
  socket: WebSocket;
  orm: Orm;
  hub: StreamHub;
  listeners: ListenerRegistry;
  /** How deliveries are prepared, signed and recorded: the same as every other attempt's (attempt.ts). */
  delivery: AttemptContext;
  endpoint: ListenEndpoint;
  maxInFlight: number;
  /** Take only deliveries of events received from now on. */
  skipMissed: boolean;
  /** Take (and mirror) only events of these types; null: every type. The others wait for a listener that takes them. */
  eventTypes: readonly string[] | null;
  leaseMs: number;
  heartbeatIntervalMs: number;
  /** How often to claim without being woken (retries coming due). */
  pollIntervalMs: number;
  /** The client takes batches (query `batch=true`): this turn's messages go in one frame (StreamOutbox). */
  batches: boolean;
  onError: (error: unknown) => void;
}

/**
 * What sessions did, published on a `node:diagnostics_channel` (read only, and free when
 * nobody subscribes; tests wait on it): each claim statement a session finished, with
 * whether it walked the due index from the start (as every poll does) and the events it
 * took, and each result a listener sent, with what the session took it for.
 */
export const LISTEN_SESSION_CHANNEL = 'hook:listen-session';
export type ListenSessionSignal =
  | { kind: 'claimed'; sessionId: string; fromStart: boolean; eventIds: string[] }
  | { kind: 'result'; sessionId: string; deliveryId: string; as: 'answer' | 'mirror' | 'late' | 'unknown' };
const signals = channel(LISTEN_SESSION_CHANNEL);

/** Most new events a mirroring session queues while its listener is busy; more are dropped. */
const MIRROR_QUEUE_MAX = 10_000;

interface Waiting {
  resolve: (result: SendResult | null) => void;
}

/**
 * One `hook listen` connection. It only moves messages: for an endpoint with a `cli`
 * destination, the session claims that destination's due deliveries from the queue
 * under leases, like a worker (claim-listen.ts), at most `maxInFlight` at once, and
 * hands each to the one attempt module (attempt.ts) with itself as the transport: the
 * signed delivery goes out as a `delivery` message and the listener's `result` comes
 * back as the answer, recorded like any attempt (trigger `listen`, or `replay`). A
 * listener that disconnects before answering gives its deliveries back untried, and the
 * next listener claims them.
 *
 * Several sessions on one destination are competing claimers; each delivery one of them
 * sends is also shown to the others as a mirror copy (results ignored): directly in this
 * process, through the stream channel in others (copies.ts), so each listener still sees
 * every event (docs/listen.md#several-listeners).
 *
 * On connect the destination's retrying deliveries become due at once: a developer who
 * restarts `hook listen` after fixing their server gets the backlog now, not at the
 * next scheduled retry.
 *
 * For an endpoint without a `cli` destination the session mirrors the endpoint's first
 * destination: each delivery to it, as it is sent by any process, and records nothing.
 */
export class ListenSession {
  readonly #options: ListenSessionOptions;
  readonly #endpoint: ListenEndpoint;
  readonly #fromEventId: string;
  /** Claims this destination's deliveries for this session (the one claimer, as a worker's). */
  readonly #claimer: Claimer;
  /** Where the last claim's walk of the due index ended (#claim); null: from the start. */
  #cursor: ListenClaimCursor | null = null;
  readonly #outbox: StreamOutbox;
  readonly #waiting = new Map<string, Waiting>();
  readonly #mirrorQueue: DeliveryMessage[] = [];
  #mirrorsOut = 0;
  readonly #mirrorIds = new Set<string>();
  #deliveryCounter = 0;
  /** When mirroring: the endpoint's first destination, whose deliveries are copied here as they are sent. */
  #mirrorAs: string | null = null;
  #closed = false;
  #pollTimer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #unregister: (() => void) | undefined;
  readonly #handle: ListenerHandle = { wake: () => this.#fill(), mirror: (message) => this.#mirror(message), reserve: (eventId) => this.#reserve(eventId) };
  readonly #leaseToken = randomToken(9);
  readonly sessionId = `ses_${newUlid()}`;

  constructor(options: ListenSessionOptions) {
    this.#options = options;
    this.#endpoint = options.endpoint;
    this.#fromEventId = options.skipMissed ? firstIdAt('event', Date.now()) : '';
    this.#outbox = new StreamOutbox(options.socket, { batches: options.batches });
    const destinationId = this.#endpoint.destinationId;
    this.#claimer = new Claimer({
      slots: options.maxInFlight,
      perDestinationLimit: options.maxInFlight,
      claim: (limit) => this.#claim(limit),
      start: (delivery, free) => this.#deliver(delivery, free),
      lease: (eventId) => ({ id: `${this.#leaseToken}.${eventId}.${destinationId}`, ms: options.leaseMs, destinationType: 'cli' }),
      onError: options.onError,
    });
  }

  get #serving(): boolean {
    return this.#endpoint.destinationId !== null;
  }

  /** Says hello and starts claiming (or mirroring). Call once, right after the socket opened. */
  async start(): Promise<void> {
    const { socket } = this.#options;
    socket.on('message', (data, isBinary) => this.#onMessage(isBinary ? null : data.toString()));
    socket.on('close', () => this.#close());
    socket.on('error', () => this.#close());
    this.#unsubscribe = this.#options.hub.subscribe({
      accountId: this.#endpoint.accountId,
      onEvent: (event) => this.#onEventStored(event),
      onEventSummary: (summary) => this.#onEventStoredElsewhere(summary),
    });
    if (!(await this.#stillThere())) return;
    this.#outbox.send({
      type: 'hello',
      version: STREAM_PROTOCOL_VERSION,
      mode: 'listen',
      account_id: this.#endpoint.accountId,
      session_id: this.sessionId,
      heartbeat_interval_ms: this.#options.heartbeatIntervalMs,
      endpoint: { id: this.#endpoint.id, name: this.#endpoint.name, url: this.#endpoint.url, destination_type: this.#serving ? 'cli' : 'url', mirror: !this.#serving },
      max_in_flight: this.#options.maxInFlight,
      event_types: this.#options.eventTypes === null ? null : [...this.#options.eventTypes],
      recorded_messages: true,
      ...(this.#options.batches ? { batch: true as const } : {}),
    });
    if (!this.#serving) {
      if (this.#mirrorAs) this.#watchMirror(this.#mirrorAs);
      return;
    }
    this.#unregister = this.#options.listeners.add(this.#endpoint.destinationId!, this.#handle);
    // The destination is back: what was waiting for its retry is due now.
    await makeDestinationsDue(this.#options.orm, this.#endpoint.accountId, [this.#endpoint.destinationId!]);
    this.#schedulePoll();
    this.#fill();
  }

  /**
   * Checks that the endpoint (and the destination served) is still there to listen on,
   * closing the session if not, and says the destination has a listener
   * (destination.listener_seen_at, read by replays in other processes).
   */
  async #stillThere(): Promise<boolean> {
    const em = this.#options.orm.em.fork();
    const accountId = this.#endpoint.accountId;
    const endpoint = await em.findOne(Endpoint, { id: this.#endpoint.id, accountId, deletedAt: null }, { fields: ['status'] });
    const destinations = endpoint ? await em.find(Destination, { endpointId: this.#endpoint.id, accountId, deletedAt: null }, { orderBy: { position: 'asc' } }) : [];
    if (this.#closed) return false;
    if (!endpoint || endpoint.status === 'disabled') {
      this.#outbox.flush();
      closeWithError(this.#options.socket, STREAM_CLOSE_CODES.endpointGone, new HookError(ENDPOINT_GONE, [this.#endpoint.id]));
      return false;
    }
    const served = this.#serving ? destinations.find((destination) => destination.id === this.#endpoint.destinationId) : undefined;
    if (this.#serving ? served?.type !== 'cli' : destinations.some((destination) => destination.type === 'cli')) {
      // Listening changes meaning (deliver vs mirror): the client reconnects and gets the new mode.
      this.#outbox.flush();
      this.#options.socket.close(1012, 'destination changed');
      return false;
    }
    // Mirror copies are what the endpoint's first destination is sent.
    if (!this.#serving) this.#mirrorAs = destinations[0]?.id ?? null;
    if (served && (served.listenerSeenAt?.getTime() ?? 0) < Date.now() - LISTENER_PRESENCE_MS / 2) {
      await em.nativeUpdate(Destination, { id: served.id, accountId }, { listenerSeenAt: new Date() });
    }
    return true;
  }

  /** Every poll: the endpoint still there, then a claim (retries come due this way). */
  #schedulePoll(): void {
    if (this.#closed) return;
    this.#pollTimer = setTimeout(() => {
      this.#cursor = null; // the walk starts over (see #claim)
      this.#stillThere()
        .then((open) => open && this.#fill())
        .catch((error: unknown) => this.#options.onError(error))
        .finally(() => this.#schedulePoll());
    }, this.#options.pollIntervalMs);
    this.#pollTimer.unref();
  }

  #onEventStored(event: StoredEvent): void {
    // A delivery ingest handed to a session here needs no claim.
    if (event.endpointId === this.#endpoint.id && !event.claimedHere) this.#fill();
  }

  /** Another process stored an event: a serving session claims now rather than at the next poll. */
  #onEventStoredElsewhere(summary: EventSummary): void {
    if (summary.endpoint_id === this.#endpoint.id) this.#fill();
  }

  /**
   * A mirroring session is shown each delivery of the endpoint's first destination as it
   * is sent, by whichever process sends it (copies.ts): the request that destination got.
   */
  #watchMirror(destinationId: string): void {
    const unregister = this.#options.listeners.add(destinationId, { wake: () => undefined, reserve: () => null, mirror: (message) => this.#mirror(message) });
    const unwatch = this.#options.hub.watchMirror(destinationId);
    this.#unregister = () => {
      unregister();
      unwatch();
    };
  }

  /**
   * One claim for the claimer: it walks on from where the previous one ended (the
   * cursor), so that a backlog's claims do not step over the finished deliveries before it
   * again and again (claim-listen.ts); the poll starts the walk over, for deliveries given
   * back or whose lease ran out behind the cursor.
   */
  async #claim(limit: number): Promise<ClaimedDelivery[]> {
    const fromStart = this.#cursor === null;
    const { deliveries, cursor } = await claimForListener(this.#options.orm, {
      destinationId: this.#endpoint.destinationId!,
      accountId: this.#endpoint.accountId,
      fromEventId: this.#fromEventId,
      limit,
      leaseMs: this.#options.leaseMs,
      eventTypes: this.#options.eventTypes,
      after: this.#cursor,
    });
    if (cursor) this.#cursor = cursor;
    if (signals.hasSubscribers) this.#signal({ kind: 'claimed', sessionId: this.sessionId, fromStart, eventIds: deliveries.map((delivery) => delivery.id) });
    return deliveries;
  }

  /** Claims due deliveries while there is room (calls coalesce: Claimer.wake). */
  #fill(): void {
    if (this.#serving && !this.#closed) this.#claimer.wake();
  }

  /**
   * A slot for a new event's delivery that ingest in this process is about to store: it
   * is stored claimed under this session's lease and handed here at once, with no claim
   * statement (insert-events.ts). None while a backlog may be waiting or there is no room
   * (Claimer.reserve).
   */
  #reserve(eventId: string): ReservedSlot | null {
    // A session that takes some types only claims through the queue, which knows each event's type.
    if (this.#closed || this.#options.eventTypes !== null) return null;
    return this.#claimer.reserve(this.#endpoint.destinationId!, eventId);
  }

  /**
   * Makes the attempt of a delivery that holds one of the claimer's slots. Its slot is
   * free as soon as the listener has answered: the local server is done with it, and the
   * result is recorded (group commit, with the lease still held) while the next delivery
   * goes out. Once recorded, the listener is told what its answer decided (#sendRecorded).
   */
  async #deliver(delivery: ClaimedDelivery, free: () => void): Promise<void> {
    let answered: DeliveryMessage | undefined;
    try {
      const outcome = await attemptDelivery(this.#options.delivery, delivery, async (outgoing) => {
        const message = deliveryMessage(outgoing, `${this.sessionId}.${++this.#deliveryCounter}`);
        const forwardSpan = this.#options.delivery.tracing?.startListenForward(outgoing, this.sessionId, message.delivery_id);
        const answer = await this.#send(outgoing, message);
        forwardSpan?.end(answer);
        if (answer !== null) answered = message;
        return answer;
      }, free);
      if (answered) this.#sendRecorded(answered, delivery.trigger, outcome);
    } catch (error) {
      this.#options.onError(error);
      if (answered) this.#sendRecorded(answered, delivery.trigger, null);
    }
  }

  /**
   * Tells the listener what the relay made of its answer: the delivery's status after and
   * when the next attempt is due (null outcome: recording failed; the lease runs out and
   * the delivery is offered again).
   */
  #sendRecorded(sent: Pick<DeliveryMessage, 'delivery_id' | 'attempt'> & { event: { id: string } }, trigger: AttemptTrigger, outcome: AttemptOutcome | null, late = false): void {
    if (this.#closed) return;
    const held = outcome?.recorded?.held === true;
    this.#outbox.send({
      type: 'recorded',
      version: STREAM_PROTOCOL_VERSION,
      delivery_id: sent.delivery_id,
      event_id: sent.event.id,
      attempt: sent.attempt,
      trigger,
      attempt_recorded: outcome?.recorded !== undefined,
      status: held ? outcome!.next.status : null,
      event_status: held ? outcome!.recorded!.eventStatus : null,
      next_attempt_at: held && outcome!.next.nextAttemptAtMs !== null ? new Date(outcome!.next.nextAttemptAtMs).toISOString() : null,
      error: held ? null
        : outcome?.recorded === undefined ? 'the relay could not record the result; the delivery is offered again when its lease runs out'
          : late ? 'the delivery was offered again after the connection was lost; that offer decides it'
            : 'the answer came after the delivery\'s lease ran out; the delivery is offered again',
    });
  }

  /** Whether this session takes events of this type (--events). */
  #takesType(type: string | null): boolean {
    const types = this.#options.eventTypes;
    return types === null || (type !== null && types.includes(type));
  }

  /** The transport: one `delivery` message out, the listener's `result` back (null if it went away first). */
  #send(outgoing: OutgoingDelivery, message: DeliveryMessage): Promise<SendResult | null> {
    if (this.#closed) return Promise.resolve(null);
    const deliveryId = message.delivery_id;
    return new Promise((resolve) => {
      this.#waiting.set(deliveryId, { resolve });
      if (!this.#outbox.send(message)) {
        this.#waiting.delete(deliveryId);
        resolve(null);
        return;
      }
      this.#options.listeners.mirror(this.#endpoint.destinationId!, this.#handle, message);
      this.#options.hub.copySent(this.#endpoint.accountId, this.#endpoint.destinationId!, message);
    });
  }

  /** Shows another session's delivery (or, when mirroring, a new event): its result is not recorded. */
  #mirror(message: DeliveryMessage): void {
    if (this.#closed || !this.#takesType(message.event.type)) return;
    if (this.#mirrorQueue.length >= MIRROR_QUEUE_MAX) return;
    this.#mirrorQueue.push(message);
    this.#pumpMirror();
  }

  #pumpMirror(): void {
    // Mirror copies share the listener's in-flight allowance with its own deliveries.
    while (this.#mirrorQueue.length > 0 && this.#mirrorsOut + this.#waiting.size < this.#options.maxInFlight) {
      const message = this.#mirrorQueue.shift()!;
      const deliveryId = `${this.sessionId}.m${++this.#deliveryCounter}`;
      // The local server can tell a copy from the deliveries its answers decide.
      const copy = { ...message, delivery_id: deliveryId, mirror: true as const, headers: { ...message.headers, [MIRROR_HEADER]: 'true' } };
      if (!this.#outbox.send(copy)) return;
      this.#mirrorIds.add(deliveryId);
      this.#mirrorsOut += 1;
    }
  }

  #onMessage(text: string | null): void {
    const parsed = text === null ? { ok: false as const, problem: 'binary message; send JSON text' } : parseClientMessages(text);
    if (!parsed.ok) {
      this.#outbox.flush();
      closeWithError(this.#options.socket, STREAM_CLOSE_CODES.protocolError, new HookError(STREAM_PROTOCOL_ERROR, [parsed.problem]));
      return;
    }
    for (const result of parsed.messages) this.#onResult(result);
  }

  #signal(signal: ListenSessionSignal): void {
    signals.publish(signal);
  }

  #onResult(result: ResultMessage): void {
    if (signals.hasSubscribers) {
      const as = this.#mirrorIds.has(result.delivery_id) ? 'mirror' : result.late ? 'late' : this.#waiting.has(result.delivery_id) ? 'answer' : 'unknown';
      this.#signal({ kind: 'result', sessionId: this.sessionId, deliveryId: result.delivery_id, as });
    }
    if (this.#mirrorIds.delete(result.delivery_id)) {
      this.#mirrorsOut -= 1;
      this.#pumpMirror();
      return;
    }
    if (result.late) {
      this.#recordLate(result, result.late).catch((error: unknown) => this.#options.onError(error));
      return;
    }
    const waiting = this.#waiting.get(result.delivery_id);
    if (!waiting) return; // answered twice: nothing to do
    this.#waiting.delete(result.delivery_id);
    waiting.resolve(listenerAnswer(result));
    this.#pumpMirror();
  }

  /**
   * A late result: the listener's answer to a delivery of this destination that an earlier
   * session sent (its connection was lost first). Recorded as the attempt it was
   * (recordLateAnswer); the listener is told what it decided, under the delivery id it knows.
   */
  async #recordLate(result: ResultMessage, late: NonNullable<ResultMessage['late']>): Promise<void> {
    if (!this.#serving) return; // a mirror copy's answer: never recorded
    const [current] = await readDeliveries(this.#options.orm, this.#endpoint.accountId, [{ eventId: late.event_id, destinationId: this.#endpoint.destinationId! }]);
    const sent = { delivery_id: result.delivery_id, attempt: late.attempt, event: { id: late.event_id } };
    if (!current || current.accountId !== this.#endpoint.accountId) {
      this.#sendRecorded(sent, 'listen', null, true);
      return;
    }
    const answer = listenerAnswer(result);
    const outcome = await recordLateAnswer(this.#options.delivery, current, answer, late.attempt, new Date(late.forwarded_at)).catch((error: unknown) => {
      this.#options.onError(error);
      return null;
    });
    this.#sendRecorded(sent, current.trigger, outcome, true);
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#pollTimer) clearTimeout(this.#pollTimer);
    this.#claimer.close();
    this.#unsubscribe?.();
    this.#unregister?.();
    // Unanswered deliveries go back untried: the next listener claims them.
    for (const waiting of this.#waiting.values()) waiting.resolve(null);
    this.#waiting.clear();
  }
}

/**
 * A listener's result as the attempt's answer: its local server's status and kind, or,
 * without one, `network_error` (the stream protocol carries only the error's words, for
 * people: a `cli` destination's attempts join no issue); its text kept as an answer's is
 * (core's keptResponseBody).
 */
function listenerAnswer(result: ResultMessage): SendResult {
  return {
    status: result.status,
    kind: result.status === null ? 'network_error' : answerKind(result.status),
    body: result.response_body ? keptResponseBody(result.response_body) : null,
    error: result.error ? keptResponseBody(result.error) : null,
    retryAfterMs: null,
    durationMs: result.duration_ms,
  };
}
