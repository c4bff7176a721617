import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { encodeBody, ENDPOINT_NOT_FOUND, EVENT_NOT_FOUND, HookError } from '@hook/core';
import { Attempt, Endpoint, Event, type AttemptEntity, type EventEntity } from '@hook/db';
import { EventSchema, EventStatus as EventStatusSchema, EventSummarySchema, errorResponses, IdOf, IdParams, Page, PageQuery } from '../../schemas.ts';
import { afterCursor, fetchSize, toPage } from '../pagination.ts';

const security = [{ bearerAuth: [] }];

function presentEventSummary(event: Omit<EventEntity, 'body'>) {
  return {
    id: event.id,
    endpoint_id: event.endpointId,
    type: event.type ?? null,
    method: event.method,
    path: event.path,
    query: event.query,
    headers: event.headers,
    content_type: event.contentType ?? null,
    size: event.size,
    received_at: event.receivedAt.toISOString(),
    status: event.status,
    attempt_count: event.attemptCount,
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

export async function eventRoutes(app: FastifyInstance): Promise<void> {
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
    if (endpointId !== undefined && (await request.em.count(Endpoint, { id: endpointId, accountId: request.accountId })) === 0) {
      throw new HookError(ENDPOINT_NOT_FOUND, [endpointId]);
    }
    const rows = await request.em.find(
      Event,
      {
        accountId: request.accountId,
        ...(endpointId !== undefined ? { endpointId } : {}),
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
  }, async (request) => {
    const { id } = request.params;
    const event = await request.em.findOne(Event, { id, accountId: request.accountId }, { populate: ['body'] });
    if (!event) throw new HookError(EVENT_NOT_FOUND, [id]);
    const attempts = await request.em.find(Attempt, { eventId: id }, { orderBy: { n: 'asc' } });
    return { ...presentEventSummary(event), ...encodeBody(Buffer.from(event.body)), attempts: attempts.map(presentAttempt) };
  });
}
