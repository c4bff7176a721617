import { z } from 'zod';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'delete_endpoint',
  title: 'Delete endpoint',
  description: 'Delete an endpoint and its events (DELETE /v1/endpoints/{id}). Its ingest URL stops accepting events. This cannot be undone.',
  pathId: 'endpoint_id',
  input: { endpoint_id: z.string().describe('ep_…') },
  output: { deleted: z.literal(true), endpoint_id: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async run(client, input) {
    await client.endpoints.delete(input.endpoint_id);
    return { result: { deleted: true as const, endpoint_id: input.endpoint_id }, summary: `Deleted endpoint ${input.endpoint_id}` };
  },
});
