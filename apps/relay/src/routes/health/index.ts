import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorResponses } from '../../schemas.ts';

/** `GET /healthz`: 200 when the relay can reach its database, else a 503 problem. */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', {
    schema: {
      tags: ['ops'],
      summary: 'Liveness and database reachability',
      response: { 200: Type.Object({ status: Type.Literal('ok') }), ...errorResponses },
    },
  }, async (request) => {
    await request.em.getConnection().execute('select 1');
    return { status: 'ok' as const };
  });
}
