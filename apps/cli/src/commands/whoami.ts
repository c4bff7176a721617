import { apiKeyPrefix } from '@hook/core';
import { defineCommand } from '../command.ts';

export default defineCommand<[], object>({
  path: ['whoami'],
  summary: 'Show the account, relay and key this command line uses',
  description: 'Show the account of the API key in use (GET /v1/account), the relay URL, the profile, and where the key and URL came from (flag, env, profile).',
  examples: [
    ['hook whoami', 'which account and relay am I using?'],
    ['hook whoami --profile prod --json', 'the same for profile "prod", as JSON'],
  ],
  async run(context) {
    const { settings, out } = context;
    const client = await context.client();
    const { account } = await client.account.get();
    const keyPrefix = apiKeyPrefix(settings.apiKey!);
    await out.result(
      { account, api_url: settings.apiUrl, api_url_source: settings.apiUrlSource, profile: settings.profile, api_key_prefix: keyPrefix, api_key_source: settings.apiKeySource },
      [
        {
          kind: 'fields',
          rows: [
            ['Account', account.id],
            ['Plan', account.plan],
            ['Relay', `${settings.apiUrl} (from ${settings.apiUrlSource})`],
            ['API key', `${keyPrefix}… (from ${settings.apiKeySource})`],
            ['Profile', settings.profile],
          ],
        },
      ],
    );
  },
});
