/**
 * The one module that makes a delivery attempt, whatever started it (a worker's claim,
 * ingest's shortcut, a replay, a `hook listen` session) and wherever it goes (a URL, or a
 * listener through its session): prepare it (the destination's transformation and
 * filter, see prepare.ts), sign the bytes sent, hand them to the destination's
 * transport, and record the result with the delivery's next state in one statement
 * (AttemptRecorder, record-results.ts).
 */
import {
  boundHeaders, forwardableHeaders, newId, signPayloadWithSecrets, storedRequestBody, stateAfterAttempt, type AttemptKind, type EventStatus, type IssueKind, type NextState, type StreamAttempt,
  type StreamAttemptDestination,
} from '@hook/core';
import { afterOrderedResult, releaseLease, type AttemptRecorder, type ClaimedDelivery, type DeliveryResult, type DestinationHealth, type OrderedOutcome, type Orm } from '@hook/db';
import type { QueuePublisher } from './queues/index.ts';
import type { TransformPool } from '../transformations/pool.ts';
import { prepareDelivery, preparationOf, transformedUrl, type PreparedDelivery, type TransformedRequest } from './prepare.ts';
import type { DeliverySender, SendResult } from './sender.ts';
import type { DeliveryTracing } from '../tracing.ts';

/** A delivery ready to go out: signed headers and the bytes to send. */
export interface OutgoingDelivery {
  delivery: ClaimedDelivery;
  headers: Record<string, string>;
  body: Buffer;
  /** What the transformation made of the request (null: the stored one, untouched). */
  request: TransformedRequest | null;
  newType?: { type: string | null };
}

/**
 * Takes an outgoing delivery to its destination and brings back the answer. Null: it
 * reached nobody (a listener that went away before answering): the delivery is given
 * back untried, for the next claim.
 */
export type Transport = (outgoing: OutgoingDelivery) => Promise<SendResult | null>;

export interface AttemptContext {
  orm: Orm;
  sender: DeliverySender;
  /** Publishes to queue destinations' brokers (absent: their attempts fail, saying so). */
  queues?: QueuePublisher | undefined;
  recorder: AttemptRecorder;
  retryScheduleMs: readonly number[];
  /** Runs destinations' transformations off the event loop (absent: a destination with one fails its deliveries with transformation_failed). */
  transformRunner?: TransformPool | undefined;
  /** Called after an attempt was recorded and moved its delivery on (the live stream shows it). */
  onAttemptFinished?: (finished: FinishedAttempt) => void;
  /** Called with each delivery to a URL as it goes out, prepared and signed (mirror copies: stream/copies.ts). */
  onSend?: (outgoing: OutgoingDelivery) => void;
  /** Called when the destination's filter skipped a delivery (no attempt is recorded), with the time the filter took in ms. */
  onDeliveryFiltered?: (durationMs: number) => void;
  now?: () => number;
  random?: () => number;
  /** Traces each attempt (docs/deployment.md#tracing); absent when the relay does not trace. */
  tracing?: DeliveryTracing | undefined;
  /**
   * A slot for the next delivery of a key whose delivery `done` was just done (a worker
   * with one free: worker.ts), or null: the next is then leased under `lease` and handed
   * to `start` (null: none was to be had, and the slot goes back). Absent, or null: the
   * next is made due for any claim.
   */
  slotForNextInKey?: ((done: ClaimedDelivery) => NextInKeySlot | null) | undefined;
}

/** A slot held for a key's next delivery (AttemptContext.slotForNextInKey). */
export interface NextInKeySlot {
  lease: { token: string; ms: number };
  start(next: ClaimedDelivery | null): void;
}

/** A recorded attempt, as the live stream announces it. */
export interface FinishedAttempt {
  accountId: string;
  endpointId: string;
  eventId: string;
  destinationId: string;
  /** Where it went (the stream names it on each attempt line). */
  destination: StreamAttemptDestination;
  /** The delivery's status after (its way to this destination). */
  deliveryStatus: EventStatus;
  /** The event's status after (the summary of its deliveries). */
  eventStatus: EventStatus;
  attempt: StreamAttempt;
  /** What the attempt came to (SendResult.kind): what metrics count it as. */
  kind: AttemptKind;
}

