import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IsolationLevel } from '@mikro-orm/core';
import { Type } from 'typebox';
import { encodeBody, ENDPOINT_NOT_FOUND, EVENT_IN_FLIGHT, EVENT_NOT_FOUND, HookError, REPLAY_NEEDS_URL_DESTINATION } from '@hook/core';
import { Attempt, claimEventForReplay, Endpoint, Event, notificationEndpointIds, requestReplay, type AttemptEntity, type EventEntity } from '@hook/db';
import { attemptDelivery, type AttemptContext } from '../../delivery/attempt.ts';
import { EventSchema, EventStatus as EventStatusSchema, EventSummarySchema, errorResponses, IdOf, IdParams, Page, PageQuery, Timestamp } from '../../schemas.ts';
import { afterCursor, fetchSize, toPage } from '../pagination.ts';
import { presentStoredRequest } from './present.ts';

const security = [{ bearerAuth: [] }];

export function presentEventSummary(event: Omit<EventEntity, 'body'>) {
  return {
    ...presentStoredRequest(event),
    endpoint_id: event.endpointId,
    next_attempt_at: event.nextAttemptAt?.toISOString() ?? null,
  };
}

function presentAttempt(attempt: AttemptEntity) {
  return {
    id: attempt.id,
    n: attempt.n,
    trigger: attempt.trigger,
    started_at: attempt.startedAt.toISOString(),
    duration_ms: attempt.durationMs,
    response_status: attempt.responseStatus ?? null,
    response_body: attempt.responseBody ?? null,
    error: attempt.error ?? null,
  };
}

/** Most events one bulk replay request queues. */
export const BULK_REPLAY_MAX = 10_000;

/** An event as GET /v1/events/{id} shows it: the whole record, body and attempts. */
async function loadEvent(request: FastifyRequest, id: string) {
  // One snapshot for the event and its attempts, so an attempt recorded in between never
  // shows beside the status from before it.
  return request.em.transactional(async (em) => {
    const event = await em.findOne(Event, { id, accountId: request.accountId }, { populate: ['body'], refresh: true });
    if (!event) throw new HookError(EVENT_NOT_FOUND, [id]);
    const attempts = await em.find(Attempt, { eventId: id }, { orderBy: { n: 'asc' }, refresh: true });
    return { ...presentEventSummary(event), ...encodeBody(Buffer.from(event.body)), attempts: attempts.map(presentAttempt) };
  }, { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true });
}

export async function eventRoutes(app: FastifyInstance, options: { delivery: AttemptContext; leaseMs: number }): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get('/v1/events', {
    schema: {
      tags: ['events'],
      summary: 'List events newest first (without bodies; GET /v1/events/{id} has the body)',
      security,
      querystring: Type.Object(
        {
          endpoint_id: Type.Optional(IdOf('endpoint', 'Only this endpoint\'s events')),
          status: Type.Optional(EventStatusSchema),
          type: Type.Optional(Type.String({ maxLength: 200 })),
          ...PageQuery,
        },
        { additionalProperties: false },
      ),
      response: { 200: Page(EventSummarySchema), ...errorResponses },
    },
  }, async (request) => {
    const { endpoint_id: endpointId, status, type, limit, cursor } = request.query;
    if (endpointId !== undefined && (await request.em.count(Endpoint, { id: endpointId, accountId: request.accountId, kind: 'user' })) === 0) {
      throw new HookError(ENDPOINT_NOT_FOUND, [endpointId]);
    }
    // Account notifications are listed by GET /v1/account/notifications/events, not here.
    const notificationEndpoints = endpointId === undefined ? await notificationEndpointIds(request.em, request.accountId) : [];
    const rows = await request.em.find(
      Event,
      {
        accountId: request.accountId,
        ...(endpointId !== undefined ? { endpointId } : notificationEndpoints.length > 0 ? { endpointId: { $nin: notificationEndpoints } } : {}),
        ...(status !== undefined ? { status } : {}),
        ...(type !== undefined ? { type } : {}),
        ...afterCursor(cursor),
      },
      { orderBy: { id: 'desc' }, limit: fetchSize(limit) },
    );
    return toPage(rows, limit, presentEventSummary);
  });

  api.get('/v1/events/:id', {
    schema: {
      tags: ['events'],
      summary: 'An event with its exact body, headers and delivery attempts',
      security,
      params: IdParams('event', 'Event id'),
      response: { 200: EventSchema, ...errorResponses },
    },
  }, async (request) => loadEvent(request, request.params.id));

  api.post('/v1/events/replay/:id', {
    schema: {
      tags: ['events'],
      summary: 'Replay one event now: one immediate attempt (trigger replay); answers with the event after it',
      security,
      params: IdParams('event', 'Event id'),
      body: Type.Object({}, { additionalProperties: false }),
      response: { 200: EventSchema, ...errorResponses },
    },
  }, async (request) => {
    const { id } = request.params;
    const claim = await claimEventForReplay(app.orm, id, request.accountId, options.leaseMs);
    if (claim.kind === 'not_found') throw new HookError(EVENT_NOT_FOUND, [id]);
    if (claim.kind === 'not_url') throw new HookError(REPLAY_NEEDS_URL_DESTINATION, [id]);
    if (claim.kind === 'in_flight') throw new HookError(EVENT_IN_FLIGHT, [id]);
    await attemptDelivery(options.delivery, claim.delivery);
    return loadEvent(request, id);
  });

  api.post('/v1/events/replay', {
    schema: {
      tags: ['events'],
      summary: `Replay many events: each matching event gets one attempt soon (trigger replay), oldest first, at most ${BULK_REPLAY_MAX} a request`,
      security,
      body: Type.Object(
        {
          endpoint_id: Type.Optional(IdOf('endpoint', 'Only this endpoint\'s events')),
          status: Type.Optional({ ...EventStatusSchema, description: 'Only events in this status; default failed' }),
          since: Type.Optional({ ...Timestamp, description: 'Only events received at or after this time' }),
          until: Type.Optional({ ...Timestamp, description: 'Only events received before this time' }),
        },
        { additionalProperties: false },
      ),
      response: { 202: Type.Object({ replayed: Type.Integer({ description: 'How many events were queued for replay' }), limit: Type.Integer() }), ...errorResponses },
    },
  }, async (request, reply) => {
    const { endpoint_id: endpointId, status, since, until } = request.body;
    if (endpointId !== undefined && (await request.em.count(Endpoint, { id: endpointId, accountId: request.accountId })) === 0) {
      throw new HookError(ENDPOINT_NOT_FOUND, [endpointId]);
    }
    const replayed = await requestReplay(app.orm, {
      accountId: request.accountId,
      endpointId,
      status: status ?? 'failed',
      since: since === undefined ? undefined : new Date(since),
      until: until === undefined ? undefined : new Date(until),
      max: BULK_REPLAY_MAX,
    });
    return reply.code(202).send({ replayed, limit: BULK_REPLAY_MAX });
  });
}
