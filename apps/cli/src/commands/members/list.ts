import { defineCommand } from '../../command.ts';
import { parseLimit } from '../../option-parsers.ts';
import { memberTable } from '../../views.ts';

export default defineCommand<[], { limit?: number; cursor?: string }>({
  path: ['members', 'list'],
  summary: 'List the team members, newest first',
  description: 'List the members of the account, newest first, one page at a time. Any member may list. --json prints the API page as it is: {"data": [member, …], "next_cursor": string | null}.',
  examples: [
    ['hook members list', 'the newest 20 members'],
    ['hook members list --json | jq -r \'.data[] | select(.role == "admin") | .email\'', 'the admins\' addresses'],
  ],
  configure(command) {
    command
      .option('--limit <n>', 'members per page, 1–100 (default 20)', parseLimit)
      .option('--cursor <cursor>', 'the next_cursor of the previous page');
  },
  async run(context, _args, options) {
    const client = await context.client();
    const page = await client.members.list({ limit: options.limit, cursor: options.cursor });
    await context.out.result(page, [memberTable(page.data)]);
    if (page.next_cursor) context.out.hint(`More: hook members list --cursor ${page.next_cursor}`);
  },
});
