import { z } from 'zod';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'delete_destination',
  title: 'Delete destination',
  description:
    'Delete one destination of an endpoint (DELETE /v1/destinations/{id}): it gets no more deliveries; its past attempts stay in the history. ' +
    'An endpoint keeps at least one destination (error last_destination): delete the endpoint instead. This cannot be undone.',
  pathId: 'destination_id',
  input: { destination_id: z.string().describe('dst_…') },
  output: { deleted: z.literal(true), destination_id: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async run(client, input) {
    await client.destinations.delete(input.destination_id);
    return { result: { deleted: true as const, destination_id: input.destination_id }, summary: `Deleted destination ${input.destination_id}` };
  },
});
