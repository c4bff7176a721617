import { defineCommand } from '../../command.ts';
import { parseLimit } from '../../option-parsers.ts';
import { endpointListTable } from '../../views.ts';

export default defineCommand<[], { limit?: number; cursor?: string }>({
  path: ['endpoints', 'list'],
  summary: 'List endpoints, newest first',
  description: 'List endpoints, newest first, one page at a time; the default endpoint of `hook listen` (`hook endpoints use`) is marked "(default)". --json prints the API page: {"data": [endpoint, …], "next_cursor": string | null}, each endpoint with "default": true or false.',
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
    const defaultId = context.settings.defaultEndpoint?.id;
    await context.out.result(
      { ...page, data: page.data.map((endpoint) => ({ ...endpoint, default: endpoint.id === defaultId })) },
      [endpointListTable(page.data, defaultId)],
    );
    if (page.next_cursor) context.out.hint(`More: hook endpoints list --cursor ${page.next_cursor}`);
  },
});
