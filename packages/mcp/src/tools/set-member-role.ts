import * as S from '@hook/core/schemas';
import { z } from 'zod';
import { inputShapeOf, memberSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'set_member_role',
  title: 'Change member role',
  description:
    "Make a team member an admin, or an admin a member (PATCH /v1/members/{id}; needs an admin's key). It applies to " +
    "the member's keys at once. Demoting the account's last admin fails with last_admin.",
  pathId: 'member_id',
  input: { member_id: z.string().describe('mem_…'), ...inputShapeOf(S.MemberUpdateSchema) },
  output: { member: memberSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async run(client, input) {
    const member = await client.members.setRole(input.member_id, input.role);
    return { result: { member }, summary: `Member ${member.id} is now ${member.role}` };
  },
});
