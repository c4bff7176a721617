import { countOf } from '@hook/core';
import * as S from '@hook/core/schemas';
import { z } from 'zod';
import { cursorInput, limitInput, outputOf, pageFields } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'list_issue_events',
  title: 'List issue events',
  description: 'The events an issue covers, newest failure first (GET /v1/issues/{id}/events), each with its delivery to the issue\'s destination and last failure; get_event shows one.',
  pathId: 'issue_id',
  input: { issue_id: z.string().describe('iss_…'), limit: limitInput, cursor: cursorInput },
  output: { data: z.array(outputOf(S.IssueEventSchema)), ...pageFields },
  annotations: { readOnlyHint: true },
  async run(client, input) {
    const page = await client.issues.events(input.issue_id, { limit: input.limit, cursor: input.cursor });
    return {
      result: { data: page.data, next_cursor: page.next_cursor },
      summary: `${countOf(page.data.length, 'event')} of ${input.issue_id}${page.next_cursor ? '; more with cursor ' + page.next_cursor : ''}`,
    };
  },
});
