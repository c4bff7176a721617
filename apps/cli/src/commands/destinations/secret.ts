import { defineCommand } from '../../command.ts';
import { parseDestinationId } from '../../option-parsers.ts';
import { secretView } from '../../views.ts';

export default defineCommand<[string], object>({
  path: ['destinations', 'secret'],
  summary: 'Show the signing secret of one destination',
  description: 'Show the destination\'s signing secret (whsec_…), and the previous one while it still signs after a rotation. Each destination signs with its own; its receiver verifies deliveries with it (docs/receiving.md).',
  examples: [
    ['hook destinations secret dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'the secret to configure in that receiver'],
    ['hook destinations secret dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --json | jq -r .secret', 'just the secret'],
  ],
  configure(command) {
    command.argument('<destination>', 'destination id (dst_…)', parseDestinationId);
  },
  async run(context, [id]) {
    const client = await context.client();
    const secret = await client.destinations.secret(id);
    await context.out.result(secret, secretView(secret));
  },
});
