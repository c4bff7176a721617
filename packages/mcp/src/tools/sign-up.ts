import * as S from '@hook/core/schemas';
import { outputShapeOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'sign_up',
  title: 'Sign up',
  description:
    'Create an account on the relay and its first API key (POST /v1/accounts, no key needed). Offered only while this ' +
    'server has no API key; afterwards the other tools use the new key. The key is shown only here.',
  input: {},
  output: outputShapeOf(S.SignupSchema),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  availability: 'without_key',
  async run(client) {
    const signup = await client.accounts.create();
    return { result: signup, summary: `Created account ${signup.account.id} (plan ${signup.account.plan}); this session now uses its API key` };
  },
});
