import { countOf } from '@hook/core';
import { z } from 'zod';
import { cursorInput, limitInput, memberSchema, pageFields } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'list_members',
  title: 'List team members',
  description: "List the account's team members with their roles, newest first (GET /v1/members), one page at a time.",
  input: { limit: limitInput, cursor: cursorInput },
  output: { data: z.array(memberSchema), ...pageFields },
  annotations: { readOnlyHint: true },
  async run(client, input) {
    const page = await client.members.list({ limit: input.limit, cursor: input.cursor });
    return {
      result: { data: page.data, next_cursor: page.next_cursor },
      summary: `${countOf(page.data.length, 'member')}${page.next_cursor ? '; more with cursor ' + page.next_cursor : ''}`,
    };
  },
});
