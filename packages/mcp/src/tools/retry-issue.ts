import { countOf } from '@hook/core';
import { z } from 'zod';
import { issueStateSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'retry_issue',
  title: 'Retry issue',
  description:
    'Queue one replay attempt of every event the issue covers not yet delivered to its destination (POST /v1/issues/{id}/retry); call once the receiver is fixed. ' +
    'Follow with get_issue: events.pending falls to 0 as attempts finish; the relay resolves the issue once all are delivered.',
  pathId: 'issue_id',
  input: { issue_id: z.string().describe('iss_…') },
  output: { issue: issueStateSchema, queued: z.number().int() },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(client, input) {
    const { issue, queued } = await client.issues.retry(input.issue_id);
    return { result: { issue, queued }, summary: `Queued ${countOf(queued, 'event')} of ${issue.id} for a retry to ${issue.destination_id}` };
  },
});
