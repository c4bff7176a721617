import { defineCommand } from '../../command.ts';
import { notificationSettingsView } from '../../views.ts';

export default defineCommand<[string], object>({
  path: ['notifications', 'set'],
  summary: 'Send the account\'s notifications to a URL (admins only)',
  description:
    'Set the notification URL (PUT /v1/account/notifications): the relay POSTs signed events about the account there: usage.threshold (80% and 100% of the monthly events), ' +
    'plan.changed, endpoint.disabled (a receiver answered 410) and event.failed (an event spent its retries). ' +
    'Deliveries are signed like any other, with the secret shown here, and retried the same way (docs/notifications.md). Setting it again changes the URL and keeps the secret.',
  examples: [
    ['hook notifications set https://ops.example.com/hook-notices', 'start receiving account notifications'],
    ['hook notifications set https://ops.example.com/hook-notices --json | jq -r .secret', 'the secret to verify them with'],
  ],
  configure(command) {
    command.argument('<url>', 'an http(s) URL that receives signed POSTs');
  },
  async run(context, [url]) {
    const client = await context.client();
    const settings = await client.notifications.set(url);
    context.out.note(`Account notifications go to ${settings.url}.`);
    await context.out.result(settings, notificationSettingsView(settings));
  },
});
