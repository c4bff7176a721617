import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LockMode } from '@mikro-orm/core';
import { DESTINATION_LIMIT_REACHED, DESTINATION_NOT_FOUND, HookError, KEY_NOT_BLOCKED, LAST_DESTINATION } from '@hook/core';
import { blockedKeys, Destination, Endpoint, releaseOrdering, unblockKey } from '@hook/db';
import {
  BlockedKeyListSchema, DestinationCreateSchema, DestinationListSchema, DestinationSchema, DestinationUpdateSchema, errorResponses, IdParams, SecretSchema, UnblockSchema,
} from '../../schemas.ts';
import { applyDestinationOptions, type DestinationOptionsInput } from './options.ts';
import { checkDestination, checkRules, presentSecret } from '../endpoints/checks.ts';
import { findEndpoint, rotateSecret } from '../endpoints/index.ts';
import { createDestination, destinationColumns } from '../endpoints/new-endpoint.ts';
import { presentDestination } from '../endpoints/present.ts';
import type { IngestTargetCache } from '../ingest/target-cache.ts';
import type { ListenerRegistry } from '../../stream/listeners.ts';

const security = [{ bearerAuth: [] }];
const DestinationParams = IdParams('destination', 'Destination id');

/** Most destinations one endpoint can have (docs/delivery.md#destinations). */
export const DESTINATIONS_PER_ENDPOINT_MAX = 10;

/**
 * Destinations (docs/delivery.md#destinations): where an endpoint's events go, each with
 * its own signing secret, status, transformation, filter, limits and health, and its own
 * delivery of every event received after it was added.
 */
