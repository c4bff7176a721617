import { z } from 'zod';
import { issueSummary } from '../issues.ts';
import { issueSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'get_issue',
  title: 'Get issue',
  description: 'One issue (GET /v1/issues/{id}): status, what the destination answered, counts, and where its events stand now (events: total, delivered, failing, pending).',
  pathId: 'issue_id',
  input: { issue_id: z.string().describe('iss_…') },
  output: { issue: issueSchema },
  annotations: { readOnlyHint: true },
  async run(client, input) {
    const issue = await client.issues.get(input.issue_id);
    return { result: { issue }, summary: issueSummary(issue) };
  },
});
