import { accountDetailsShape } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'get_account',
  title: 'Get account',
  description: "The account the API key belongs to (GET /v1/account): id, plan, email, the plan's limits and the plan history (newest first).",
  input: {},
  output: accountDetailsShape,
  annotations: { readOnlyHint: true },
  async run(client) {
    const details = await client.account.get();
    return { result: details, summary: `Account ${details.account.id}, plan ${details.account.plan}` };
  },
});
