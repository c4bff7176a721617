import { z } from 'zod';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'remove_member',
  title: 'Remove team member',
  description:
    "Remove a team member (DELETE /v1/members/{id}; needs an admin's key). Every API key of theirs stops working at " +
    "once. This cannot be undone. Removing the account's last admin fails with last_admin.",
  pathId: 'member_id',
  input: { member_id: z.string().describe('mem_…') },
  output: { removed: z.literal(true), member_id: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async run(client, input) {
    await client.members.delete(input.member_id);
    return { result: { removed: true as const, member_id: input.member_id }, summary: `Removed member ${input.member_id}; their API keys no longer work` };
  },
});
