import { notificationSettingsSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'get_notifications',
  title: 'Get notification URL',
  description:
    "Where the account's notifications go (GET /v1/account/notifications): the URL and its status, without the signing secret. " +
    'Fails with notifications_not_configured when none is set (set_notification_url sets one).',
  input: {},
  output: { notifications: notificationSettingsSchema },
  annotations: { readOnlyHint: true },
  async run(client) {
    const { secret: _secret, ...notifications } = await client.notifications.get();
    return { result: { notifications }, summary: `Account notifications go to ${notifications.url} (${notifications.status})` };
  },
});
