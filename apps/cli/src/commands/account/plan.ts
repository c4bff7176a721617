import { Argument } from 'commander';
import { PLANS, type Plan } from '@hook/core';
import { defineCommand } from '../../command.ts';
import { accountView } from '../../views.ts';

export default defineCommand<[Plan], object>({
  path: ['account', 'plan'],
  summary: 'Change the account to another plan, at once',
  description:
    'Change the plan of the account (POST /v1/account/plan), up or down, effective at once. There is no payment step.\n' +
    'Each change is recorded in the plan history; asking for the plan the account is already on changes and records nothing.',
  examples: [
    ['hook account plan pro', 'move to pro'],
    ['hook account plan free --json', 'back to free; print {account, limits, plan_history} as JSON'],
  ],
  configure(command) {
    command.addArgument(new Argument('<plan>', 'the plan to move to').choices(PLANS));
  },
  async run(context, [plan]) {
    const client = await context.client();
    const before = await client.account.get();
    const details = await client.account.changePlan(plan);
    if (before.account.plan === details.account.plan) context.out.note(`Already on ${plan}; nothing changed.`);
    else context.out.note(`Changed the plan from ${before.account.plan} to ${details.account.plan}.`);
    await context.out.result(details, accountView(details));
  },
});