/** What an attempt came to: the answer (null: none was sent) and the delivery's next state. */
export interface AttemptOutcome {
  result: SendResult | null;
  next: NextState;
  /** For an answer that was recorded: whether the lease was still held (else nothing was recorded) and the event's status after. */
  recorded?: { held: boolean; eventStatus: EventStatus | null };
}

/** The headers of one delivery: the original ones that may travel, plus the signature headers. */
export function deliveryHeaders(delivery: Pick<ClaimedDelivery, 'id' | 'headers' | 'body' | 'secrets' | 'attemptCount'>, timestampSeconds: number): Record<string, string> {
  const signature = signPayloadWithSecrets(delivery.secrets, delivery.id, timestampSeconds, delivery.body);
  return {
    ...forwardableHeaders(delivery.headers),
    'webhook-id': delivery.id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signature,
    'x-hook-signature': signature,
    'x-hook-event-id': delivery.id,
    'x-hook-attempt': String(delivery.attemptCount + 1),
  };
}

/**
 * The transport of the destinations the workers deliver to: a signed POST to a URL (the
 * one a transformation may have extended), signed in and over TLS as the destination
 * says; or, to a queue destination, a message to its broker (queues/index.ts).
 */
export function destinationTransport(context: Pick<AttemptContext, 'sender' | 'queues'>): Transport {
  const { sender, queues } = context;
  return async ({ delivery, headers, body, request }) => {
    if (delivery.destinationType === 'url') {
      return sender.send(transformedUrl(delivery.destinationUrl!, request), headers, body, { destinationId: delivery.destinationId, auth: delivery.auth, tls: delivery.tls });
    }
    if (!queues || delivery.destinationTarget === null) {
      return { status: null, kind: 'broker_error', body: null, error: `this relay process cannot publish to ${delivery.destinationType} destinations`, retryAfterMs: null, durationMs: 0, requestHeaders: null };
    }
    const auth = delivery.auth?.type === 'basic' ? delivery.auth : null;
    return queues.publish({ url: delivery.destinationUrl!, target: delivery.destinationTarget, auth, tls: delivery.tls }, { body, headers });
  };
}

const UNTOUCHED: PreparedDelivery = { kind: 'send', request: null };
/** How long a delivery whose transformation found no free thread in time waits before it is claimed again. */
export const DEFERRED_DELIVERY_DELAY_MS = 5_000;

/**
 * Makes one attempt of a claimed delivery (see above). A failed transformation fails the
 * delivery at once (it would fail the same way again) with its attempt recorded; a
 * filter that does not match marks it filtered with no attempt; replays skip the filter.
 * A 410 disables the destination (record-results.ts).
 */
export function attemptDelivery(
  context: AttemptContext,
  delivery: ClaimedDelivery,
  transport: Transport = destinationTransport(context),
  onAnswered?: () => void,
  onThreadWait?: (waiting: boolean) => void,
): Promise<AttemptOutcome> {
  return context.tracing
    ? context.tracing.traceAttempt(delivery, transport, (traced) => makeAttempt(context, delivery, traced, onAnswered, onThreadWait))
    : makeAttempt(context, delivery, transport, onAnswered, onThreadWait);
}

/**
 * One attempt (see attemptDelivery), through the transport given. `onAnswered`: the
 * destination has answered and the result is about to be recorded (the caller's slot is
 * free: recording needs none). `onThreadWait`: it waits for a transformation thread (true),
 * or no longer (false): the caller may lend its slot out meanwhile (claimer.ts).
 */
