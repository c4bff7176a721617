import { accountDetailsShape } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'verify_custom_domain',
  title: 'Verify the custom domain',
  description:
    'Check the DNS record that proves the account\'s pending custom_domain is the user\'s (POST /v1/account/custom-domain/verify; ' +
    'admin keys only). update_account with custom_domain only claims a name: it stays pending, changing nothing, until the TXT ' +
    'record in account.custom_domain_verification ({type, name, value}) is served; ask the user to add it at their DNS provider, ' +
    'then call this. Returns the account with custom_domain_status "verified" once found. A missing or wrong record fails with ' +
    'custom_domain_unverified naming the record expected and what DNS answered (new records can take minutes to appear); a name ' +
    'another account verified first fails with custom_domain_taken.',
  input: {},
  output: accountDetailsShape,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run(client) {
    const details = await client.account.verifyCustomDomain();
    return { result: details, summary: `Account ${details.account.id}: the custom domain ${details.account.custom_domain} is verified and in use` };
  },
});
