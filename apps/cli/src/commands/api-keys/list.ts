import { defineCommand } from '../../command.ts';
import { parseLimit } from '../../option-parsers.ts';
import { apiKeyTable } from '../../views.ts';

export default defineCommand<[], { limit?: number; cursor?: string }>({
  path: ['api-keys', 'list'],
  summary: "List the account's API keys (prefixes only), newest first",
  description:
    "List the account's API keys, newest first, one page at a time (GET /v1/api-keys): id, name, prefix (hk_ and 8 characters, to tell keys " +
    'apart), the member it belongs to and when it was made. The keys themselves are never shown again. ' +
    '--json prints the API page as it is: {"data": [key, …], "next_cursor": string | null}.',
  examples: [
    ['hook api-keys list', 'the newest 20 keys'],
    ['hook api-keys list --json | jq -r \'.data[] | select(.name == "ci") | .id\'', 'the id of the key named ci'],
  ],
  configure(command) {
    command
      .option('--limit <n>', 'keys per page, 1–100 (default 20)', parseLimit)
      .option('--cursor <cursor>', 'the next_cursor of the previous page');
  },
  async run(context, _args, options) {
    const client = await context.client();
    const page = await client.apiKeys.list({ limit: options.limit, cursor: options.cursor });
    await context.out.result(page, [apiKeyTable(page.data)]);
    if (page.next_cursor) context.out.hint(`More: hook api-keys list --cursor ${page.next_cursor}`);
  },
});
