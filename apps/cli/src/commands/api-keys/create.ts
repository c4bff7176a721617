import { defineCommand } from '../../command.ts';
import { apiKeyView } from '../../views.ts';

export default defineCommand<[], { name?: string }>({
  path: ['api-keys', 'create'],
  summary: 'Create another API key of your member and print it, shown once',
  description:
    'Create an API key (POST /v1/api-keys) that acts as the member whose key makes it, with the same role. The key is shown only here: ' +
    'store it where it is needed (a CI secret, `hook login --api-key … --profile ci`). Give each machine or script its own key, so one ' +
    'can be revoked (`hook api-keys revoke <id>`) without the others.\n' +
    '--json prints {"id": "key_…", "name", "prefix", "member_id", "created_at", "api_key": "hk_…"}; `--json | jq -r .api_key` gives just the key.',
  examples: [
    ['hook api-keys create --name ci', 'a key for CI, printed once'],
    ['hook api-keys create --name deploy --json | jq -r .api_key', 'just the new key, for a script'],
  ],
  configure(command) {
    command.option('--name <name>', 'a label to tell the key apart in `hook api-keys list`');
  },
  async run(context, _args, options) {
    const client = await context.client();
    const created = await client.apiKeys.create(options.name === undefined ? {} : { name: options.name });
    await context.out.result(created, [
      ...apiKeyView(created),
      { kind: 'heading', text: 'API key (shown only once: store it now)' },
      { kind: 'text', text: created.api_key },
    ]);
    context.out.hint(`Use it with: hook login --api-key ${created.api_key.slice(0, 11)}… --profile <name>; revoke it with: hook api-keys revoke ${created.id}`);
  },
});