export async function destinationRoutes(app: FastifyInstance, options: { targets: IngestTargetCache; allowPrivateDestinations: boolean; listeners: ListenerRegistry }): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  async function findDestination(request: FastifyRequest, id: string) {
    const destination = await request.em.findOne(Destination, { id, accountId: request.accountId, deletedAt: null });
    const endpoint = destination && await request.em.findOne(Endpoint, { id: destination.endpointId, kind: 'user', deletedAt: null });
    if (!destination || !endpoint) throw new HookError(DESTINATION_NOT_FOUND, [id, '']);
    return { destination, endpoint };
  }

  api.get('/v1/endpoints/:id/destinations', {
    schema: {
      tags: ['destinations'],
      summary: 'An endpoint\'s destinations, first first',
      security,
      params: IdParams('endpoint', 'Endpoint id'),
      response: { 200: DestinationListSchema, ...errorResponses },
    },
  }, async (request) => ({ data: (await findEndpoint(request, request.params.id)).destinations.map(presentDestination) }));

  api.post('/v1/endpoints/:id/destinations', {
    schema: {
      tags: ['destinations'],
      summary: `Add a destination to an endpoint (at most ${DESTINATIONS_PER_ENDPOINT_MAX}): every event received from now on is delivered to it too`,
      security,
      params: IdParams('endpoint', 'Endpoint id'),
      body: DestinationCreateSchema,
      response: { 201: DestinationSchema, ...errorResponses },
    },
  }, async (request, reply) => {
    const { destination, transformation, filter, rate_per_second: ratePerSecond, max_in_flight: maxInFlight, signature_scheme: signatureScheme } = request.body;
    await checkDestination(destination, options.allowPrivateDestinations);
    await checkRules(app, request.body);
    const now = new Date();
    const created = await request.em.transactional(async (em) => {
      // The endpoint row is locked so concurrent additions take distinct positions and the cap holds.
      const endpoint = await em.findOne(Endpoint, { id: request.params.id, accountId: request.accountId, kind: 'user', deletedAt: null }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!endpoint) return null;
      const existing = await em.find(Destination, { endpointId: endpoint.id, deletedAt: null }, { orderBy: { position: 'desc' } });
      if (existing.length >= DESTINATIONS_PER_ENDPOINT_MAX) throw new HookError(DESTINATION_LIMIT_REACHED, [endpoint.id, existing.length]);
      const row = createDestination(em, endpoint, (existing[0]?.position ?? -1) + 1, {
        destination,
        transformationCode: transformation?.code ?? null,
        filter: (filter ?? null) as Record<string, unknown> | null,
        ratePerSecond: ratePerSecond ?? null,
        maxInFlight: maxInFlight ?? null,
        ...(signatureScheme ? { signatureScheme } : {}),
      }, now);
      await applyDestinationOptions(em, row, optionsOf(request.body), now, options.allowPrivateDestinations);
      return row;
    });
    if (!created) await findEndpoint(request, request.params.id); // answers endpoint_not_found
    // Ingest delivers an endpoint's only URL destination at once; with another, the queue does.
    const endpoint = await request.em.findOneOrFail(Endpoint, { id: request.params.id }, { fields: ['ingestId'] });
    options.targets.invalidate(endpoint.ingestId);
    return reply.code(201).send(presentDestination(created!));
  });

  api.get('/v1/destinations/:id', {
    schema: { tags: ['destinations'], summary: 'Get a destination, with its health', security, params: DestinationParams, response: { 200: DestinationSchema, ...errorResponses } },
  }, async (request) => presentDestination((await findDestination(request, request.params.id)).destination));

  api.patch('/v1/destinations/:id', {
    schema: {
      tags: ['destinations'],
      summary: 'Change a destination: where it sends, status (active, paused, disabled), transformation, filter, limits. Made active again, its waiting deliveries are due at once',
      security,
      params: DestinationParams,
      body: DestinationUpdateSchema,
      response: { 200: DestinationSchema, ...errorResponses },
    },
  }, async (request) => {
    const { destination: row, endpoint } = await findDestination(request, request.params.id);
    const { destination, status, transformation, filter, rate_per_second: ratePerSecond, max_in_flight: maxInFlight } = request.body;
    await checkDestination(destination, options.allowPrivateDestinations);
    await checkRules(app, request.body);
    const now = new Date();
    const comesBack = (status === 'active' && row.status !== 'active') || (destination !== undefined && destinationColumns(destination).type !== row.type);
    if (destination !== undefined) Object.assign(row, destinationColumns(destination));
    const change = await applyDestinationOptions(request.em, row, { ...optionsOf(request.body), signature_scheme: request.body.signature_scheme }, now, options.allowPrivateDestinations);
    if (status !== undefined && status !== row.status) {
      Object.assign(row, { status, disabledReason: status === 'disabled' ? 'user' : null });
      if (status === 'active') Object.assign(row, { consecutiveFailures: 0, failingSince: null });
    }
    if (transformation !== undefined) row.transformationCode = transformation?.code ?? null;
    if (filter !== undefined) row.filter = filter as Record<string, unknown> | null;
    if (ratePerSecond !== undefined) row.ratePerSecond = ratePerSecond;
    if (maxInFlight !== undefined) row.maxInFlight = maxInFlight;
    row.updatedAt = now;
    // An endpoint the relay disabled because every destination was is active again with one of them.
    if (status === 'active' && endpoint.status === 'disabled') Object.assign(endpoint, { status: 'active', updatedAt: now });
    await request.em.flush();
    options.targets.invalidate(endpoint.ingestId);
    if (change.releaseOrdering) await releaseOrdering(app.orm, row.id, request.accountId);
    if (change.freeBlockedKeys) for (const blocked of await blockedKeys(app.orm, row.id, 10_000)) await unblockKey(app.orm, row.id, blocked.key);
    if (comesBack) await options.listeners.makeDue(app.orm, request.accountId, [row.id]);
    return presentDestination(row);
  });

  api.get('/v1/destinations/:id/blocked-keys', {
    schema: {
      tags: ['destinations'],
      summary: 'The keys of an ordered destination held by an event that gave up (on_give_up block), oldest first: each waits until its event is replayed and delivered, or the key is unblocked',
      security,
      params: DestinationParams,
      response: { 200: BlockedKeyListSchema, ...errorResponses },
    },
  }, async (request) => {
    const { destination } = await findDestination(request, request.params.id);
    const keys = await blockedKeys(app.orm, destination.id);
    return { data: keys.map((key) => ({ key: key.key, event_id: key.eventId, blocked_at: key.blockedAt.toISOString(), waiting: key.waiting })) };
  });

  api.post('/v1/destinations/:id/unblock', {
    schema: {
      tags: ['destinations'],
      summary: 'Free a blocked key of an ordered destination: the event that gave up stays failed (replay it any time) and the next event of the key is delivered',
      security,
      params: DestinationParams,
      body: UnblockSchema,
      response: { 200: DestinationSchema, ...errorResponses },
    },
  }, async (request) => {
    const { destination } = await findDestination(request, request.params.id);
    if (!(await unblockKey(app.orm, destination.id, request.body.key))) {
      throw new HookError(KEY_NOT_BLOCKED, [JSON.stringify(request.body.key), destination.id]);
    }
    return presentDestination(destination);
  });

  api.delete('/v1/destinations/:id', {
    schema: {
      tags: ['destinations'],
      summary: 'Delete a destination: it gets no more deliveries; its past deliveries and attempts stay in the history',
      security,
      params: DestinationParams,
      response: { 204: Type.Null(), ...errorResponses },
    },
  }, async (request, reply) => {
    const { destination, endpoint } = await findDestination(request, request.params.id);
    await request.em.transactional(async (em) => {
      const live = await em.find(Destination, { endpointId: endpoint.id, deletedAt: null }, { orderBy: { position: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE });
      if (live.length <= 1) throw new HookError(LAST_DESTINATION, [destination.id, endpoint.id]);
      const now = new Date();
      // Positions keep their gaps: the endpoint's first destination is its lowest, so the next takes the place of a deleted first.
      Object.assign(live.find((row) => row.id === destination.id)!, { deletedAt: now, updatedAt: now });
    });
    options.targets.invalidate(endpoint.ingestId);
    return reply.code(204).send(null);
  });

  api.get('/v1/destinations/:id/secret', {
    schema: { tags: ['destinations'], summary: 'The signing secret(s) of a destination', security, params: DestinationParams, response: { 200: SecretSchema, ...errorResponses } },
  }, async (request) => presentSecret(request.em, (await findDestination(request, request.params.id)).destination, new Date()));

  api.post('/v1/destinations/:id/rotate-secret', {
    schema: {
      tags: ['destinations'],
      summary: 'Make a new signing secret for a destination; the old one keeps signing beside it for 24 hours',
      security,
      params: DestinationParams,
      body: Type.Object({}, { additionalProperties: false }),
      response: { 200: SecretSchema, ...errorResponses },
    },
  }, async (request) => rotateSecret(request.em, (await findDestination(request, request.params.id)).destination));
}

/** The options of a create or update body (options.ts). */
function optionsOf(body: DestinationOptionsInput): DestinationOptionsInput {
  return { auth: body.auth, tls: body.tls, ordering: body.ordering, delay_seconds: body.delay_seconds };
}