async function makeAttempt(
  context: AttemptContext,
  delivery: ClaimedDelivery,
  transport: Transport,
  onAnswered: (() => void) | undefined,
  onThreadWait: ((waiting: boolean) => void) | undefined,
): Promise<AttemptOutcome> {
  const now = context.now ?? Date.now;
  const startedAt = new Date(now());
  const prepared = await prepare(context, delivery, delivery.trigger !== 'replay', onThreadWait);
  const unchanged = { status: delivery.status, autoAttempts: delivery.autoAttempts, nextAttemptAtMs: null };
  if (prepared.kind === 'deferred') {
    // Its account's transformations are backed up (or past their CPU allowance): the
    // delivery goes back to the queue untried, due a little later, so its lease never
    // runs out while it waits.
    const retryAtMs = now() + DEFERRED_DELIVERY_DELAY_MS;
    await releaseLease(context.orm, delivery, new Date(retryAtMs));
    return { result: null, next: { ...unchanged, nextAttemptAtMs: retryAtMs } };
  }
  if (prepared.kind === 'filtered') {
    const next: NextState = { status: 'filtered', autoAttempts: delivery.autoAttempts, nextAttemptAtMs: null };
    const recorded = await record(context, delivery, { attempt: null, next, health: null, ...(prepared.newType ? { newType: prepared.newType } : {}) });
    if (recorded.held) await moveKeyOn(context, delivery, next);
    context.onDeliveryFiltered?.(now() - startedAt.getTime());
    return { result: null, next };
  }
  let result: SendResult;
  let next: NextState;
  let health: DestinationHealth = null;
  let exchange: Exchange | null = null;
  if (prepared.kind === 'failed') {
    result = { status: null, kind: 'transformation_error', body: null, error: prepared.error, retryAfterMs: null, durationMs: now() - startedAt.getTime() };
    next = prepared.retryable
      ? stateAfterAttempt({ status: delivery.status, autoAttempts: delivery.autoAttempts }, delivery.trigger, { ok: false, retryAfterMs: null }, context.retryScheduleMs, now(), context.random ?? Math.random)
      : { status: 'failed', autoAttempts: delivery.autoAttempts + (delivery.trigger === 'replay' ? 0 : 1), nextAttemptAtMs: null };
  } else {
    const outgoing = signed(delivery, prepared, Math.floor(startedAt.getTime() / 1000));
    if (delivery.destinationType === 'url') context.onSend?.(outgoing);
    const answer = await transport(outgoing);
    if (answer === null) {
      await releaseLease(context.orm, delivery);
      return { result: null, next: unchanged };
    }
    onAnswered?.();
    result = answer;
    exchange = exchangeOf(outgoing, answer);
    const ok = succeeded(result);
    health = ok ? 'ok' : 'failed';
    next = stateAfterAttempt(
      { status: delivery.status, autoAttempts: delivery.autoAttempts },
      delivery.trigger,
      { ok, retryAfterMs: result.retryAfterMs },
      context.retryScheduleMs,
      now(),
      context.random ?? Math.random,
    );
  }
  const attemptId = newId('attempt');
  const recorded = await record(context, delivery, {
    ...(prepared.kind === 'send' && prepared.newType ? { newType: prepared.newType } : {}),
    attempt: { id: attemptId, startedAt, durationMs: result.durationMs, responseStatus: result.status, responseBody: result.body, error: result.error, failureKind: failureKindOf(result), ...exchange },
    next,
    health,
  });
  if (recorded.held) {
    await moveKeyOn(context, delivery, next);
    announce(context, delivery, { id: attemptId, startedAt, result, next, eventStatus: recorded.eventStatus! });
  }
  return { result, next, recorded: { held: recorded.held, eventStatus: recorded.eventStatus } };
}

/** What an attempt keeps of the request it sent and of the answer's headers (DeliveryResult.attempt). */
type Exchange = Pick<NonNullable<DeliveryResult['attempt']>, 'requestHeaders' | 'responseHeaders' | 'requestBody'>;

