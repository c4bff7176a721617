import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IsolationLevel } from '@mikro-orm/core';
import { attemptErrorClass, bodyStart, DESTINATION_NOT_FOUND, encodeBody, ENDPOINT_NOT_FOUND, EVENT_IN_FLIGHT, EVENT_LIST_WINDOW, EVENT_NOT_FOUND, FAILING_STATUSES, HookError, LIST_LIMIT_DEFAULT, parseEventStatusList, REPLAY_NOWHERE } from '@hook/core';
import { Attempt, Destination, Endpoint, Event, listEvents, notificationEndpointIds, readEventDeliveries, replayEvent, replayMany, type ListedEvent } from '@hook/db';
import { attemptDelivery, type AttemptContext } from '../../delivery/attempt.ts';
import { LISTENER_PRESENCE_MS, type ListenerRegistry } from '../../stream/listeners.ts';
import { BulkReplayRequestSchema, BulkReplayResultSchema, errorResponses, EventGetQuery, EventListQuery, EventPage, EventSchema, IdParams, ReplayedEventSchema, ReplayRequestSchema } from '../../schemas.ts';
import { presentDestinationTarget } from '../endpoints/present.ts';
import { beforeIdOf, eventPage } from '../pagination.ts';
import { presentAttempt, presentStoredRequest } from './present.ts';

const security = [{ bearerAuth: [] }];

export function presentEventSummary(event: ListedEvent) {
  const last = event.lastAttempt;
  return {
    ...presentStoredRequest(event),
    endpoint_id: event.endpointId,
    next_attempt_at: event.nextAttemptAt?.toISOString() ?? null,
    last_attempt: last === null ? null : {
      destination_id: last.destinationId,
      started_at: last.startedAt.toISOString(),
      response_status: last.responseStatus,
      error_class: attemptErrorClass({ kind: last.failureKind, responseStatus: last.responseStatus }),
    },
  };
}

/** Most deliveries one bulk replay request queues. */
export const BULK_REPLAY_MAX = 10_000;

/** An event as GET /v1/events/{id} shows it: the whole record, body, deliveries and attempts. */
async function loadEvent(request: FastifyRequest, id: string, bodyLimit?: number) {
  // One snapshot for the event, its deliveries and attempts, so an attempt recorded in
  // between never shows beside the status from before it.
  return request.em.transactional(async (em) => {
    const [event] = (await listEvents(em, { accountId: request.accountId, ids: [id], limit: 1, withBody: true })).events;
    if (!event) throw new HookError(EVENT_NOT_FOUND, [id]);
    // Each read names the account (routed to its shard, docs/scaling.md) and the event's
    // class (the one partition of deliveries and attempts that can hold its rows).
    const deliveries = await readEventDeliveries(em, event);
    const destinations = new Map((await em.find(Destination, { id: { $in: deliveries.map((row) => row.destinationId) }, accountId: request.accountId })).map((row) => [row.id, row]));
    const attempts = await em.find(Attempt, { eventId: id, accountId: request.accountId, retentionClass: event.retentionClass }, { orderBy: { startedAt: 'asc', n: 'asc' }, refresh: true });
    return {
      ...presentEventSummary(event),
      ...(bodyLimit === undefined ? encodeBody(event.body!) : { ...encodeBody(bodyStart(event.body!, bodyLimit)), body_truncated: event.body!.length > bodyLimit }),
      attempts: attempts.map(presentAttempt),
      deliveries: deliveries
        .map((row) => ({ row, destination: destinations.get(row.destinationId) }))
        .sort((a, b) => (a.destination?.position ?? 0) - (b.destination?.position ?? 0))
        .map(({ row, destination }) => ({
          destination_id: row.destinationId,
          destination: destination ? presentDestinationTarget(destination) : { type: 'cli' as const },
          status: row.status,
          attempt_count: row.attemptCount,
          next_attempt_at: row.nextAttemptAt?.toISOString() ?? null,
          next_trigger: row.nextTrigger,
          destination_deleted_at: row.destinationDeletedAt?.toISOString() ?? null,
        })),
    };
  }, { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true });
}

