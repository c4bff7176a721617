import { defineCommand } from '../../command.ts';
import { accountView } from '../../views.ts';

export default defineCommand<[], object>({
  path: ['account', 'get'],
  summary: "Show the account, its plan's limits, this month's usage and its plan history",
  description:
    "Show the account of the API key in use (GET /v1/account): id, plan, settings, what the plan allows, this month's usage (events accepted, exact; endpoints; members) and every plan change, newest first.",
  examples: [
    ['hook account get', 'plan, limits, usage and plan history'],
    ['hook account get --json', '{account, limits, usage, plan_history} as JSON'],
  ],
  async run(context) {
    const client = await context.client();
    const details = await client.account.get();
    await context.out.result(details, accountView(details));
  },
});