/**
 * The exchange as the attempt keeps it, bounded by core (attempts.ts). The request's headers
 * are what the transport says it sent (the HTTP sender: with the destination's credentials
 * redacted), else the outgoing ones; its body only when a transformation changed it: the
 * event's own bytes are stored once, with the event.
 */
function exchangeOf(outgoing: OutgoingDelivery, answer: SendResult): Exchange {
  const sentHeaders = answer.requestHeaders === undefined ? outgoing.headers : answer.requestHeaders;
  const transformed = sentHeaders !== null && outgoing.request !== null && !outgoing.body.equals(outgoing.delivery.body);
  return {
    requestHeaders: sentHeaders === null ? null : boundHeaders(sentHeaders),
    responseHeaders: answer.responseHeaders ? boundHeaders(answer.responseHeaders) : null,
    requestBody: transformed ? storedRequestBody(outgoing.body) : null,
  };
}

/** Whether an answer is a success: a 2xx, or a broker's acknowledgement (its kind, set where it was made). */
function succeeded(result: SendResult): boolean {
  return result.kind === 'ok';
}

/** The kind an attempt is recorded with, and its issue grouped by: null for a success. */
function failureKindOf(result: SendResult): IssueKind | null {
  return result.kind === 'ok' ? null : result.kind;
}

/**
 * An ordered destination's key after one of its deliveries moved on (ordering.ts):
 * delivered or filtered, the next of its key goes; given up by its automatic attempts,
 * it holds the key (on_give_up block) or the next goes (skip). A replay that failed again
 * changes nothing: a key it held stays held.
 */
async function moveKeyOn(context: AttemptContext, delivery: ClaimedDelivery, next: NextState): Promise<void> {
  if (delivery.orderingKey === null) return;
  const gaveUp = next.status === 'failed' && delivery.trigger !== 'replay';
  const outcome: OrderedOutcome = next.status === 'delivered' || next.status === 'filtered' ? 'done'
    : gaveUp ? (delivery.onGiveUp === 'block' ? 'blocked' : 'done')
    : 'open';
  const slot = outcome === 'done' ? (context.slotForNextInKey?.(delivery) ?? null) : null;
  let following: ClaimedDelivery | null = null;
  try {
    following = await afterOrderedResult(
      context.orm,
      { id: delivery.id, destinationId: delivery.destinationId, accountId: delivery.accountId, orderingKey: delivery.orderingKey },
      outcome,
      slot?.lease,
    );
  } finally {
    slot?.start(following);
  }
}

/** Tells the live stream (and metrics) about an attempt that moved its delivery on. */
function announce(context: AttemptContext, delivery: ClaimedDelivery, made: { id: string; startedAt: Date; result: SendResult; next: NextState; eventStatus: EventStatus }): void {
  context.onAttemptFinished?.({
    accountId: delivery.accountId,
    endpointId: delivery.endpointId,
    eventId: delivery.id,
    destinationId: delivery.destinationId,
    destination: delivery.destinationType === 'cli' ? { id: delivery.destinationId, type: 'cli' } : { id: delivery.destinationId, type: delivery.destinationType, url: delivery.destinationUrl! },
    deliveryStatus: made.next.status,
    eventStatus: made.eventStatus,
    attempt: {
      id: made.id,
      n: delivery.attemptCount + 1,
      trigger: delivery.trigger,
      started_at: made.startedAt.toISOString(),
      duration_ms: Math.round(made.result.durationMs),
      response_status: made.result.status,
      error: made.result.error,
    },
    kind: made.result.kind,
  });
}

/**
 * Prepares the attempt where its preparation, decided here once (preparationOf), says: not
 * at all, on the event loop, or on a transformation thread. Without a pool (a process with
 * no sandbox) the sandbox's work runs here, and a transformation fails with
 * transformation_failed (prepareDelivery).
 */
