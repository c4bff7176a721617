import { forwardableHeaders, newId, signPayloadWithSecrets, stateAfterAttempt, type EventStatus, type NextState, type StreamAttempt } from '@hook/core';
import { disableEndpoint, type AttemptRecorder, type ClaimedDelivery, type Orm } from '@hook/db';
import type { DeliverySender, SendResult } from './sender.ts';

export interface AttemptContext {
  orm: Orm;
  sender: DeliverySender;
  recorder: AttemptRecorder;
  retryScheduleMs: readonly number[];
  /** Called when a receiver answered 410 and its endpoint was disabled. */
  onEndpointDisabled: (endpointId: string) => void;
  /** Called after an attempt was recorded and moved its event on (the live stream shows it). */
  onAttemptFinished?: (finished: FinishedAttempt) => void;
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

/**
 * Makes one attempt of a claimed delivery: sign the exact stored bytes, POST them,
 * record the attempt and the event's next state in one statement. A 410 disables
 * the endpoint.
 */
export async function attemptDelivery(context: AttemptContext, delivery: ClaimedDelivery): Promise<{ result: SendResult; next: NextState }> {
  const now = context.now ?? Date.now;
  const startedAt = new Date(now());
  const result = await context.sender.send(delivery.destinationUrl, deliveryHeaders(delivery, Math.floor(startedAt.getTime() / 1000)), delivery.body);
  const ok = result.status !== null && result.status >= 200 && result.status < 300;
  const next = stateAfterAttempt(
    { status: delivery.status, autoAttempts: delivery.autoAttempts },
    delivery.trigger,
    { ok, retryAfterMs: result.retryAfterMs },
    context.retryScheduleMs,
    now(),
    context.random ?? Math.random,
  );
  const attemptId = newId('attempt');
  const held = await context.recorder.record({
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
