import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { LockMode } from '@mikro-orm/core';
import { ENDPOINT_NOT_FOUND, generateSigningSecret, HookError, PLAN_LIMIT_REACHED, PLAN_LIMITS, SECRET_ROTATION_GRACE_MS, validateFilter, VALIDATION_FAILED, type FieldError } from '@hook/core';
import { Account, Endpoint, notifyDue, openSigningSecret, scheduleUndelivered, sealSigningSecret, type SecretBoxOwner } from '@hook/db';
import { assertPublicDestination } from '../../delivery/destinations.ts';
import {
  Destination, EndpointSchema, EndpointStatus, errorResponses, FilterInput, IdParams, Page, PageQuery, ResourceName, SecretSchema, TRANSFORMATION_CODE_MAX_BYTES, TransformationInput,
} from '../../schemas.ts';
import type { TransformRunner } from '../../transformations/types.ts';
import { afterCursor, fetchSize, toPage } from '../pagination.ts';
import type { IngestTargetCache } from '../ingest/target-cache.ts';
import { destinationColumns, newEndpointColumns } from './new-endpoint.ts';
import { presentEndpoint, publicBaseUrl } from './present.ts';

const security = [{ bearerAuth: [] }];
const EndpointParams = IdParams('endpoint', 'Endpoint id');

type SecretRow = { secret: string; previousSecret?: string | null; previousSecretExpiresAt?: Date | null };

/** The secrets that sign deliveries now, decrypted: the rotated-out one only until its grace period ends. */
function presentSecret(em: SecretBoxOwner, endpoint: SecretRow, now: Date) {
  const previousLive = Boolean(endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now);
  return {
    secret: openSigningSecret(em, endpoint.secret),
    previous_secret: previousLive ? openSigningSecret(em, endpoint.previousSecret!) : null,
    previous_secret_expires_at: previousLive ? endpoint.previousSecretExpiresAt!.toISOString() : null,
  };
}

