import { PLANS } from '@hook/core';
import { z } from 'zod';
import { accountDetailsShape } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'upgrade_plan',
  title: 'Change plan',
  description:
    'Change the account\'s plan at once (POST /v1/account/plan): up or down, to free, pro or enterprise. There is no payment ' +
    'step. Each change is recorded in plan_history; asking for the current plan changes and records nothing. Returns the ' +
    'account with the new plan\'s limits and its plan history.',
  input: { plan: z.enum(PLANS).describe('The plan to move to') },
  output: accountDetailsShape,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async run(client, input) {
    const before = await client.account.get();
    const details = await client.account.changePlan(input.plan);
    const from = before.account.plan;
    return {
      result: details,
      summary: from === details.account.plan ? `Account ${details.account.id} is already on ${from}; nothing changed` : `Account ${details.account.id} moved from ${from} to ${details.account.plan}`,
    };
  },
});
