import { z } from 'zod';
import { endpointSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'get_endpoint',
  title: 'Get endpoint',
  description: 'One endpoint by id (GET /v1/endpoints/{id}): its ingest URL, status and destination.',
  pathId: 'endpoint_id',
  input: { endpoint_id: z.string().describe('ep_…') },
  output: { endpoint: endpointSchema },
  annotations: { readOnlyHint: true },
  async run(client, input) {
    const endpoint = await client.endpoints.get(input.endpoint_id);
    return { result: { endpoint }, summary: `Endpoint ${endpoint.id} (${endpoint.name}), ${endpoint.status}` };
  },
});
