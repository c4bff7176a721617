import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ENDPOINT_NOT_FOUND, HookError, normaliseDedupe, PLAN_LIMIT_REACHED, PLAN_LIMITS, SECRET_ROTATION_GRACE_MS } from '@hook/core';
import { Account, Endpoint, sealSigningSecret, type DestinationEntity } from '@hook/db';
import {
  EndpointCreateSchema, EndpointSchema, EndpointUpdateSchema, errorResponses, IdParams, Page, PageQuery, SecretSchema,
} from '../../schemas.ts';
import { afterCursor, fetchSize, toPage } from '../pagination.ts';
import type { IngestTargetCache } from '../ingest/target-cache.ts';
import type { ListenerRegistry } from '../../stream/listeners.ts';
import { checkDestination, checkRules, presentSecret } from './checks.ts';
import { createEndpoint, destinationColumns } from './new-endpoint.ts';
import { newSigningSecret } from '../destinations/options.ts';
import { destinationsOf, presentEndpoint, publicBaseUrl } from './present.ts';
import { verificationColumns } from './verification.ts';
import { responseColumn } from './response.ts';
import { handshakeColumns } from './handshake.ts';

const security = [{ bearerAuth: [] }];
const EndpointParams = IdParams('endpoint', 'Endpoint id');

/** An account's live user endpoint with its destinations (first first); endpoint_not_found otherwise. */
export async function findEndpoint(request: FastifyRequest, id: string, em: EntityManager = request.em) {
  // The notifications endpoint is the account's own (/v1/account/notifications), not one of its endpoints.
  const endpoint = await em.findOne(Endpoint, { id, accountId: request.accountId, kind: 'user', deletedAt: null });
  if (!endpoint) throw new HookError(ENDPOINT_NOT_FOUND, [id]);
  const destinations = (await destinationsOf(em, [id])).get(id)!;
  return { endpoint, destinations, first: destinations[0]! };
}

/**
 * Endpoints (DESIGN.md §4). An endpoint's `destination`, `transformation`, `filter` and
 * secret routes read and write its first destination (the v1 shape of an endpoint with one target); its
 * other destinations are managed under /v1/endpoints/{id}/destinations and
 * /v1/destinations/{id} (routes/destinations).
 */
