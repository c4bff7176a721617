import { defineCommand } from '../../command.ts';
import { parseDestinationId } from '../../option-parsers.ts';
import { destinationView } from '../../views.ts';

interface UnblockOptions {
  key: string;
}

export default defineCommand<[string], UnblockOptions>({
  path: ['destinations', 'unblock'],
  summary: 'Release a blocked key of an ordered destination: the events waiting behind it go out, in order',
  description:
    'Release a key of an ordered destination held by an event that gave up (POST /v1/destinations/{id}/unblock). The event that gave up stays failed (replay it later if you want it delivered); ' +
    'the events waiting behind it are delivered in order. `hook destinations blocked <destination>` lists the blocked keys. An unkeyed destination\'s key is \'\' (--key \'\').',
  examples: [
    ['hook destinations unblock dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --key cus_42', 'let customer cus_42\'s events go on'],
    ['hook destinations unblock dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --key \'\'', 'an ordered destination without a key, or events that had none'],
  ],
  configure(command) {
    command
      .argument('<destination>', 'destination id (dst_…)', parseDestinationId)
      .requiredOption('--key <key>', 'the blocked key to release (as `hook destinations blocked` shows it)');
  },
  async run(context, [id], options) {
    const client = await context.client();
    const destination = await client.destinations.unblock(id, options.key);
    await context.out.result(destination, [
      { kind: 'text', text: `Released key ${JSON.stringify(options.key)} of ${id}: the events waiting behind it go out in order.` },
      ...destinationView(destination),
    ]);
  },
});
