import { defineCommand } from '../../command.ts';
import { resolveEndpoint } from '../../endpoint-ref.ts';
import { endpointView } from '../../views.ts';

export default defineCommand<[string], object>({
  path: ['endpoints', 'get'],
  summary: 'Show one endpoint',
  examples: [
    ['hook endpoints get orders', 'by name'],
    ['hook endpoints get ep_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --json', 'by id, as JSON'],
  ],
  configure(command) {
    command.argument('<endpoint>', 'endpoint id (ep_…) or name');
  },
  async run(context, [ref]) {
    const client = await context.client();
    const endpoint = await resolveEndpoint(client, ref);
    await context.out.result(endpoint, endpointView(endpoint));
  },
});
