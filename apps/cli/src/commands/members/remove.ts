import { defineCommand } from '../../command.ts';

export default defineCommand<[string], object>({
  path: ['members', 'remove'],
  summary: "Remove a team member (admins only); their API keys stop working at once",
  description: 'Remove a member (DELETE /v1/members/{id}) and revoke every API key of theirs at once. The account keeps at least one admin: removing the last one fails with last_admin.',
  examples: [
    ['hook members remove mem_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'remove a member'],
    ['hook members remove mem_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --json', 'prints {"id": …, "removed": true}'],
  ],
  configure(command) {
    command.argument('<id>', 'member id (mem_…, from `hook members list`)');
  },
  async run(context, [id]) {
    const client = await context.client();
    await client.members.delete(id);
    await context.out.result({ id, removed: true }, [{ kind: 'text', text: `Removed member ${id}. Their API keys no longer work.` }]);
  },
});
