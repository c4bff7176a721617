import { defineCommand } from '../../command.ts';
import { parseDestinationId } from '../../option-parsers.ts';

export default defineCommand<[string], object>({
  path: ['destinations', 'delete'],
  summary: 'Delete a destination: it gets no more deliveries; its past attempts stay in the history',
  description: 'Delete a destination (DELETE /v1/destinations/{id}). An endpoint keeps at least one: deleting its only destination fails with last_destination (delete the endpoint instead).',
  examples: [
    ['hook destinations delete dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY', 'stop delivering there'],
    ['hook destinations delete dst_01JD2Y0Z3M4N5P6Q7R8S9TVWXY --json', 'prints {"id": …, "deleted": true}'],
  ],
  configure(command) {
    command.argument('<destination>', 'destination id (dst_…)', parseDestinationId);
  },
  async run(context, [id]) {
    const client = await context.client();
    await client.destinations.delete(id);
    await context.out.result({ id, deleted: true }, [{ kind: 'text', text: `Deleted destination ${id}. It gets no more deliveries; its attempts stay in the history.` }]);
  },
});
