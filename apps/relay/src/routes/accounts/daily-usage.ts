import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { notificationEndpointIds, readDailyUsage } from '@hook/db';
import { errorResponses } from '../../schemas.ts';

/** Most days GET /v1/account/usage/daily reads at once. */
export const DAILY_USAGE_MAX_DAYS = 90;

const DaySchema = Type.Object({
  date: Type.String({ format: 'date', description: 'The UTC day, YYYY-MM-DD' }),
  events: Type.Integer({ description: 'Events received that day' }),
  deliveries: Type.Integer({ description: 'Deliveries of those events (one per destination), not counting those a filter skipped' }),
  delivered: Type.Integer({ description: 'Of those, delivered (2xx) by now' }),
  failed: Type.Integer({ description: 'Of those, failed for good by now; success rate = delivered / (delivered + failed)' }),
});

/** `GET /v1/account/usage/daily`: events and delivery outcomes per UTC day, for the console's usage chart. */
export async function dailyUsageRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/v1/account/usage/daily', {
    config: { lagTolerantReads: true }, // served by a read replica when one is caught up (docs/deployment.md#read-replicas)
    schema: {
      tags: ['accounts'],
      summary: 'Events received and delivery outcomes per UTC day, oldest first, today included (days without events too)',
      security: [{ bearerAuth: [] }],
      querystring: Type.Object({
        days: Type.Optional(Type.Integer({ minimum: 1, maximum: DAILY_USAGE_MAX_DAYS, default: 30, description: 'How many days, today included' })),
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ days: Type.Array(DaySchema) }), ...errorResponses },
    },
  }, async (request) => {
    const days = await readDailyUsage(request.readEm, {
      accountId: request.accountId,
      days: request.query.days ?? 30,
      now: new Date(),
      excludeEndpointIds: await notificationEndpointIds(request.readEm, request.accountId),
    });
    return { days };
  });
}
