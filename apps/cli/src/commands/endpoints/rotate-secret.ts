import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import { secretView } from '../../views.ts';

export default defineCommand<[string], object>({
  path: ['endpoints', 'rotate-secret'],
  summary: 'Make a new signing secret; the old one keeps signing beside it for 24 hours',
  description:
    'Make a new signing secret. For 24 hours deliveries carry signatures with both the new and the old secret, ' +
    'so receivers can switch over without dropping a delivery.',
  examples: [
    ['hook endpoints rotate-secret orders', 'rotate and show both secrets'],
    ['hook endpoints rotate-secret orders --json | jq -r .secret', 'just the new secret'],
  ],
  configure(command) {
    command.argument('<endpoint>', 'endpoint id (ep_…) or name');
  },
  async run(context, [ref]) {
    const client = await context.client();
    const id = await endpointIdOf(client, ref);
    const secret = await client.endpoints.rotateSecret(id).catch((error: unknown) => {
      throw endpointErrorFor(ref, error);
    });
    await context.out.result(secret, secretView(secret));
    context.out.hint('Update your receiver to the new secret within 24 hours.');
  },
});
