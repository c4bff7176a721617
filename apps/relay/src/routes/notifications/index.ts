import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { HookError, LIST_LIMIT_DEFAULT, NOTIFICATIONS_NOT_CONFIGURED } from '@hook/core';
import {
  clearNotificationUrl, findNotificationEndpoint, listEvents, notificationEndpointIds, notifyDue, setNotificationUrl,
  type MemberRole, type NotificationEndpointRow,
} from '@hook/db';
import { checkDestinationUrl } from '../../delivery/destinations.ts';
import { requireAdmin } from '../../plugins/auth.ts';
import { DestinationUrl, errorResponses, EventSummarySchema, NotificationEventQuerySchema, NotificationSettingsSchema, Page } from '../../schemas.ts';
import { presentEventSummary } from '../events/index.ts';
import { beforeIdOf, eventPage } from '../pagination.ts';

const security = [{ bearerAuth: [] }];

/**
 * The settings as the caller may see them: the signing secret only for admins. The
 * notification URL is an admin's setting, and whoever holds its secret can forge the
 * account's notifications to it, so a member reads the URL and status only.
 */
function presentSettings(endpoint: NotificationEndpointRow, role: MemberRole) {
  return {
    url: endpoint.destinationUrl,
    secret: role === 'admin' ? endpoint.secret : null,
    status: endpoint.status,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}

/**
 * `/v1/account/notifications`: the account's notification URL, and the notifications
 * sent to it. The destination is a hidden endpoint (kind `notifications`) that the
 * endpoints API, ingest and `hook listen` never show; its events go through the ordinary
 * delivery engine.
 */
export async function notificationRoutes(app: FastifyInstance, options: { allowPrivateDestinations: boolean }): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.put('/v1/account/notifications', {
    schema: {
      tags: ['accounts'],
      summary: 'Set the notification URL (admins): usage thresholds, plan changes, disabled endpoints and failed events are POSTed there, signed',
      security,
      body: Type.Object({ url: DestinationUrl }, { additionalProperties: false }),
      response: { 200: NotificationSettingsSchema, ...errorResponses },
    },
  }, async (request) => {
    requireAdmin(request, 'set the notification URL');
    const { url } = request.body;
    await checkDestinationUrl(url, 'body.url', { allowPrivate: options.allowPrivateDestinations });
    const endpoint = await setNotificationUrl(request.em, request.accountId, url);
    // Notifications that were waiting (the URL had answered 410) go out now.
    await notifyDue(app.orm);
    return presentSettings(endpoint, request.caller.role);
  });

  api.get('/v1/account/notifications', {
    schema: {
      tags: ['accounts'],
      summary: 'The notification URL, its signing secret and status',
      security,
      response: { 200: NotificationSettingsSchema, ...errorResponses },
    },
  }, async (request) => {
    const endpoint = await findNotificationEndpoint(request.em, request.accountId);
    if (!endpoint) throw new HookError(NOTIFICATIONS_NOT_CONFIGURED);
    return presentSettings(endpoint, request.caller.role);
  });

  api.delete('/v1/account/notifications', {
    schema: {
      tags: ['accounts'],
      summary: 'Stop notifications (admins); those already sent stay listed',
      security,
      response: { 204: Type.Null(), ...errorResponses },
    },
  }, async (request, reply) => {
    requireAdmin(request, 'clear the notification URL');
    if (!(await clearNotificationUrl(request.em, request.accountId))) throw new HookError(NOTIFICATIONS_NOT_CONFIGURED);
    return reply.code(204).send(null);
  });

  api.get('/v1/account/notifications/events', {
    schema: {
      tags: ['accounts'],
      summary: 'Notifications sent to the account, newest first, with their delivery status (as GET /v1/events shows events)',
      security,
      querystring: NotificationEventQuerySchema,
      response: { 200: Page(EventSummarySchema), ...errorResponses },
    },
  }, async (request) => {
    const { type, limit, cursor } = request.query;
    // Every notifications endpoint the account has had: notifications sent before the URL was cleared stay listed.
    const endpointIds = await notificationEndpointIds(request.em, request.accountId);
    if (endpointIds.length === 0) return { data: [], next_cursor: null };
    const page = await listEvents(request.em, { accountId: request.accountId, endpointIds, ...(type !== undefined ? { type } : {}), ...beforeIdOf(cursor), limit: limit ?? LIST_LIMIT_DEFAULT });
    return eventPage(page, presentEventSummary);
  });
}
