import { defineCommand } from '../../command.ts';

export default defineCommand<[], object>({
  path: ['alerts', 'test'],
  summary: 'Send a test alert to each alert channel (admins only)',
  description:
    'Queue a test alert for Slack and email (POST /v1/account/alerts/test); the relay sends it within a second or two and retries it like any alert. ' +
    '`hook alerts get` shows how it went (sent, or the channel\'s error). Test alerts do not count toward the hourly limit.\n' +
    '--json prints {"queued": ["email", "slack"]}.',
  examples: [
    ['hook alerts test', 'check that alerts reach Slack and your inbox'],
  ],
  async run(context) {
    const client = await context.client();
    const result = await client.alerts.test();
    const text = result.queued.length === 0
      ? 'No alert channel is set, so no test alert was sent: set one with `hook alerts set --slack <url>` or `--email <addresses>`.'
      : `Test alert queued for ${result.queued.join(' and ')}; \`hook alerts get\` shows how it went.`;
    await context.out.result(result, [{ kind: 'text', text }]);
  },
});
