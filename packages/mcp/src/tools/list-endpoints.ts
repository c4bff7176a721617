import { countOf } from '@hook/core';
import { z } from 'zod';
import { cursorInput, endpointSchema, limitInput, pageFields } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'list_endpoints',
  title: 'List endpoints',
  description: 'List the account\'s endpoints, newest first (GET /v1/endpoints), one page at a time.',
  input: { limit: limitInput, cursor: cursorInput },
  output: { data: z.array(endpointSchema), ...pageFields },
  annotations: { readOnlyHint: true },
  async run(client, input) {
    const page = await client.endpoints.list({ limit: input.limit, cursor: input.cursor });
    return {
      result: { data: page.data, next_cursor: page.next_cursor },
      summary: `${countOf(page.data.length, 'endpoint')}${page.next_cursor ? '; more with cursor ' + page.next_cursor : ''}`,
    };
  },
});
