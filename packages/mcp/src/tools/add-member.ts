import * as S from '@hook/core/schemas';
import { inputShapeOf, outputShapeOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'add_member',
  title: 'Add team member',
  description:
    'Add a team member to the account (POST /v1/members; needs an admin\'s key) and create their first API key. ' +
    'The key (api_key) is returned only here and cannot be shown again: pass it to the person, not into logs. ' +
    'Role defaults to member (everything but managing members, other members\' keys and the plan). The plan caps ' +
    'the number of members, the first admin included (free: 3): past it the error is plan_limit_reached.',
  input: inputShapeOf(S.MemberCreateSchema, { email: "The member's email address; unique in the account" }),
  output: outputShapeOf(S.CreatedMemberSchema),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async run(client, input) {
    const created = await client.members.create({ email: input.email, role: input.role });
    return { result: created, summary: `Added ${created.member.email} as ${created.member.role} (${created.member.id}); their API key is in api_key, shown only once` };
  },
});
