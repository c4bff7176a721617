import { defineCommand } from '../../command.ts';
import { endpointErrorFor, endpointIdOf } from '../../endpoint-ref.ts';
import { destinationTable } from '../../views.ts';

export default defineCommand<[string], object>({
  path: ['destinations', 'list'],
  summary: 'List an endpoint\'s destinations, first first, with their status and health',
  description: 'List where an endpoint\'s events go: every destination (a URL, or cli for `hook listen`), its status, health and limits. --json prints {"data": [destination, …]}.',
  examples: [
    ['hook destinations list orders', 'by endpoint name'],
    ['hook destinations list ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --json | jq -r \'.data[] | select(.status != "active") | .id\'', 'destinations that are not delivering'],
  ],
  configure(command) {
    command.argument('<endpoint>', 'endpoint id (ep_…) or name');
  },
  async run(context, [ref]) {
    const client = await context.client();
    const id = await endpointIdOf(client, ref);
    const list = await client.destinations.list(id).catch((error: unknown) => {
      throw endpointErrorFor(ref, error);
    });
    await context.out.result(list, [destinationTable(list.data)]);
  },
});
