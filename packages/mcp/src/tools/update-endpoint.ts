import { ENDPOINT_STATUSES } from '@hook/core';
import { z } from 'zod';
import { destinationTargetSchema, endpointSchema, filterInputSchema, transformationInputSchema, verificationInputSchema, responseInputSchema, handshakeInputSchema, dedupeInputSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'update_endpoint',
  title: 'Update endpoint',
  description:
    'Change an endpoint (PATCH /v1/endpoints/{id}): its name, destination, status, transformation, filter, signature verification, custom response, handshake or dedupe (docs/sources.md). Fields left out stay as they are. ' +
    'Status `paused` accepts events but holds delivery; `disabled` refuses events; `active` resumes.',
  input: {
    endpoint_id: z.string().describe('ep_…'),
    name: z.string().min(1).optional(),
    destination: destinationTargetSchema.optional(),
    status: z.enum(ENDPOINT_STATUSES).optional(),
    transformation: transformationInputSchema.optional(),
    filter: filterInputSchema.optional(),
    verification: verificationInputSchema.optional(),
    response: responseInputSchema.optional(),
    handshake: handshakeInputSchema.optional(),
    dedupe: dedupeInputSchema.optional(),
  },
  output: { endpoint: endpointSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async run(client, { endpoint_id, ...changes }) {
    const endpoint = await client.endpoints.update(endpoint_id, changes);
    return { result: { endpoint }, summary: `Updated endpoint ${endpoint.id} (${endpoint.name}), ${endpoint.status}` };
  },
});
