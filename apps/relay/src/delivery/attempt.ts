import { forwardableHeaders, newId, signPayloadWithSecrets, stateAfterAttempt, type EventStatus, type NextState, type StreamAttempt } from '@hook/core';
import { deferDelivery, disableEndpoint, recordFiltered, type AttemptRecorder, type ClaimedDelivery, type Orm } from '@hook/db';
import { prepareWith, type TransformPool } from '../transformations/pool.ts';
import { transformedUrl, type PreparedDelivery } from './prepare.ts';
import type { DeliverySender, SendResult } from './sender.ts';

export interface AttemptContext {
  orm: Orm;
  sender: DeliverySender;
  recorder: AttemptRecorder;
  retryScheduleMs: readonly number[];
  /** Runs endpoints' transformations off the event loop (absent: an endpoint with one fails its deliveries with transformation_failed). */
  transformRunner?: TransformPool | undefined;
  /** Called when a receiver answered 410 and its endpoint was disabled. */
  onEndpointDisabled: (endpointId: string) => void;
  /** Called after an attempt was recorded and moved its event on (the live stream shows it). */
  onAttemptFinished?: (finished: FinishedAttempt) => void;
  /** Called when the endpoint's filter skipped a delivery (no attempt is recorded), with the time the filter took in ms. */
  onDeliveryFiltered?: (durationMs: number) => void;
  now?: () => number;
  random?: () => number;
}

/** A recorded attempt, as the live stream announces it. */
export interface FinishedAttempt {
  accountId: string;
  endpointId: string;
  eventId: string;
  eventStatus: EventStatus;
  attempt: StreamAttempt;
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

const UNTOUCHED: PreparedDelivery = { kind: 'send', request: null };
/** How long a delivery whose transformation found no free thread in time waits before it is claimed again. */
export const DEFERRED_DELIVERY_DELAY_MS = 5_000;

/**
 * Makes one attempt of a claimed delivery: prepare it (the endpoint's transformation and
 * filter, see prepare.ts), sign the bytes sent (the exact stored bytes when there is no
 * transformation), POST them, record the attempt and the event's next state in one
 * statement. A 410 disables the endpoint. A failed transformation fails the event at
 * once (it would fail the same way again) with its attempt recorded; a filter that does
 * not match marks it filtered with no attempt. Replays skip the filter.
 */
export async function attemptDelivery(context: AttemptContext, delivery: ClaimedDelivery): Promise<{ result: SendResult; next: NextState }> {
  const now = context.now ?? Date.now;
  const startedAt = new Date(now());
  const prepared = delivery.transformationCode === null && delivery.filter === null
    ? UNTOUCHED
    : await prepareWith(context.transformRunner, delivery, delivery.trigger !== 'replay', delivery.accountId);
  if (prepared.kind === 'deferred') {
    // Its account's transformations are backed up (or past their CPU allowance): the
    // delivery goes back to the queue untried, due a little later, so its lease never
    // runs out while it waits.
    const retryAtMs = now() + DEFERRED_DELIVERY_DELAY_MS;
    await deferDelivery(context.orm, delivery, new Date(retryAtMs));
    return {
      result: { status: null, body: null, error: null, retryAfterMs: null, durationMs: now() - startedAt.getTime() },
      next: { status: delivery.status, autoAttempts: delivery.autoAttempts, nextAttemptAtMs: retryAtMs },
    };
  }
  if (prepared.kind === 'filtered') {
    await recordFiltered(context.orm, [{ eventId: delivery.id, leaseId: delivery.leaseId, ...(prepared.newType ? { newType: prepared.newType } : {}) }]);
    context.onDeliveryFiltered?.(now() - startedAt.getTime());
    return {
      result: { status: null, body: null, error: null, retryAfterMs: null, durationMs: now() - startedAt.getTime() },
      next: { status: 'filtered', autoAttempts: delivery.autoAttempts, nextAttemptAtMs: null },
    };
  }
  let result: SendResult;
  let next: NextState;
  if (prepared.kind === 'failed') {
    result = { status: null, body: null, error: prepared.error, retryAfterMs: null, durationMs: now() - startedAt.getTime() };
    next = prepared.retryable
      ? stateAfterAttempt({ status: delivery.status, autoAttempts: delivery.autoAttempts }, delivery.trigger, { ok: false, retryAfterMs: null }, context.retryScheduleMs, now(), context.random ?? Math.random)
      : { status: 'failed', autoAttempts: delivery.autoAttempts + (delivery.trigger === 'auto' ? 1 : 0), nextAttemptAtMs: null };
  } else {
    const timestampSeconds = Math.floor(startedAt.getTime() / 1000);
    const sent = prepared.request;
    result = sent === null
      ? await context.sender.send(delivery.destinationUrl, deliveryHeaders(delivery, timestampSeconds), delivery.body)
      : await context.sender.send(
        transformedUrl(delivery.destinationUrl, sent),
        deliveryHeaders({ id: delivery.id, headers: sent.headers, body: sent.body, secrets: delivery.secrets, attemptCount: delivery.attemptCount }, timestampSeconds),
        sent.body,
      );
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
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
  const held = await context.recorder.record({
    ...(prepared.kind === 'send' && prepared.newType ? { newType: prepared.newType } : {}),
    id: attemptId,
    delivery,
    startedAt,
    durationMs: result.durationMs,
    responseStatus: result.status,
    responseBody: result.body,
    error: result.error,
    next: { status: next.status, autoAttempts: next.autoAttempts, nextAttemptAt: next.nextAttemptAtMs === null ? null : new Date(next.nextAttemptAtMs) },
  });
  if (held) {
    context.onAttemptFinished?.({
      accountId: delivery.accountId,
      endpointId: delivery.endpointId,
      eventId: delivery.id,
      eventStatus: next.status,
      attempt: {
        id: attemptId,
        n: delivery.attemptCount + 1,
        trigger: delivery.trigger,
        started_at: startedAt.toISOString(),
        duration_ms: Math.round(result.durationMs),
        response_status: result.status,
        error: result.error,
      },
    });
  }
  if (result.status === 410) {
    await disableEndpoint(context.orm, delivery.endpointId);
    context.onEndpointDisabled(delivery.endpointId);
  }
  return { result, next };
}
