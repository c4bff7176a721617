/** `POST /v1/transformations/test`: what it takes and what running the code gave. */
import { Type } from 'typebox';
import { IdOf } from './common.ts';
import { TRANSFORMATION_CODE_MAX_BYTES } from './endpoint.ts';

const Headers = Type.Record(Type.String(), Type.String({ maxLength: 8192 }), { description: 'Header names and values' });

/** The request a transformation receives and returns (docs/transformations.md). */
export const TransformationRequestSchema = Type.Object({
  method: Type.String({ description: 'e.g. POST' }),
  path: Type.String({ description: "After the ingest URL: '' or starting with '/'" }),
  query: Type.String({ description: "The query string without '?' ('' when none)" }),
  headers: Headers,
  body: Type.Unknown({ description: 'Parsed JSON, or a string when the content is not JSON' }),
});

export const TransformationTestRequestSchema = Type.Object({
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

/** What running a transformation gave; `ok: false` is a failed transformation, not a failed request. */
export const TransformationTestResultSchema = Type.Object({
  ok: Type.Boolean({ description: 'true when the code ran and returned a request' }),
  request: Type.Optional(TransformationRequestSchema),
  type: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The event type the code set with context.setType, when it set one' })),
  logs: Type.Array(Type.Object({ level: Type.Enum(['log', 'info', 'warn', 'error', 'debug']), message: Type.String() }), { description: 'console output, at most 100 lines of 1 KiB' }),
  error: Type.Optional(Type.Object({
    message: Type.String(),
    line: Type.Union([Type.Integer(), Type.Null()], { description: '1-based line in the code, when known' }),
  })),
});
