import { defineCommand } from '../../command.ts';
import { accountView } from '../../views.ts';

export default defineCommand<[], object>({
  path: ['account', 'get'],
  summary: "Show the account, its plan's limits and its plan history",
  description:
    "Show the account of the API key in use (GET /v1/account): id, plan, email, the plan's stated limits and every plan change, newest first.\n" +
    'The limits are what the plan states; the relay does not enforce them yet.',
  examples: [
    ['hook account get', 'plan, limits and plan history'],
    ['hook account get --json', '{account, limits, plan_history} as JSON'],
  ],
  async run(context) {
    const client = await context.client();
    const details = await client.account.get();
    await context.out.result(details, accountView(details));
  },
});