export async function endpointRoutes(
  app: FastifyInstance,
  options: { ingestBaseUrl: string | undefined; targets: IngestTargetCache; allowPrivateDestinations: boolean; listeners: ListenerRegistry },
): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post('/v1/endpoints', {
    schema: {
      tags: ['endpoints'],
      summary: 'Create an endpoint with its first destination; its url receives events at once',
      security,
      body: EndpointCreateSchema,
      response: { 201: EndpointSchema, ...errorResponses },
    },
  }, async (request, reply) => {
    await checkDestination(request.body.destination, options.allowPrivateDestinations);
    await checkRules(app, request.body);
    const verification = request.body.verification ? verificationColumns(request.em, request.body.verification) : null;
    const response = request.body.response ? responseColumn(request.body.response) : null;
    const handshake = request.body.handshake ? handshakeColumns(request.em, request.body.handshake) : null;
    const now = new Date();
    const created = await request.em.transactional(async (em) => {
      // The account row is locked, so concurrent creations (and plan changes) take turns
      // and the plan's endpoint allowance holds exactly.
      const account = await em.findOneOrFail(Account, { id: request.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE, fields: ['plan'] });
      const allowance = PLAN_LIMITS[account.plan].endpoints;
      if (allowance !== null && await em.count(Endpoint, { accountId: request.accountId, kind: 'user', deletedAt: null }) >= allowance) {
        throw new HookError(PLAN_LIMIT_REACHED, [`The ${account.plan} plan allows ${allowance} endpoints and this account has ${allowance}; delete one or upgrade`]);
      }
      return createEndpoint(em, {
        accountId: request.accountId,
        name: request.body.name,
        destination: request.body.destination ?? { type: 'cli' },
        transformationCode: request.body.transformation?.code ?? null,
        filter: (request.body.filter ?? null) as Record<string, unknown> | null,
        verification,
        response,
        handshake,
        dedupe: request.body.dedupe ? normaliseDedupe(request.body.dedupe) : null,
      }, now);
    });
    return reply.code(201).send(presentEndpoint(created.endpoint, created.destinations, publicBaseUrl(request, options.ingestBaseUrl)));
  });

  api.get('/v1/endpoints', {
    schema: {
      tags: ['endpoints'],
      summary: 'List endpoints, newest first',
      security,
      querystring: Type.Object(PageQuery, { additionalProperties: false }),
      response: { 200: Page(EndpointSchema), ...errorResponses },
    },
  }, async (request) => {
    const { limit, cursor } = request.query;
    const rows = await request.em.find(
      Endpoint,
      { accountId: request.accountId, kind: 'user', deletedAt: null, ...afterCursor(cursor) },
      { orderBy: { id: 'desc' }, limit: fetchSize(limit) },
    );
    const destinations = await destinationsOf(request.em, rows.map((row) => row.id));
    const baseUrl = publicBaseUrl(request, options.ingestBaseUrl);
    return toPage(rows, limit, (row) => presentEndpoint(row, destinations.get(row.id)!, baseUrl));
  });

  api.get('/v1/endpoints/:id', {
    schema: { tags: ['endpoints'], summary: 'Get an endpoint with its destinations', security, params: EndpointParams, response: { 200: EndpointSchema, ...errorResponses } },
  }, async (request) => {
    const { endpoint, destinations } = await findEndpoint(request, request.params.id);
    return presentEndpoint(endpoint, destinations, publicBaseUrl(request, options.ingestBaseUrl));
  });

  api.patch('/v1/endpoints/:id', {
    schema: {
      tags: ['endpoints'],
      summary: 'Change an endpoint: name, status (active, paused, disabled), signature verification, custom response, handshake, dedupe, and its first destination\'s destination, transformation and filter',
      security,
      params: EndpointParams,
      body: EndpointUpdateSchema,
      response: { 200: EndpointSchema, ...errorResponses },
    },
  }, async (request) => {
    const { endpoint, destinations, first } = await findEndpoint(request, request.params.id);
    const { name, destination, status, transformation, filter, verification, response, handshake, dedupe } = request.body;
    await checkDestination(destination, options.allowPrivateDestinations);
    await checkRules(app, request.body);
    if (verification !== undefined) Object.assign(endpoint, verification === null ? { verification: null, verificationSecret: null } : verificationColumns(request.em, verification));
    if (response !== undefined) endpoint.response = response === null ? null : responseColumn(response);
    if (handshake !== undefined) Object.assign(endpoint, handshake === null ? { handshake: null, handshakeSecret: null } : handshakeColumns(request.em, handshake));
    if (dedupe !== undefined) endpoint.dedupe = dedupe === null ? null : normaliseDedupe(dedupe);
    const now = new Date();
    const resumes = status === 'active' && endpoint.status !== 'active';
    if (name !== undefined) endpoint.name = name;
    if (status !== undefined) endpoint.status = status;
    let due: DestinationEntity[] = [];
    if (resumes) {
      // Active again: destinations the relay disabled (410, failing) come back with it.
      due = destinations.filter((row) => row.status !== 'paused');
      for (const row of destinations) if (row.status === 'disabled') Object.assign(row, { status: 'active', disabledReason: null, consecutiveFailures: 0, failingSince: null, updatedAt: now });
    }
    if (destination !== undefined) {
      const changesType = destinationColumns(destination).type !== first.type;
      Object.assign(first, destinationColumns(destination), { updatedAt: now });
      // Deliveries that waited for a listener go to the new URL now, oldest first (and the other way round).
      if (changesType) due.push(first);
    }
    if (transformation !== undefined) Object.assign(first, { transformationCode: transformation?.code ?? null, updatedAt: now });
    if (filter !== undefined) Object.assign(first, { filter: filter as Record<string, unknown> | null, updatedAt: now });
    endpoint.updatedAt = now;
    await request.em.flush();
    options.targets.invalidate(endpoint.ingestId);
    if (due.length > 0) await options.listeners.makeDue(app.orm, request.accountId, due.map((row) => row.id));
    return presentEndpoint(endpoint, destinations, publicBaseUrl(request, options.ingestBaseUrl));
  });

  api.delete('/v1/endpoints/:id', {
    schema: {
      tags: ['endpoints'],
      summary: 'Delete an endpoint and its destinations: its url stops receiving; its events stay in the history',
      security,
      params: EndpointParams,
      response: { 204: Type.Null(), ...errorResponses },
    },
  }, async (request, reply) => {
    const { endpoint, destinations } = await findEndpoint(request, request.params.id);
    const now = new Date();
    Object.assign(endpoint, { deletedAt: now, updatedAt: now });
    for (const row of destinations) Object.assign(row, { deletedAt: now, updatedAt: now });
    await request.em.flush();
    options.targets.invalidate(endpoint.ingestId);
    return reply.code(204).send(null);
  });

  api.get('/v1/endpoints/:id/secret', {
    schema: { tags: ['endpoints'], summary: 'The signing secret(s) of an endpoint\'s first destination', security, params: EndpointParams, response: { 200: SecretSchema, ...errorResponses } },
  }, async (request) => presentSecret(request.em, (await findEndpoint(request, request.params.id)).first, new Date()));

  api.post('/v1/endpoints/:id/rotate-secret', {
    schema: {
      tags: ['endpoints'],
      summary: 'Make a new signing secret for the endpoint\'s first destination; the old one keeps signing beside it for 24 hours',
      security,
      params: EndpointParams,
      body: Type.Object({}, { additionalProperties: false }),
      response: { 200: SecretSchema, ...errorResponses },
    },
  }, async (request) => rotateSecret(request.em, (await findEndpoint(request, request.params.id)).first));
}

/** Gives a destination a new signing secret; the old one keeps signing beside it for SECRET_ROTATION_GRACE_MS. */
export async function rotateSecret(em: EntityManager, destination: DestinationEntity) {
  const now = new Date();
  destination.previousSecret = destination.secret; // stays sealed as it was
  destination.previousSecretExpiresAt = new Date(now.getTime() + SECRET_ROTATION_GRACE_MS);
  // A new secret of the destination's scheme: a v1a destination gets a new key pair.
  const fresh = newSigningSecret(destination.signatureScheme);
  destination.secret = sealSigningSecret(em, fresh.secret);
  destination.publicKey = fresh.publicKey;
  destination.updatedAt = now;
  await em.flush();
  return presentSecret(em, destination, now);
}

