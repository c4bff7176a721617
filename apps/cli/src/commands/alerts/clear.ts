import { defineCommand } from '../../command.ts';
import { alertSettingsView } from '../../views.ts';

interface ClearOptions {
  slack?: boolean;
  email?: boolean;
}

export default defineCommand<[], ClearOptions>({
  path: ['alerts', 'clear'],
  summary: 'Stop alerts to Slack and/or email (admins only)',
  description:
    'Remove alert channels (PUT /v1/account/alerts with null / []): --slack, --email, or both when neither is given. ' +
    'Alerts already sent stay listed by `hook alerts get`; the notification URL (`hook notifications`) is not touched.',
  examples: [
    ['hook alerts clear', 'stop Slack and email alerts'],
    ['hook alerts clear --email', 'stop email alerts only'],
  ],
  configure(command) {
    command
      .option('--slack', 'remove the Slack webhook')
      .option('--email', 'remove the email addresses');
  },
  async run(context, _args, options) {
    const both = !options.slack && !options.email;
    const client = await context.client();
    const settings = await client.alerts.set({
      ...(both || options.slack ? { slack_webhook_url: null } : {}),
      ...(both || options.email ? { email_to: [] } : {}),
    });
    await context.out.result(settings, alertSettingsView(settings));
  },
});
