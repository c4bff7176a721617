import { defineCommand } from '../../command.ts';
import { parseDestinationId } from '../../option-parsers.ts';
import { secretView } from '../../views.ts';

export default defineCommand<[string], object>({
  path: ['destinations', 'rotate-secret'],
  summary: 'Make a new signing secret for one destination; the old one keeps signing beside it for 24 hours',
  description:
    'Make a new signing secret for a destination. For 24 hours its deliveries carry signatures with both the new and the old secret, ' +
    'so its receiver can switch over without dropping a delivery. Other destinations keep their secrets.',
  examples: [
    ['hook destinations rotate-secret dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'rotate and show both secrets'],
    ['hook destinations rotate-secret dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --json | jq -r .secret', 'just the new secret'],
  ],
  configure(command) {
    command.argument('<destination>', 'destination id (dst_…)', parseDestinationId);
  },
  async run(context, [id]) {
    const client = await context.client();
    const secret = await client.destinations.rotateSecret(id);
    await context.out.result(secret, secretView(secret));
    context.out.hint('Update that receiver to the new secret within 24 hours.');
  },
});
