import { countOf } from '@hook/core';
import * as S from '@hook/core/schemas';
import { z } from 'zod';
import { ENDPOINT_REF_DESCRIPTION, endpointIdOf } from '../endpoint-ref.ts';
import { inputShapeOf, issueSchema, pageFields } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'list_issues',
  title: 'List issues',
  description:
    'Failed deliveries grouped by destination and kind of failure (GET /v1/issues), most recently seen first: what is failing, since when, how many events. ' +
    'get_issue and list_issue_events show one; retry_issue retries its events once the receiver is fixed.',
  input: inputShapeOf(S.IssueListQuery, {
    status: 'Comma-separated: open, acknowledged, resolved; default open,acknowledged',
    endpoint_id: `Only this endpoint's issues: ${ENDPOINT_REF_DESCRIPTION}`,
    destination_id: 'Only this destination\'s issues (dst_…)',
    limit: 'Items per page, 1–100 (default 20)',
    cursor: '`next_cursor` of the previous page',
  }),
  output: { data: z.array(issueSchema), ...pageFields },
  annotations: { readOnlyHint: true },
  async run(client, input) {
    const endpointId = input.endpoint_id === undefined ? undefined : await endpointIdOf(client, input.endpoint_id);
    const page = await client.issues.list({ ...input, endpoint_id: endpointId });
    const open = page.data.filter((issue) => issue.status === 'open').length;
    return {
      result: { data: page.data, next_cursor: page.next_cursor },
      summary: `${countOf(page.data.length, 'issue')} (${open} open)${page.next_cursor ? '; more with cursor ' + page.next_cursor : ''}`,
    };
  },
});
