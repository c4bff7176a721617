import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { EVENT_NOT_FOUND, HookError, TRANSFORMATION_THROTTLED, VALIDATION_FAILED } from '@hook/core';
import { Endpoint, Event } from '@hook/db';
import { requestBody } from '../../delivery/prepare.ts';
import { errorResponses, TransformationTestRequestSchema, TransformationTestResultSchema } from '../../schemas.ts';
import type { TransformContext, TransformRequest } from '../../transformations/types.ts';

const security = [{ bearerAuth: [] }];

/** What a given request defaults to, field by field. */
const GIVEN_REQUEST_DEFAULTS: TransformRequest = { method: 'POST', path: '', query: '', headers: {}, body: null };
/** The context a given request (no stored event) runs with. */
const GIVEN_CONTEXT: TransformContext = { event_id: 'evt_test', type: null, endpoint: { id: 'ep_test', name: 'test' } };

/** POST /v1/transformations/test: runs code against a stored event or a given request; delivers nothing. */
export async function transformationRoutes(app: FastifyInstance): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post('/v1/transformations/test', {
    schema: {
      tags: ['transformations'],
      summary: 'Run transformation code against a stored event or a given request; delivers nothing',
      description: 'A transformation that fails is still a 200, with ok false and the error and its line (docs/transformations.md).',
      security,
      body: TransformationTestRequestSchema,
      response: { 200: TransformationTestResultSchema, ...errorResponses },
    },
  }, async (request, reply) => {
    const { code, event_id: eventId, request: given } = request.body;
    // Past its allowance an account's runs wait for it to refill (deliveries do); a test
    // says so at once rather than after the wait for a thread runs out.
    const throttled = await app.transformRunner.throttled(request.accountId);
    if (throttled) {
      const seconds = Math.ceil(throttled.waitMs / 1000);
      reply.header('retry-after', seconds);
      throw new HookError(TRANSFORMATION_THROTTLED, [throttled.perMinuteMs / 1000, seconds]);
    }
    if ((eventId === undefined) === (given === undefined)) {
      const message = 'give exactly one of event_id and request';
      throw new HookError(VALIDATION_FAILED, [1, `body ${message}`], [{ field: 'body', message }]);
    }
    let input: TransformRequest;
    let context: TransformContext;
    if (eventId !== undefined) {
      const event = await request.em.findOne(Event, { id: eventId, accountId: request.accountId }, { populate: ['body'] });
      if (!event) throw new HookError(EVENT_NOT_FOUND, [eventId]);
      const endpoint = await request.em.findOne(Endpoint, { id: event.endpointId }, { fields: ['id', 'name'] });
      input = { method: event.method, path: event.path, query: event.query, headers: { ...event.headers }, body: requestBody(Buffer.from(event.body), event.contentType ?? null) };
      context = { event_id: event.id, type: event.type ?? null, endpoint: { id: event.endpointId, name: endpoint?.name ?? '' } };
    } else {
      const { type, ...fields } = given!;
      input = { ...GIVEN_REQUEST_DEFAULTS, ...fields, method: (fields.method ?? 'POST').toUpperCase() };
      context = { ...GIVEN_CONTEXT, type: type ?? null };
    }
    const outcome = await app.transformRunner.run(code, input, context, request.accountId);
    return outcome.ok
      ? { ok: true, request: outcome.request, ...(outcome.type !== undefined ? { type: outcome.type } : {}), logs: outcome.logs }
      : { ok: false, logs: outcome.logs, error: outcome.error };
  });
}
