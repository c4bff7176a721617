import { defineCommand } from '../../command.ts';

export default defineCommand<[string], object>({
  path: ['api-keys', 'revoke'],
  summary: 'Revoke an API key: it stops working at once (your own keys; admins any)',
  description:
    'Revoke an API key by id (DELETE /v1/api-keys/{id}); `hook api-keys list` shows the ids. It stops working at once, live streams ' +
    'opened with it included. Members may revoke their own keys, admins anyone\'s. The account keeps at least one admin key: revoking ' +
    'the last one fails with last_api_key.',
  examples: [
    ['hook api-keys revoke key_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'revoke a key'],
    ['hook api-keys revoke key_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --json', 'prints {"id": …, "revoked": true}'],
  ],
  configure(command) {
    command.argument('<id>', 'key id (key_…, from `hook api-keys list`)');
  },
  async run(context, [id]) {
    const client = await context.client();
    await client.apiKeys.delete(id);
    await context.out.result({ id, revoked: true }, [{ kind: 'text', text: `Revoked API key ${id}. It no longer works.` }]);
  },
});
