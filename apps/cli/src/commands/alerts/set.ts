import { UsageError } from '../../errors.ts';
import { defineCommand } from '../../command.ts';
import { stdinSecretReader } from '../../destination-flags.ts';
import { alertSettingsView } from '../../views.ts';

interface SetOptions {
  slack?: string;
  email?: string;
}

export default defineCommand<[], SetOptions>({
  path: ['alerts', 'set'],
  summary: 'Send the account\'s alerts to a Slack incoming webhook and/or email addresses (admins only)',
  description:
    'Set alert channels (PUT /v1/account/alerts). --slack takes a Slack incoming-webhook URL (https://hooks.slack.com/services/…); it is a secret, so `--slack -` reads it from stdin, ' +
    'out of your shell history. --email takes comma-separated addresses; it needs a relay whose operator set HOOK_SMTP_URL (`hook alerts get` shows whether it has). ' +
    'A channel not named stays as it is; --email replaces the whole list. `hook alerts test` checks the channels; `hook alerts clear` removes them.',
  examples: [
    ['hook alerts set --slack https://hooks.slack.com/services/T000/B000/XXXX', 'post alerts to a Slack channel'],
    ['printf %s "$SLACK_WEBHOOK" | hook alerts set --slack -', 'the same, the URL read from stdin'],
    ['hook alerts set --email ops@example.com,oncall@example.com', 'mail alerts to two addresses'],
  ],
  configure(command) {
    command
      .option('--slack <url>', 'a Slack incoming-webhook URL; - reads it from stdin')
      .option('--email <addresses>', 'comma-separated email addresses (replaces the list)');
  },
  async run(context, _args, options) {
    if (options.slack === undefined && options.email === undefined) {
      throw new UsageError('Nothing to set', 'Give --slack <url> and/or --email <addresses>; `hook alerts clear` removes channels.');
    }
    const changes: { slack_webhook_url?: string; email_to?: string[] } = {};
    if (options.slack !== undefined) {
      changes.slack_webhook_url = options.slack === '-' ? await stdinSecretReader(context.stdin, (text) => context.out.note(text))('--slack') : options.slack;
    }
    if (options.email !== undefined) {
      const addresses = options.email.split(',').map((address) => address.trim()).filter(Boolean);
      if (addresses.length === 0) throw new UsageError('--email names no address', 'Give comma-separated addresses (--email ops@example.com), or remove email alerts with `hook alerts clear --email`.');
      changes.email_to = addresses;
    }
    const client = await context.client();
    const settings = await client.alerts.set(changes);
    context.out.note('Alert channels saved; `hook alerts test` sends a test alert to each.');
    await context.out.result(settings, alertSettingsView(settings));
  },
});
