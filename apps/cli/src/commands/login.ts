import { defineCommand } from '../command.ts';
import { UsageError } from '../errors.ts';

export default defineCommand<[], object>({
  path: ['login'],
  summary: 'Check an API key against the relay and save it in the profile',
  description:
    'Check an API key (GET /v1/account) and save it, with the relay URL, in the profile.\n' +
    'The key comes from --api-key or HOOK_API_KEY. A key the relay refuses is not saved (exit 1).',
  examples: [
    ['hook login --api-key hk_…', 'use this key from now on (default profile, local relay)'],
    ['hook login --api-key hk_… --api-url https://hooks.example.com --profile prod', 'a key for another relay, as profile "prod"'],
  ],
  async run(context) {
    const { settings, config, out } = context;
    if (settings.apiKey === undefined || (settings.apiKeySource !== 'flag' && settings.apiKeySource !== 'env')) {
      throw new UsageError('hook login needs the key to save', 'Pass it with --api-key hk_… (or set HOOK_API_KEY); `hook signup` makes a new account and key.');
    }
    const client = await context.client();
    const { account } = await client.account.get();
    config.saveProfile(settings.profile, { api_url: settings.apiUrl, api_key: settings.apiKey });
    out.note(`Saved the API key in profile '${settings.profile}' (${config.path}).`);
    await out.result({ account, api_url: settings.apiUrl, profile: settings.profile }, [
      { kind: 'fields', rows: [['Account', account.id], ['Plan', account.plan], ['Relay', settings.apiUrl], ['Profile', settings.profile]] },
    ]);
  },
});
