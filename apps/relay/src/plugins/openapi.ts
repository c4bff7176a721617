import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';

/**
 * OpenAPI 3.1 generated from the same route schemas that validate requests. Must be
 * registered before the routes it describes.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Hook relay API',
        version: '1.0.0',
        description: 'Webhook relay: receiving URLs, stored events, signed delivery and replay. Errors are application/problem+json with a stable code (docs/errors.md).',
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key, hk_…' } },
      },
      tags: [
        { name: 'accounts' }, { name: 'api-keys' }, { name: 'endpoints' }, { name: 'ingest' }, { name: 'events' }, { name: 'issues' }, { name: 'ops' },
      ],
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
