import type { WebSocket } from 'ws';
import {
  ENDPOINT_GONE, firstIdAt, HookError, idTimeMs, newId, newUlid, parseClientMessage, STREAM_PROTOCOL_ERROR, stateAfterAttempt, STREAM_CLOSE_CODES, STREAM_PROTOCOL_VERSION, type ResultMessage,
} from '@hook/core';
import { Endpoint, listenBacklog, openSigningSecrets, recordFiltered, type ListenAttemptRecorder, type ListenEvent, type Orm } from '@hook/db';
import type { EndpointFilter, EventStatus } from '@hook/core';
import { deliveryHeaders } from '../delivery/attempt.ts';
import type { PreparedDelivery } from '../delivery/prepare.ts';
import { prepareWith, type TransformPool } from '../transformations/pool.ts';
import { RESPONSE_BODY_MAX_BYTES } from '../delivery/sender.ts';
import { eventSummary, type EventSummary, type StreamHub } from './hub.ts';
import { closeWithError, sendMessage } from './socket.ts';

/** The endpoint a session listens on, as loaded when it connected. */
export interface ListenEndpoint {
  id: string;
  accountId: string;
  name: string;
  url: string;
  destinationType: 'cli' | 'url';
}

export interface ListenSessionOptions {
  socket: WebSocket;
  orm: Orm;
  hub: StreamHub;
  recorder: ListenAttemptRecorder;
  endpoint: ListenEndpoint;
  maxInFlight: number;
  /** Offer only events received from now on. */
  skipMissed: boolean;
  retryScheduleMs: readonly number[];
  heartbeatIntervalMs: number;
  /** How often to look in the database for due retries and events other processes stored. */
  pollIntervalMs: number;
  /** Runs the endpoint's transformation, if it has one (read when used). */
  transformRunner?: () => TransformPool | undefined;
  onError: (error: unknown) => void;
}

interface Offered {
  event: ListenEvent;
  attempt: number;
  startedAtMs: number;
  /** A type the endpoint's transformation set, stored with the answer. */
  newType?: { type: string | null };
}

/**
 * How far behind the newest event it has offered a session looks again for pending ones:
 * events are stored in batches, so one may commit a little after a newer one.
 */
const PENDING_SCAN_OVERLAP_MS = 2_000;
/** How often a session reads pending events from the very start again, for any that committed later still. */
const PENDING_FULL_RESCAN_MS = 30_000;
/** How long to remember when an event's answer was recorded; longer than any backlog read takes. */
const ANSWERED_MEMORY_MS = 60_000;
/** Most new events a mirroring session queues while its listener is busy; more are dropped and said so. */
const MIRROR_QUEUE_MAX = 10_000;

/**
 * One `hook listen` connection. For an endpoint with a CLI destination the listener is
 * the delivery: the session offers pending and due events oldest first (or only new
 * ones, with skip_missed), at most `maxInFlight` unanswered, and records each answer as
 * an attempt that moves the event on (delivered, retrying on the schedule, failed).
 * Nothing is claimed, so several listeners each get every event, and a listener that
 * vanishes leaves its unanswered events as they were, to be offered again.
 * For an endpoint with a URL destination the session mirrors new events and records nothing.
 */
export class ListenSession {
  readonly #options: ListenSessionOptions;
  readonly #endpoint: ListenEndpoint;
  readonly #mirror: boolean;
  readonly #since: Date | null;
  readonly #inFlight = new Map<string, Offered>();
  /** Event ids offered and not yet recorded. */
  readonly #offered = new Set<string>();
  /**
   * Event ids recently answered, with when the answer was recorded. A backlog read that
   * started before that may still show the event as it was, so its copy is not offered.
   */
  readonly #answeredAtMs = new Map<string, number>();
  readonly #mirrorQueue: ListenEvent[] = [];
  #secrets: string[] = [];
  /** The endpoint's transformation and filter, reloaded with its secrets (see #refreshEndpoint). */
  #transformationCode: string | null = null;
  #filter: EndpointFilter | null = null;
  /** Offers whose transformation or filter is still running: they hold a slot. */
  #preparing = 0;
  /** Every pending event below this id has been offered in this session (see listenBacklog). */
  #pendingFromId = '';
  #lastFullRescanMs = performance.now();
  #deliveryCounter = 0;
  #filling = false;
  #fillAgain = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  readonly sessionId = `ses_${newUlid()}`;

  constructor(options: ListenSessionOptions) {
    this.#options = options;
    this.#endpoint = options.endpoint;
    this.#mirror = options.endpoint.destinationType === 'url';
    this.#since = options.skipMissed || this.#mirror ? new Date() : null;
  }