export async function eventRoutes(app: FastifyInstance, options: { delivery: AttemptContext; leaseMs: number; listeners: ListenerRegistry }): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get('/v1/events', {
    config: { lagTolerantReads: true }, // served by a read replica when one is caught up (docs/deployment.md#read-replicas)
    schema: {
      tags: ['events'],
      summary: `List events newest first (without bodies; GET /v1/events/{id} has the body). A page looks through at most ${EVENT_LIST_WINDOW.toLocaleString('en')} events, so with filters it may be short and still have a next_cursor: page until next_cursor is null`,
      security,
      querystring: EventListQuery,
      response: {
        200: EventPage,
        ...errorResponses,
      },
    },
  }, async (request) => {
    const { endpoint_id: endpointId, status, type, since, until, q, limit, cursor } = request.query;
    if (endpointId !== undefined && (await request.em.count(Endpoint, { id: endpointId, accountId: request.accountId, kind: 'user' })) === 0) {
      throw new HookError(ENDPOINT_NOT_FOUND, [endpointId]);
    }
    // Account notifications are listed by GET /v1/account/notifications/events, not here.
    const notificationEndpoints = endpointId === undefined ? await notificationEndpointIds(request.readEm, request.accountId) : [];
    const filter = {
      accountId: request.accountId,
      ...(endpointId !== undefined ? { endpointIds: [endpointId] } : { excludeEndpointIds: notificationEndpoints }),
      ...(status !== undefined ? { status: parseEventStatusList(status) } : {}),
      ...(type !== undefined ? { type } : {}),
      ...(since !== undefined ? { receivedFrom: new Date(since) } : {}),
      ...(until !== undefined ? { receivedBefore: new Date(until) } : {}),
      ...(q !== undefined ? { text: q } : {}),
      ...beforeIdOf(cursor),
      limit: limit ?? LIST_LIMIT_DEFAULT,
      maxScanned: EVENT_LIST_WINDOW,
    };
    const found = await listEvents(request.readEm, filter);
    const page = eventPage(found, presentEventSummary);
    return q === undefined ? page : { ...page, search_scanned: found.scanned, search_truncated: found.truncated };
  });

  api.get('/v1/events/:id', {
    schema: {
      tags: ['events'],
      summary: 'An event with its exact body, headers and delivery attempts',
      security,
      params: IdParams('event', 'Event id'),
      querystring: EventGetQuery,
      response: { 200: EventSchema, ...errorResponses },
    },
  }, async (request) => loadEvent(request, request.params.id, request.query.body_limit));

  /** Whether a `hook listen` session serves the destination: here, or in another relay lately. */
  async function listenerPresent(destinationId: string): Promise<boolean> {
    if (options.listeners.wake(destinationId)) return true;
    const seen = await app.orm.em.fork().count(Destination, { id: destinationId, listenerSeenAt: { $gte: new Date(Date.now() - 2 * LISTENER_PRESENCE_MS) } });
    return seen > 0;
  }

  api.post('/v1/events/replay/:id', {
    schema: {
      tags: ['events'],
      summary: 'Replay one event now: a new attempt (trigger replay) for each of its deliveries, or the one to destination_id. URL and broker destinations get it before the answer; `hook listen` destinations at once or when a listener connects (replay says which)',
      security,
      params: IdParams('event', 'Event id'),
      body: ReplayRequestSchema,
      response: { 200: ReplayedEventSchema, ...errorResponses },
    },
  }, async (request) => {
    const { id } = request.params;
    const destinationId = request.body.destination_id;
    const outcomes = await replayEvent(app.orm, { eventId: id, accountId: request.accountId, destinationId, leaseMs: options.leaseMs });
    if (outcomes.length === 0) {
      if (destinationId !== undefined && (await request.em.count(Event, { id, accountId: request.accountId })) > 0) {
        throw new HookError(DESTINATION_NOT_FOUND, [destinationId, ` among the destinations of event '${id}'`]);
      }
      throw new HookError(EVENT_NOT_FOUND, [id]);
    }
    if (outcomes.every((outcome) => outcome.kind === 'deleted')) throw new HookError(REPLAY_NOWHERE, [id, 'its destinations were deleted']);
    if (outcomes.every((outcome) => outcome.kind === 'in_flight' || outcome.kind === 'deleted')) throw new HookError(EVENT_IN_FLIGHT, [id]);
    const replay = await Promise.all(outcomes.filter((outcome) => outcome.kind !== 'deleted').map(async (outcome) => {
      if (outcome.kind === 'claimed') await attemptDelivery(options.delivery, outcome.delivery);
      const result = outcome.kind === 'claimed' ? 'attempted' as const
        : outcome.kind === 'in_flight' ? 'in_flight' as const
          : (await listenerPresent(outcome.destinationId)) ? 'sent_to_listener' as const : 'waiting_for_listener' as const;
      return { destination_id: outcome.destinationId, outcome: result };
    }));
    return { ...(await loadEvent(request, id)), replay };
  });

  api.post('/v1/events/replay', {
    schema: {
      tags: ['events'],
      summary: `Replay many events: each matching delivery gets one attempt soon (trigger replay), URL and \`hook listen\` destinations alike, oldest event first, at most ${BULK_REPLAY_MAX} deliveries a request`,
      security,
      body: BulkReplayRequestSchema,
      response: { 202: BulkReplayResultSchema, ...errorResponses },
    },
  }, async (request, reply) => {
    const { endpoint_id: endpointId, destination_id: destinationId, status, since, until } = request.body;
    if (endpointId !== undefined && (await request.em.count(Endpoint, { id: endpointId, accountId: request.accountId })) === 0) {
      throw new HookError(ENDPOINT_NOT_FOUND, [endpointId]);
    }
    if (destinationId !== undefined && (await request.em.count(Destination, { id: destinationId, accountId: request.accountId })) === 0) {
      throw new HookError(DESTINATION_NOT_FOUND, [destinationId, '']);
    }
    const replayedStatuses = status === undefined ? [...FAILING_STATUSES] : parseEventStatusList(status);
    const replayed = await replayMany(app.orm, {
      accountId: request.accountId,
      endpointId,
      destinationId,
      status: replayedStatuses,
      since: since === undefined ? undefined : new Date(since),
      until: until === undefined ? undefined : new Date(until),
      max: BULK_REPLAY_MAX,
    });
    if (replayed.toListeners > 0) options.listeners.wakeAll();
    return reply.code(202).send({ replayed: replayed.events, deliveries: replayed.deliveries, waiting_for_listener: replayed.toListeners, limit: BULK_REPLAY_MAX, status: replayedStatuses });
  });
}
