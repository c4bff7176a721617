import { defineCommand } from '../../command.ts';
import { alertSettingsView } from '../../views.ts';

export default defineCommand<[], object>({
  path: ['alerts', 'get'],
  summary: 'Show where the account\'s alerts go (Slack, email) and the latest alerts sent',
  description:
    'Show the alert channels (GET /v1/account/alerts): the Slack incoming webhook (its URL cut short: it is a secret), the email addresses, ' +
    'whether this relay sends email, what is alerted (issues opened or reopened, destinations and endpoints disabled) and the latest alerts with how each went. ' +
    'Alerts also go to the notification URL (`hook notifications get`); docs/alerts.md says when and how often.\n' +
    '--json prints the API answer as it is.',
  examples: [
    ['hook alerts get', 'channels and the latest alerts'],
    ['hook alerts get --json | jq .recent', 'the latest alerts as JSON'],
  ],
  async run(context) {
    const client = await context.client();
    const settings = await client.alerts.get();
    await context.out.result(settings, alertSettingsView(settings));
  },
});
