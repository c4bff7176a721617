import { defineCommand } from '../../command.ts';

export default defineCommand<[], object>({
  path: ['notifications', 'clear'],
  summary: 'Stop sending the account\'s notifications (admins only)',
  description:
    'Remove the notification URL (DELETE /v1/account/notifications). Nothing more is sent; notifications already sent stay listed by `hook notifications events`. ' +
    'Fails with notifications_not_configured when none is set.',
  examples: [
    ['hook notifications clear', 'stop notifications'],
    ['hook notifications clear --json', 'prints {"cleared": true}'],
  ],
  async run(context) {
    const client = await context.client();
    await client.notifications.clear();
    await context.out.result({ cleared: true }, [{ kind: 'text', text: 'Account notifications stopped.' }]);
  },
});
