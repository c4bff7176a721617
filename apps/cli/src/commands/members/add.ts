import { Option } from 'commander';
import type { MemberRole } from '@hook/client';
import { defineCommand } from '../../command.ts';
import { memberView } from '../../views.ts';

export default defineCommand<[string], { role: MemberRole }>({
  path: ['members', 'add'],
  summary: 'Add a team member (admins only) and print their first API key, shown once',
  description:
    'Add a member to the account (POST /v1/members) and create their first API key. The key is shown only here: hand it to the member, who uses it with `hook login`.\n' +
    "Members can do everything except admin-only actions (managing members, other members' keys and the plan). The plan limits how many members an account has, its first admin included.\n" +
    '--json prints {"member": {…}, "api_key": "hk_…"}.',
  examples: [
    ['hook members add dev@example.com', 'a member with the role member'],
    ['hook members add lead@example.com --role admin --json | jq -r .api_key', 'an admin; just the new key'],
  ],
  configure(command) {
    command
      .argument('<email>', "the member's email address (unique in the account)")
      .addOption(new Option('--role <role>', 'admin or member').choices(['admin', 'member']).default('member'));
  },
  async run(context, [email], options) {
    const client = await context.client();
    const created = await client.members.create({ email, role: options.role });
    await context.out.result(created, [
      ...memberView(created.member),
      { kind: 'heading', text: 'API key (shown only once: give it to the member)' },
      { kind: 'text', text: created.api_key },
    ]);
    context.out.hint(`The member signs in with: hook login --api-key ${created.api_key.slice(0, 11)}…`);
  },
});
