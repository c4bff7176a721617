import { z } from 'zod';
import { issueSummary } from '../issues.ts';
import { issueStateSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'acknowledge_issue',
  title: 'Acknowledge issue',
  description: 'Mark an issue acknowledged (POST /v1/issues/{id}/acknowledge): someone is on it; new failures still count but no longer alert.',
  pathId: 'issue_id',
  input: { issue_id: z.string().describe('iss_…') },
  output: { issue: issueStateSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(client, input) {
    const issue = await client.issues.acknowledge(input.issue_id);
    return { result: { issue }, summary: issueSummary(issue) };
  },
});
