import { defineCommand } from '../../command.ts';
import { parseLimit } from '../../option-parsers.ts';
import { endpointTable } from '../../views.ts';

export default defineCommand<[], { limit?: number; cursor?: string }>({
  path: ['endpoints', 'list'],
  summary: 'List endpoints, newest first',
  description: 'List endpoints, newest first, one page at a time. --json prints the API page as it is: {"data": [endpoint, …], "next_cursor": string | null}.',
  examples: [
    ['hook endpoints list', 'the newest 20 endpoints'],
    ['hook endpoints list --limit 100 --json | jq -r \'.data[].url\'', 'every receiving URL on the first page of 100'],
  ],
  configure(command) {
    command
      .option('--limit <n>', 'endpoints per page, 1–100 (default 20)', parseLimit)
      .option('--cursor <cursor>', 'the next_cursor of the previous page');
  },
  async run(context, _args, options) {
    const client = await context.client();
    const page = await client.endpoints.list({ limit: options.limit, cursor: options.cursor });
    await context.out.result(page, [endpointTable(page.data)]);
    if (page.next_cursor) context.out.hint(`More: hook endpoints list --cursor ${page.next_cursor}`);
  },
});