function prepare(context: AttemptContext, delivery: ClaimedDelivery, applyFilter: boolean, onThreadWait?: (waiting: boolean) => void): Promise<PreparedDelivery> {
  const how = preparationOf(delivery, applyFilter);
  if (how === 'untouched') return Promise.resolve(UNTOUCHED);
  if (how === 'sandbox' && context.transformRunner) {
    if (!onThreadWait) return context.transformRunner.prepare(delivery, applyFilter, delivery.accountId);
    onThreadWait(true);
    return context.transformRunner.prepare(delivery, applyFilter, delivery.accountId).finally(() => onThreadWait(false));
  }
  return prepareDelivery(undefined, delivery, applyFilter);
}

/** The prepared request with its signature headers. */
function signed(delivery: ClaimedDelivery, prepared: Extract<PreparedDelivery, { kind: 'send' }>, timestampSeconds: number): OutgoingDelivery {
  const sent = prepared.request;
  const body = sent?.body ?? delivery.body;
  const headers = deliveryHeaders({ id: delivery.id, headers: sent?.headers ?? delivery.headers, body, secrets: delivery.secrets, attemptCount: delivery.attemptCount }, timestampSeconds);
  return { delivery, headers, body, request: sent, ...(prepared.newType ? { newType: prepared.newType } : {}) };
}

function record(
  context: AttemptContext,
  delivery: ClaimedDelivery,
  outcome: { attempt: DeliveryResult['attempt']; next: NextState; health: DestinationHealth; newType?: { type: string | null } },
) {
  return context.recorder.record({
    delivery,
    attempt: outcome.attempt,
    next: { status: outcome.next.status, autoAttempts: outcome.next.autoAttempts, nextAttemptAt: outcome.next.nextAttemptAtMs === null ? null : new Date(outcome.next.nextAttemptAtMs) },
    health: outcome.health,
    ...(outcome.newType ? { newType: outcome.newType } : {}),
  });
}

/** A lease id no delivery holds: a late answer recorded with it moves nothing. */
const NO_LEASE = 'late';

/**
 * Records an answer that came after the transport had given its delivery up: a `hook
 * listen` whose connection was lost while it forwarded attempt `attempt` (stopped, say)
 * and that sent the answer on its next connection (docs/listen.md#a-stalled-listener).
 * The request reached the receiver, so it is an attempt, recorded either way. It decides
 * the delivery only if nothing else did meanwhile (no attempt since, and nobody holds it:
 * the claim that would send it again has not happened); otherwise the delivery goes on
 * as it is, and `recorded.held` is false.
 */
export async function recordLateAnswer(context: AttemptContext, current: ClaimedDelivery, answer: SendResult, attempt: number, startedAt: Date): Promise<AttemptOutcome> {
  const now = context.now ?? Date.now;
  const ok = succeeded(answer);
  const open = current.status === 'pending' || current.status === 'retrying' || current.trigger === 'replay';
  const decides = !current.leaseId && current.attemptCount === attempt - 1 && open;
  const next: NextState = decides
    ? stateAfterAttempt({ status: current.status, autoAttempts: current.autoAttempts }, current.trigger, { ok, retryAfterMs: answer.retryAfterMs }, context.retryScheduleMs, now(), context.random ?? Math.random)
    : { status: current.status, autoAttempts: current.autoAttempts, nextAttemptAtMs: null };
  const delivery: ClaimedDelivery = { ...current, attemptCount: attempt - 1, leaseId: decides ? '' : NO_LEASE };
  const attemptId = newId('attempt');
  const recorded = await record(context, delivery, {
    attempt: { id: attemptId, startedAt, durationMs: answer.durationMs, responseStatus: answer.status, responseBody: answer.body, error: answer.error, failureKind: failureKindOf(answer) },
    next,
    health: decides ? (ok ? 'ok' : 'failed') : null,
  });
  if (recorded.held) announce(context, delivery, { id: attemptId, startedAt, result: answer, next, eventStatus: recorded.eventStatus! });
  return { result: answer, next, recorded: { held: recorded.held, eventStatus: recorded.eventStatus } };
}
