import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EVENT_NOT_FOUND, HookError, VALIDATION_FAILED } from '@hook/core';
import { Endpoint, Event } from '@hook/db';
import { requestBody } from '../../delivery/prepare.ts';
import { errorResponses, IdOf, TRANSFORMATION_CODE_MAX_BYTES } from '../../schemas.ts';
import type { TransformContext, TransformRequest } from '../../transformations/types.ts';

const security = [{ bearerAuth: [] }];

/** What a given request defaults to, field by field. */
const GIVEN_REQUEST_DEFAULTS: TransformRequest = { method: 'POST', path: '', query: '', headers: {}, body: null };
/** The context a given request (no stored event) runs with. */
const GIVEN_CONTEXT: TransformContext = { event_id: 'evt_test', type: null, endpoint: { id: 'ep_test', name: 'test' } };

const Headers = Type.Record(Type.String(), Type.String({ maxLength: 8192 }), { description: 'Header names and values' });

const TransformRequestSchema = Type.Object({
  method: Type.String({ description: 'e.g. POST' }),
  path: Type.String({ description: "After the ingest URL: '' or starting with '/'" }),
  query: Type.String({ description: "The query string without '?' ('' when none)" }),
  headers: Headers,
  body: Type.Unknown({ description: 'Parsed JSON, or a string when the content is not JSON' }),
});

const TransformTestBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: TRANSFORMATION_CODE_MAX_BYTES, description: "JavaScript registering addHandler('transform', (request, context) => request)" }),
  event_id: Type.Optional(IdOf('event', 'Run against this stored event of your account (its body, headers, type and endpoint)')),
  request: Type.Optional(Type.Object({
    method: Type.Optional(Type.String({ pattern: '^[A-Za-z]+$', maxLength: 20, description: 'Default POST' })),
    path: Type.Optional(Type.String({ pattern: '^(/|$)', maxLength: 2048, description: "'' or starting with '/'. Default ''" })),
    query: Type.Optional(Type.String({ maxLength: 8192, description: "Default ''" })),
    headers: Type.Optional(Headers),
    body: Type.Optional(Type.Unknown({ description: 'Any JSON value, or a string for a non-JSON body. Default null' })),
    type: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()], { description: 'The event type the code sees as context.type. Default null' })),
  }, { additionalProperties: false, description: 'Run against this request instead of a stored event' })),
}, { additionalProperties: false, description: 'Exactly one of event_id and request' });

const TransformTestResult = Type.Object({
  ok: Type.Boolean({ description: 'true when the code ran and returned a request' }),
  request: Type.Optional(TransformRequestSchema),
  type: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The event type the code set with context.setType, when it set one' })),
  logs: Type.Array(Type.Object({ level: Type.Enum(['log', 'info', 'warn', 'error', 'debug']), message: Type.String() }), { description: 'console output, at most 100 lines of 1 KiB' }),
  error: Type.Optional(Type.Object({
    message: Type.String(),
    line: Type.Union([Type.Integer(), Type.Null()], { description: '1-based line in the code, when known' }),
  })),
});

/** POST /v1/transformations/test: runs code against a stored event or a given request; delivers nothing. */
export async function transformationRoutes(app: FastifyInstance): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post('/v1/transformations/test', {
    schema: {
      tags: ['transformations'],
      summary: 'Run transformation code against a stored event or a given request; delivers nothing',
      description: 'A transformation that fails is still a 200, with ok false and the error and its line (docs/transformations.md).',
      security,
      body: TransformTestBody,
      response: { 200: TransformTestResult, ...errorResponses },
    },
  }, async (request) => {
    const { code, event_id: eventId, request: given } = request.body;
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
