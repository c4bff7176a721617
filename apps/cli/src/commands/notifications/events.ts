import { Option } from 'commander';
import { NOTIFICATION_TYPES, type NotificationType } from '@hook/core';
import { defineCommand } from '../../command.ts';
import { parseLimit } from '../../option-parsers.ts';
import { eventTable } from '../../views.ts';

interface EventsOptions {
  type?: NotificationType;
  limit?: number;
  cursor?: string;
}

export default defineCommand<[], EventsOptions>({
  path: ['notifications', 'events'],
  summary: 'List the notifications sent to the account, newest first, with their delivery status',
  description:
    'List account notifications (GET /v1/account/notifications/events), newest first, as `hook events list` shows events. ' +
    '`hook events get <id>` shows one with its body and attempts; `hook events replay <id>` sends it again.\n' +
    '--json prints the API page as it is: {"data": [event, …], "next_cursor": string | null}.',
  examples: [
    ['hook notifications events', 'the newest 20 notifications'],
    ['hook notifications events --type event.failed --json', 'failed-event notifications, as JSON'],
  ],
  configure(command) {
    command
      .addOption(new Option('--type <type>', 'only this notification type').choices(NOTIFICATION_TYPES))
      .option('--limit <n>', 'notifications per page, 1–100 (default 20)', parseLimit)
      .option('--cursor <cursor>', 'the next_cursor of the previous page');
  },
  async run(context, _args, options) {
    const client = await context.client();
    const page = await client.notifications.events({ type: options.type, limit: options.limit, cursor: options.cursor });
    await context.out.result(page, [eventTable(page.data)]);
    if (page.next_cursor) {
      const filters = [options.type && `--type ${options.type}`, options.limit && `--limit ${options.limit}`].filter(Boolean);
      context.out.hint(`More: hook notifications events ${[...filters, `--cursor ${page.next_cursor}`].join(' ')}`);
    }
  },
});
