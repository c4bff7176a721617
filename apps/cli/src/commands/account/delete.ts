import { defineCommand } from '../../command.ts';
import { UsageError } from '../../errors.ts';

export default defineCommand<[], { confirm?: string }>({
  path: ['account', 'delete'],
  summary: 'Erase the account and everything in it for good (admins only; --confirm <account id>)',
  description:
    'Erase the account of the API key in use (DELETE /v1/account): its endpoints, destinations, events, deliveries and attempts, ' +
    'API keys, members, usage, plan history and notifications. Its ingest URLs answer 404 from then on and every key of it stops working. ' +
    'Nothing can be restored.\n' +
    'It asks for no confirmation on the terminal: --confirm must be the account\'s own id (`hook account get` shows it), so a script ' +
    'holding another account\'s key cannot erase the wrong one. Deliveries in flight are let finish first, so it may take a few seconds.\n' +
    'When the key came from the profile, the profile is removed too (its key no longer works). --json prints the API answer: ' +
    '{"id": "acct_…", "deleted": true, "erased": {"endpoints", "destinations", "events", "api_keys", "members"}}.',
  examples: [
    ['hook account delete --confirm acct_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'erase the account for good'],
    ['hook account delete --confirm "$(hook account get --json | jq -r .account.id)" --json', 'in a script that means it'],
  ],
  configure(command) {
    command.option('--confirm <account-id>', "the account's own id (acct_…), confirming the erasure");
  },
  async run(context, _args, options) {
    const client = await context.client();
    if (options.confirm === undefined || options.confirm === '') {
      const { account } = await client.account.get();
      throw new UsageError(
        `This erases account ${account.id} and everything in it for good; it needs --confirm with the account's id`,
        `If you mean it, run \`hook account delete --confirm ${account.id}\`.`,
      );
    }
    const deleted = await client.account.delete(options.confirm);
    const { erased } = deleted;
    const forget = context.settings.apiKeySource === 'profile';
    if (forget) context.config.removeProfile(context.settings.profile);
    await context.out.result(deleted, [
      {
        kind: 'text',
        text: `Deleted account ${deleted.id}: erased ${erased.endpoints} endpoints, ${erased.destinations} destinations, ${erased.events} events, ` +
          `${erased.api_keys} API keys and ${erased.members} members. Its ingest URLs now answer 404.`,
      },
    ]);
    if (forget) context.out.hint(`Removed profile '${context.settings.profile}', whose key no longer works. \`hook signup\` makes a new account.`);
  },
});