export async function endpointRoutes(
  app: FastifyInstance,
  options: { publicUrl: string | undefined; targets: IngestTargetCache; allowPrivateDestinations: boolean },
): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  async function checkDestination(destination: Static<typeof Destination> | undefined): Promise<void> {
    if (destination?.type === 'url' && !options.allowPrivateDestinations) await assertPublicDestination(destination.url!);
  }

  /**
   * Checks a transformation (it compiles and registers a transform handler) and a filter
   * (docs/filters.md) before they are stored; problems come back as one validation_failed.
   */
  async function checkRules(body: { transformation?: Static<typeof TransformationInput>; filter?: Static<typeof FilterInput> }): Promise<void> {
    const errors: FieldError[] = [];
    if (body.transformation) {
      const { code } = body.transformation;
      if (Buffer.byteLength(code, 'utf8') > TRANSFORMATION_CODE_MAX_BYTES) {
        errors.push({ field: 'body.transformation.code', message: `is ${Buffer.byteLength(code, 'utf8')} bytes; at most ${TRANSFORMATION_CODE_MAX_BYTES} (64 KiB)` });
      } else {
        const runner = app.hasDecorator('transformRunner') ? (app as unknown as { transformRunner: TransformRunner }).transformRunner : undefined;
        const problem = runner ? await runner.check(code) : { message: 'this relay process has no transformation sandbox', line: null };
        if (problem) errors.push({ field: 'body.transformation.code', message: problem.line === null ? problem.message : `line ${problem.line}: ${problem.message}` });
      }
    }
    if (body.filter) errors.push(...validateFilter(body.filter, 'body.filter'));
    if (errors.length > 0) throw new HookError(VALIDATION_FAILED, [errors.length, errors.map((error) => `${error.field} ${error.message}`).join('; ')], errors);
  }

  async function findEndpoint(request: FastifyRequest, id: string) {
    // The notifications endpoint is the account's own (/v1/account/notifications), not one of its endpoints.
    const endpoint = await request.em.findOne(Endpoint, { id, accountId: request.accountId, kind: 'user', deletedAt: null });
    if (!endpoint) throw new HookError(ENDPOINT_NOT_FOUND, [id]);
    return endpoint;
  }

  api.post('/v1/endpoints', {
    schema: {
      tags: ['endpoints'],
      summary: 'Create an endpoint; its url receives events at once',
      security,
      body: Type.Object(
        { name: ResourceName, destination: Type.Optional(Destination), transformation: Type.Optional(TransformationInput), filter: Type.Optional(FilterInput) },
        { additionalProperties: false },
      ),
      response: { 201: EndpointSchema, ...errorResponses },
    },
  }, async (request, reply) => {
    await checkDestination(request.body.destination);
    await checkRules(request.body);
    const now = new Date();
    const endpoint = await request.em.transactional(async (em) => {
      // The account row is locked, so concurrent creations (and plan changes) take turns
      // and the plan's endpoint allowance holds exactly.
      const account = await em.findOneOrFail(Account, { id: request.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE, fields: ['plan'] });
      const allowance = PLAN_LIMITS[account.plan].endpoints;
      if (allowance !== null && await em.count(Endpoint, { accountId: request.accountId, kind: 'user', deletedAt: null }) >= allowance) {
        throw new HookError(PLAN_LIMIT_REACHED, [`The ${account.plan} plan allows ${allowance} endpoints and this account has ${allowance}; delete one (DELETE /v1/endpoints/{id}) or upgrade`]);
      }
      return em.create(Endpoint, {
        ...newEndpointColumns({ accountId: request.accountId, name: request.body.name, destination: request.body.destination ?? { type: 'cli' } }, now, request.em),
        transformationCode: request.body.transformation?.code ?? null,
        filter: (request.body.filter ?? null) as Record<string, unknown> | null,
      });
    });
    return reply.code(201).send(presentEndpoint(endpoint, publicBaseUrl(request, options.publicUrl)));
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
    const baseUrl = publicBaseUrl(request, options.publicUrl);
    return toPage(rows, limit, (row) => presentEndpoint(row, baseUrl));
  });

  api.get('/v1/endpoints/:id', {
    schema: { tags: ['endpoints'], summary: 'Get an endpoint', security, params: EndpointParams, response: { 200: EndpointSchema, ...errorResponses } },
  }, async (request) => presentEndpoint(await findEndpoint(request, request.params.id), publicBaseUrl(request, options.publicUrl)));

  api.patch('/v1/endpoints/:id', {
    schema: {
      tags: ['endpoints'],
      summary: 'Change an endpoint: name, destination, status (active, paused, disabled), transformation, filter',
      security,
      params: EndpointParams,
      body: Type.Object(
        {
          name: Type.Optional(ResourceName), destination: Type.Optional(Destination), status: Type.Optional(EndpointStatus),
          transformation: Type.Optional(TransformationInput), filter: Type.Optional(FilterInput),
        },
        { additionalProperties: false },
      ),
      response: { 200: EndpointSchema, ...errorResponses },
    },
  }, async (request) => {
    const endpoint = await findEndpoint(request, request.params.id);
    const { name, destination, status, transformation, filter } = request.body;
    await checkDestination(destination);
    await checkRules(request.body);
    const gainsUrl = destination?.type === 'url' && endpoint.destinationType !== 'url';
    const resumes = status === 'active' && endpoint.status !== 'active';
    if (name !== undefined) endpoint.name = name;
    if (status !== undefined) endpoint.status = status;
    if (destination !== undefined) Object.assign(endpoint, destinationColumns(destination));
    if (transformation !== undefined) endpoint.transformationCode = transformation?.code ?? null;
    if (filter !== undefined) endpoint.filter = filter as Record<string, unknown> | null;
    endpoint.updatedAt = new Date();
    await request.em.flush();
    options.targets.invalidate(endpoint.ingestId);
    // Events that waited (for a listener, or while paused) are delivered now, oldest first.
    if (gainsUrl) await scheduleUndelivered(app.orm, endpoint.id);
    else if (resumes) await notifyDue(app.orm);
    return presentEndpoint(endpoint, publicBaseUrl(request, options.publicUrl));
  });

  api.delete('/v1/endpoints/:id', {
    schema: {
      tags: ['endpoints'],
      summary: 'Delete an endpoint: its url stops receiving; its events stay in the history',
      security,
      params: EndpointParams,
      response: { 204: Type.Null(), ...errorResponses },
    },
  }, async (request, reply) => {
    const endpoint = await findEndpoint(request, request.params.id);
    endpoint.deletedAt = new Date();
    endpoint.updatedAt = endpoint.deletedAt;
    await request.em.flush();
    options.targets.invalidate(endpoint.ingestId);
    return reply.code(204).send(null);
  });

  api.get('/v1/endpoints/:id/secret', {
    schema: { tags: ['endpoints'], summary: 'The signing secret(s) of an endpoint', security, params: EndpointParams, response: { 200: SecretSchema, ...errorResponses } },
  }, async (request) => presentSecret(request.em, await findEndpoint(request, request.params.id), new Date()));

  api.post('/v1/endpoints/:id/rotate-secret', {
    schema: {
      tags: ['endpoints'],
      summary: 'Make a new signing secret; the old one keeps signing beside it for 24 hours',
      security,
      params: EndpointParams,
      body: Type.Object({}, { additionalProperties: false }),
      response: { 200: SecretSchema, ...errorResponses },
    },
  }, async (request) => {
    const endpoint = await findEndpoint(request, request.params.id);
    const now = new Date();
    endpoint.previousSecret = endpoint.secret; // stays sealed as it was
    endpoint.previousSecretExpiresAt = new Date(now.getTime() + SECRET_ROTATION_GRACE_MS);
    endpoint.secret = sealSigningSecret(request.em, generateSigningSecret());
    endpoint.updatedAt = now;
    await request.em.flush();
    return presentSecret(request.em, endpoint, now);
  });
}
