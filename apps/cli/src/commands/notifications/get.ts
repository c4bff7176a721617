import { defineCommand } from '../../command.ts';
import { notificationSettingsView } from '../../views.ts';

export default defineCommand<[], object>({
  path: ['notifications', 'get'],
  summary: 'Show the notification URL, its signing secret and status',
  description:
    'Show where the account\'s notifications go (GET /v1/account/notifications): the URL, the whsec_ secret that signs them, and the status ' +
    '(disabled after the URL answered 410: set it again to resume). Fails with notifications_not_configured when none is set.',
  examples: [
    ['hook notifications get', 'URL, status and secret'],
    ['hook notifications get --json | jq -r .secret', 'just the secret'],
  ],
  async run(context) {
    const client = await context.client();
    const settings = await client.notifications.get();
    await context.out.result(settings, notificationSettingsView(settings));
  },
});
