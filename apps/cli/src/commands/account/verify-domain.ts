import { defineCommand } from '../../command.ts';
import { accountView } from '../../views.ts';

export default defineCommand<[], object>({
  path: ['account', 'verify-domain'],
  summary: 'Check the DNS record that proves the custom domain is yours; once found, the domain is in use',
  description:
    'Verify the account\'s custom domain (POST /v1/account/custom-domain/verify; admin keys only). ' +
    '`hook account update --custom-domain <host>` claims a domain and shows a TXT record to add at its DNS provider; ' +
    'the relay looks that record up now, and once it holds the claim\'s value the domain is in use: endpoint URLs show it ' +
    'and it receives for this account only. Until then it changes nothing. If the record is missing or wrong, the command ' +
    'fails (exit 1) naming the record expected and what DNS answered; records can take minutes to be served after you add them.',
  examples: [
    ['hook account verify-domain', 'check the TXT record now'],
    ['hook account verify-domain --json', 'print the account as JSON; custom_domain_status is "verified" once it worked'],
  ],
  async run(context) {
    const client = await context.client();
    const details = await client.account.verifyCustomDomain();
    context.out.note(`The custom domain ${details.account.custom_domain} is verified: endpoint URLs use it now.`);
    await context.out.result(details, accountView(details));
  },
});
