/**
 * The route schemas: request validation, response serialisation and /openapi.json. The
 * resources (and the bodies the client sends) are defined once in @hook/core/schemas; what
 * is here is only Fastify's: the error responses every route lists.
 */
import { Problem } from '@hook/core/schemas';

export * from '@hook/core/schemas';

/** Error responses every route can give. */
export const errorResponses = {
  '4XX': { description: 'A client error', content: { 'application/problem+json': { schema: Problem } } },
  '5XX': { description: 'A server error', content: { 'application/problem+json': { schema: Problem } } },
} as const;
