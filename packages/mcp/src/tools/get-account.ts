import { accountSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'get_account',
  title: 'Get account',
  description: 'The account the API key belongs to (GET /v1/account): id, plan and whatever the relay reports about usage and limits.',
  input: {},
  output: { account: accountSchema },
  annotations: { readOnlyHint: true },
  async run(client) {
    const { account } = await client.account.get();
    return { result: { account }, summary: `Account ${account.id}, plan ${account.plan}` };
  },
});
