import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import { secretView } from '../../views.ts';

export default defineCommand<[string], object>({
  path: ['endpoints', 'secret'],
  summary: 'Show the signing secret that deliveries are signed with',
  description: 'Show the endpoint\'s signing secret (whsec_…), and the previous one while it still signs after a rotation. Receivers verify deliveries with it (docs/receiving.md).',
  examples: [
    ['hook endpoints secret orders', 'the secret to configure in your receiver'],
    ['hook endpoints secret orders --json | jq -r .secret', 'just the secret'],
  ],
  configure(command) {
    command.argument('<endpoint>', 'endpoint id (ep_…) or name');
  },
  async run(context, [ref]) {
    const client = await context.client();
    const id = await endpointIdOf(client, ref);
    const secret = await client.endpoints.secret(id).catch((error: unknown) => {
      throw endpointErrorFor(ref, error);
    });
    await context.out.result(secret, secretView(secret));
  },
});
