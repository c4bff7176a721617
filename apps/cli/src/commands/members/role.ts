import { Argument } from 'commander';
import type { MemberRole } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { memberView } from '../../views.ts';

export default defineCommand<[string, MemberRole], object>({
  path: ['members', 'role'],
  summary: "Change a team member's role (admins only)",
  description:
    "Make a member an admin, or an admin a member (PATCH /v1/members/{id}); it applies to the member's keys at once.\n" +
    'The account keeps at least one admin: demoting the last one fails with last_admin.',
  examples: [
    ['hook members role mem_01JD2Y0Z3M4N5P6Q7R8S9TVWXY admin', 'promote'],
    ['hook members role mem_01JD2Y0Z3M4N5P6Q7R8S9TVWXY member --json', 'demote; print the member as JSON'],
  ],
  configure(command) {
    command
      .argument('<id>', 'member id (mem_…, from `hook members list`)')
      .addArgument(new Argument('<role>', 'the new role').choices(['admin', 'member']));
  },
  async run(context, [id, role]) {
    const client = await context.client();
    const member = await client.members.setRole(id, role);
    await context.out.result(member, memberView(member));
  },
});
