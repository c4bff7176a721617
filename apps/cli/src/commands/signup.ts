import { defineCommand } from '../command.ts';
import { ALREADY_LOGGED_IN, UserError } from '../errors.ts';

export default defineCommand<[], { force?: boolean; email?: string }>({
  path: ['signup'],
  summary: 'Create an account on the relay and save its API key in the profile',
  description:
    'Create an account on the relay (POST /v1/accounts, no key needed) and save its first API key, with the relay URL, in the profile.\n' +
    'The key is shown once; it stays in the config file (mode 0600).',
  examples: [
    ['hook signup', 'an account on the local relay (http://127.0.0.1:8080), saved as the default profile'],
    ['hook signup --api-url https://hooks.example.com --profile prod', 'an account on another relay, saved as profile "prod"'],
    ['hook signup --json', 'print {account, api_key} as JSON'],
    ['hook signup --email ada@example.com', 'store a contact address with the account (never verified or mailed)'],
  ],
  configure(command) {
    command.option('--force', 'replace an API key already saved in the profile');
    command.option('--email <address>', 'a contact address to store with the account');
  },
  async run(context, _args, options) {
    const { settings, config, out } = context;
    if (config.profile(settings.profile)?.api_key !== undefined && !options.force) {
      throw new UserError(ALREADY_LOGGED_IN, `Profile '${settings.profile}' already has an API key (in ${config.path})`);
    }
    const client = await context.client({ needsKey: false });
    const signup = await client.accounts.create(options.email === undefined ? {} : { email: options.email });
    config.saveProfile(settings.profile, { api_url: settings.apiUrl, api_key: signup.api_key });
    out.note(`Saved the API key in profile '${settings.profile}' (${config.path}).`);
    await out.result(signup, [
      {
        kind: 'fields',
        rows: [
          ['Account', signup.account.id],
          ['Plan', signup.account.plan],
          ...(signup.account.email === null ? [] : [['Email', signup.account.email] as const]),
          ['API key', signup.api_key],
          ['Relay', settings.apiUrl],
          ['Profile', settings.profile],
        ],
      },
    ]);
    out.hint('The key is shown only once; it is saved in the profile. Next: hook endpoints create <name>');
  },
});
