import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ALERT_EMAIL_UNAVAILABLE, ALERT_TESTS_PER_HOUR, ALERT_TYPES, HookError, RATE_LIMITED, VALIDATION_FAILED } from '@hook/core';
import { queueTestAlerts, readAlertSettings, writeAlertSettings } from '@hook/db';
import type { EntityManager } from '@mikro-orm/postgresql';
import { slackUrlProblem } from '../../alerts/slack.ts';
import { checkDestinationUrl } from '../../delivery/destinations.ts';
import { requireAdmin } from '../../plugins/auth.ts';
import { AlertSettingsSchema, AlertSettingsUpdateSchema, AlertTestResultSchema, errorResponses } from '../../schemas.ts';

const security = [{ bearerAuth: [] }];

async function presentSettings(em: EntityManager, accountId: string, emailAvailable: boolean) {
  const settings = await readAlertSettings(em, accountId);
  return {
    slack: settings.slackUrlHint === null ? null : { url_hint: settings.slackUrlHint },
    email: { to: settings.emailTo, available: emailAvailable },
    types: [...ALERT_TYPES],
    recent: settings.recent,
  };
}

/** Addresses as given, trimmed, each once (compared without case). */
function distinctAddresses(addresses: string[]): string[] {
  const seen = new Set<string>();
  return addresses.map((address) => address.trim()).filter((address) => {
    const key = address.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * `/v1/account/alerts` (docs/alerts.md): where the account's alerts go besides the
 * notification URL: a Slack incoming webhook and email addresses. Any member reads them
 * (the Slack URL only as a hint: it is a credential); admins change and test them.
 */
export async function alertRoutes(app: FastifyInstance, options: { allowPrivateDestinations: boolean; emailAvailable: boolean }): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get('/v1/account/alerts', {
    schema: {
      tags: ['accounts'],
      summary: 'The account\'s alert channels (Slack, email), what is alerted, and the latest alerts sent',
      security,
      response: { 200: AlertSettingsSchema, ...errorResponses },
    },
  }, async (request) => presentSettings(request.em, request.accountId, options.emailAvailable));

  api.put('/v1/account/alerts', {
    schema: {
      tags: ['accounts'],
      summary: 'Set the alert channels (admins): a Slack incoming-webhook URL and email addresses; a field left out stays as it is',
      security,
      body: AlertSettingsUpdateSchema,
      response: { 200: AlertSettingsSchema, ...errorResponses },
    },
  }, async (request) => {
    requireAdmin(request, 'change where alerts go');
    const { slack_webhook_url: slackUrl, email_to: emailTo } = request.body;
    if (typeof slackUrl === 'string') {
      const problem = slackUrlProblem(slackUrl, { allowPrivate: options.allowPrivateDestinations });
      if (problem) {
        const field = 'body.slack_webhook_url';
        throw new HookError(VALIDATION_FAILED, [1, `${field} ${problem}`], [{ field, message: problem }]);
      }
      // A Slack URL is a destination the tenant chose: the same private-address rule (checked again at every post).
      await checkDestinationUrl(slackUrl, 'body.slack_webhook_url', { allowPrivate: options.allowPrivateDestinations });
    }
    const addresses = emailTo === undefined ? undefined : distinctAddresses(emailTo);
    if (addresses !== undefined && addresses.length > 0 && !options.emailAvailable) throw new HookError(ALERT_EMAIL_UNAVAILABLE, [addresses.join(', ')]);
    await request.em.transactional((em) => writeAlertSettings(em, request.accountId, {
      ...(slackUrl !== undefined ? { slackUrl } : {}),
      ...(addresses !== undefined ? { emailTo: addresses } : {}),
    }));
    return presentSettings(request.em, request.accountId, options.emailAvailable);
  });

  api.post('/v1/account/alerts/test', {
    schema: {
      tags: ['accounts'],
      summary: `Send a test alert to each alert channel (admins; ${ALERT_TESTS_PER_HOUR} an hour); GET /v1/account/alerts shows how it went`,
      security,
      response: { 200: AlertTestResultSchema, ...errorResponses },
    },
  }, async (request, reply) => {
    requireAdmin(request, 'send test alerts');
    const [member] = await request.em.execute<{ email: string | null }[]>('select email from member where id = ?', [request.memberId]);
    const queued = await queueTestAlerts(request.em, request.accountId, { requested_by: member?.email ?? request.memberId });
    if (!Array.isArray(queued)) {
      reply.header('retry-after', queued.retryAfterSeconds);
      throw new HookError(RATE_LIMITED, [ALERT_TESTS_PER_HOUR, 'test alerts per account per hour', queued.retryAfterSeconds]);
    }
    return { queued };
  });
}
