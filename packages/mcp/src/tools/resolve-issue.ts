import { z } from 'zod';
import { issueSummary } from '../issues.ts';
import { issueStateSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'resolve_issue',
  title: 'Resolve issue',
  description: 'Resolve an issue by hand (POST /v1/issues/{id}/resolve) without retrying its events; a new failure of its kind reopens it.',
  pathId: 'issue_id',
  input: { issue_id: z.string().describe('iss_…') },
  output: { issue: issueStateSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(client, input) {
    const issue = await client.issues.resolve(input.issue_id);
    return { result: { issue }, summary: issueSummary(issue) };
  },
});