  /** Says hello and starts offering. Call once, right after the socket opened. */
  async start(): Promise<void> {
    const { socket } = this.#options;
    socket.on('message', (data, isBinary) => this.#onMessage(isBinary ? null : data.toString()));
    socket.on('close', () => this.#close());
    socket.on('error', () => this.#close());
    this.#unsubscribe = this.#options.hub.subscribe({
      accountId: this.#endpoint.accountId,
      onEvent: (event) => this.#onEventStored(event),
      // Another process stored an event: read the backlog now rather than at the next poll.
      // (A mirror shows only this process's new events, whose bodies it has.)
      ...(this.#mirror ? {} : { onEventSummary: (summary: EventSummary) => this.#onEventElsewhere(summary) }),
    });
    if (!(await this.#refreshEndpoint())) return;
    sendMessage(socket, {
      type: 'hello',
      version: STREAM_PROTOCOL_VERSION,
      mode: 'listen',
      account_id: this.#endpoint.accountId,
      session_id: this.sessionId,
      heartbeat_interval_ms: this.#options.heartbeatIntervalMs,
      endpoint: { id: this.#endpoint.id, name: this.#endpoint.name, url: this.#endpoint.url, destination_type: this.#endpoint.destinationType, mirror: this.#mirror },
      max_in_flight: this.#options.maxInFlight,
    });
    this.#schedulePoll();
    this.#fill();
  }

  get #room(): number {
    return this.#options.maxInFlight - this.#inFlight.size - this.#preparing;
  }

  /** Reloads the endpoint's secrets and checks it is still there to listen on; closes the session if not. */
  async #refreshEndpoint(): Promise<boolean> {
    const endpoint = await this.#options.orm.em.fork().findOne(Endpoint, { id: this.#endpoint.id, deletedAt: null });
    if (this.#closed) return false;
    if (!endpoint || endpoint.status === 'disabled') {
      closeWithError(this.#options.socket, STREAM_CLOSE_CODES.endpointGone, new HookError(ENDPOINT_GONE, [this.#endpoint.id]));
      return false;
    }
    if (endpoint.destinationType !== this.#endpoint.destinationType) {
      // Listening changes meaning (deliver vs mirror): the client reconnects and gets the new mode.
      this.#options.socket.close(1012, 'destination changed');
      return false;
    }
    const previousValid = endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt.getTime() > Date.now();
    this.#secrets = openSigningSecrets(this.#options.orm, endpoint.secret, previousValid ? endpoint.previousSecret! : null);
    this.#transformationCode = endpoint.transformationCode ?? null;
    this.#filter = (endpoint.filter ?? null) as EndpointFilter | null;
    return true;
  }

  #schedulePoll(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      if (performance.now() - this.#lastFullRescanMs >= PENDING_FULL_RESCAN_MS) {
        this.#lastFullRescanMs = performance.now();
        this.#pendingFromId = '';
      }
      this.#refreshEndpoint()
        .then((open) => open && this.#fill())
        .catch((error: unknown) => this.#options.onError(error))
        .finally(() => this.#schedulePoll());
    }, this.#options.pollIntervalMs);
    this.#timer.unref();
  }

  #onEventStored(event: ListenEvent): void {
    if (event.endpointId !== this.#endpoint.id || this.#closed) return;
    if (this.#mirror) {
      if (this.#mirrorQueue.length >= MIRROR_QUEUE_MAX) return;
      this.#mirrorQueue.push(event);
      this.#pumpMirror();
      return;
    }
    // A new event goes out at once when there is room; otherwise the backlog read finds it when there is.
    if (this.#room > 0) this.#offer(event);
  }

  #onEventElsewhere(summary: EventSummary): void {
    if (summary.endpoint_id !== this.#endpoint.id || this.#closed || this.#room <= 0) return;
    this.#fill();
  }

  #pumpMirror(): void {
    while (this.#room > 0 && this.#mirrorQueue.length > 0) this.#offer(this.#mirrorQueue.shift()!);
  }

  /** Offers pending and due events from the database while there is room. Calls coalesce. */
  #fill(): void {
    if (this.#mirror || this.#closed) return;
    if (this.#filling) {
      this.#fillAgain = true;
      return;
    }
    this.#filling = true;
    void (async () => {
      try {
        do {
          this.#fillAgain = false;
          const room = this.#room;
          if (room <= 0) break;
          const readStartedAtMs = performance.now();
          for (const [id, atMs] of this.#answeredAtMs) if (atMs < readStartedAtMs - ANSWERED_MEMORY_MS) this.#answeredAtMs.delete(id);
          const excludeIds = [...this.#offered];
          const events = await listenBacklog(this.#options.orm, {
            endpointId: this.#endpoint.id,
            since: this.#since,
            pendingFromId: this.#pendingFromId,
            excludeIds,
            limit: room,
          });
          // Every pending event from the floor up to the newest pending one this read
          // returned is offered now (or already was); after a short read, up to the newest
          // in flight too. Move the floor there, less a margin for batches that committed
          // out of order (and a full rescan now and then catches any later still).
          const pendingRead = events.filter((event) => event.status === 'pending').map((event) => event.id);
          const covered = events.length < room ? [...excludeIds, ...pendingRead] : pendingRead;
          const newest = covered.reduce((max, id) => (id > max ? id : max), '');
          if (newest) {
            const floor = firstIdAt('event', idTimeMs(newest) - PENDING_SCAN_OVERLAP_MS);
            if (floor > this.#pendingFromId) this.#pendingFromId = floor;
          }
          for (const event of events) {
            if ((this.#answeredAtMs.get(event.id) ?? -Infinity) >= readStartedAtMs) continue; // read before its answer was recorded
            this.#offer(event);
          }
          if (events.length === room) this.#fillAgain = true;
        } while (this.#fillAgain && !this.#closed);
      } catch (error) {
        this.#options.onError(error);
      } finally {
        this.#filling = false;
      }
    })();
  }

  #offer(event: ListenEvent): void {
    if (this.#offered.has(event.id) || this.#room <= 0) return;
    if (this.#transformationCode === null && this.#filter === null) {
      this.#send(event, null);
      return;
    }
    // The endpoint's transformation and filter run first (docs/transformations.md); the slot is held meanwhile.
    this.#offered.add(event.id);
    this.#preparing += 1;
    const endpoint = { endpointId: this.#endpoint.id, endpointName: this.#endpoint.name, transformationCode: this.#transformationCode, filter: this.#filter };
    prepareWith(this.#options.transformRunner?.(), { ...event, ...endpoint }, true, this.#endpoint.accountId)
      .then((prepared) => {
        this.#preparing -= 1;
        this.#offered.delete(event.id);
        if (this.#closed) return;
        // No transformation thread was free in time: offered again when the backlog is next read from the start.
        if (prepared.kind === 'deferred') this.#pendingFromId = '';
        else if (prepared.kind === 'send') this.#send(event, prepared);
        else if (!this.#mirror) this.#settleUnsent(event, prepared);
        else this.#pumpMirror();
      })
      .catch((error: unknown) => {
        this.#preparing -= 1;
        this.#offered.delete(event.id);
        this.#options.onError(error);
      });
  }

  /** Sends one delivery message: the stored request, or what the transformation made of it. */
  #send(event: ListenEvent, prepared: Extract<PreparedDelivery, { kind: 'send' }> | null): void {
    const deliveryId = `${this.sessionId}.${++this.#deliveryCounter}`;
    const attempt = event.attemptCount + 1;
    const request = prepared?.request ?? null;
    const body = request?.body ?? event.body;
    const headers = deliveryHeaders({ id: event.id, headers: request?.headers ?? event.headers, body, secrets: this.#secrets, attemptCount: event.attemptCount }, Math.floor(Date.now() / 1000));
    const summary = eventSummary(event);
    const sent = sendMessage(this.#options.socket, {
      type: 'delivery',
      version: STREAM_PROTOCOL_VERSION,
      delivery_id: deliveryId,
      attempt,
      event: request === null ? summary : {
        ...summary,
        ...(prepared?.newType ? { type: prepared.newType.type } : {}),
        path: request.path, query: request.query, content_type: request.headers['content-type'] ?? null, size: body.length,
      },
      headers,
      body_base64: body.toString('base64'),
    });
    if (!sent) return;
    this.#offered.add(event.id);
    this.#inFlight.set(deliveryId, { event, attempt, startedAtMs: Date.now(), ...(prepared?.newType ? { newType: prepared.newType } : {}) });
  }

  /**
   * An event that will not be sent: its filter did not match (marked filtered, no attempt)
   * or its transformation failed (failed at once, with the attempt that says why).
   */
  #settleUnsent(event: ListenEvent, prepared: Exclude<PreparedDelivery, { kind: 'send' | 'deferred' }>): void {
    this.#offered.add(event.id);
    const nowMs = Date.now();
    const done = prepared.kind === 'filtered'
      ? recordFiltered(this.#options.orm, [{ eventId: event.id, leaseId: null, ...(prepared.newType ? { newType: prepared.newType } : {}) }]).then(() => undefined)
      : this.#options.recorder.record({
        id: newId('attempt'),
        n: event.attemptCount + 1,
        startedAt: new Date(nowMs),
        durationMs: 0,
        eventId: event.id,
        accountId: event.accountId,
        responseStatus: null,
        responseBody: null,
        error: storable(prepared.error),
        next: this.#unsentNext(event, prepared, nowMs),
      }).then(() => undefined);
    this.#settle(event.id, done);
  }

  /** A failed transformation fails the event at once; a lost sandbox thread (retryable) is retried on the schedule. */
  #unsentNext(event: ListenEvent, prepared: Extract<PreparedDelivery, { kind: 'failed' }>, nowMs: number): { status: EventStatus; autoAttempts: number; nextAttemptAt: Date | null } {
    if (!prepared.retryable) return { status: 'failed', autoAttempts: event.autoAttempts + 1, nextAttemptAt: null };
    const next = stateAfterAttempt({ status: event.status, autoAttempts: event.autoAttempts }, 'listen', { ok: false }, this.#options.retryScheduleMs, nowMs, Math.random);
    return { status: next.status, autoAttempts: next.autoAttempts, nextAttemptAt: next.nextAttemptAtMs === null ? null : new Date(next.nextAttemptAtMs) };
  }

  /**
   * Ends an offered event's turn once its outcome is recorded: it is no longer in flight,
   * and the next one can be offered. If recording failed the event is as it was, maybe
   * pending below the floor, so the backlog is read from the start again.
   */
  #settle(eventId: string, recorded: Promise<void>): void {
    recorded
      .catch((error: unknown) => {
        this.#pendingFromId = '';
        this.#options.onError(error);
      })
      .finally(() => {
        this.#offered.delete(eventId);
        this.#answeredAtMs.set(eventId, performance.now());
        this.#fill();
      });
  }

  #onMessage(text: string | null): void {
    const parsed = text === null ? { ok: false as const, problem: 'binary message; send JSON text' } : parseClientMessage(text);
    if (!parsed.ok) {
      closeWithError(this.#options.socket, STREAM_CLOSE_CODES.protocolError, new HookError(STREAM_PROTOCOL_ERROR, [parsed.problem]));
      return;
    }
    this.#onResult(parsed.message);
  }

  #onResult(result: ResultMessage): void {
    const offered = this.#inFlight.get(result.delivery_id);
    if (!offered) return; // answered twice, or from an earlier session: nothing to do
    this.#inFlight.delete(result.delivery_id);
    const { event } = offered;
    if (this.#mirror) {
      this.#offered.delete(event.id);
      this.#pumpMirror();
      return;
    }
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const nowMs = Date.now();
    const next = stateAfterAttempt({ status: event.status, autoAttempts: event.autoAttempts }, 'listen', { ok }, this.#options.retryScheduleMs, nowMs, Math.random);
    const attempt = {
      id: newId('attempt'),
      n: offered.attempt,
      startedAt: new Date(nowMs - Math.round(result.duration_ms)),
      durationMs: result.duration_ms,
    };
    const recorded = this.#options.recorder
      .record({
        ...attempt,
        ...(offered.newType ? { newType: offered.newType } : {}),
        eventId: event.id,
        accountId: event.accountId,
        responseStatus: result.status,
        responseBody: storable(result.response_body),
        error: storable(result.error),
        next: { status: next.status, autoAttempts: next.autoAttempts, nextAttemptAt: next.nextAttemptAtMs === null ? null : new Date(next.nextAttemptAtMs) },
      })
      .then((eventStatus) => {
        this.#options.hub.attemptFinished({
          accountId: event.accountId,
          endpointId: event.endpointId,
          eventId: event.id,
          eventStatus,
          attempt: {
            id: attempt.id,
            n: attempt.n,
            trigger: 'listen',
            started_at: attempt.startedAt.toISOString(),
            duration_ms: Math.round(attempt.durationMs),
            response_status: result.status,
            error: storable(result.error),
          },
        });
      });
    this.#settle(event.id, recorded);
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#unsubscribe?.();
    // Unanswered deliveries are simply not recorded: their events stay pending or retrying and are offered again.
    this.#inFlight.clear();
  }
}

/** Text a listener sent, as it can be stored: at most RESPONSE_BODY_MAX_BYTES, without NUL characters (PostgreSQL text cannot hold them). */
function storable(text: string | null | undefined): string | null {
  if (!text) return null;
  const bytes = Buffer.from(text, 'utf8');
  const kept = bytes.length <= RESPONSE_BODY_MAX_BYTES ? text : bytes.subarray(0, RESPONSE_BODY_MAX_BYTES).toString('utf8');
  return kept.replaceAll('\u0000', '\uFFFD');
}
