import { z } from 'zod';
import { destinationTargetSchema, endpointSchema, filterInputSchema, transformationInputSchema, verificationInputSchema, responseInputSchema, handshakeInputSchema, dedupeInputSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'create_endpoint',
  title: 'Create endpoint',
  description:
    'Create an endpoint (POST /v1/endpoints): a receiving URL (`endpoint.url`) that webhook providers send events to. ' +
    'Its events go to `destination`: {"type":"url","url":…} for signed POSTs to a URL, or {"type":"cli"} (default) to wait for `hook listen`.',
  input: {
    name: z.string().min(1).describe('A name to tell endpoints apart, e.g. "stripe-dev"'),
    destination: destinationTargetSchema.optional(),
    transformation: transformationInputSchema.optional(),
    filter: filterInputSchema.optional(),
    verification: verificationInputSchema.optional(),
    response: responseInputSchema.optional(),
    handshake: handshakeInputSchema.optional(),
    dedupe: dedupeInputSchema.optional(),
  },
  output: { endpoint: endpointSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async run(client, input) {
    const endpoint = await client.endpoints.create({
      name: input.name,
      destination: input.destination,
      ...(input.transformation !== undefined ? { transformation: input.transformation } : {}),
      ...(input.filter !== undefined ? { filter: input.filter } : {}),
      ...(input.verification !== undefined ? { verification: input.verification } : {}),
      ...(input.response !== undefined ? { response: input.response } : {}),
      ...(input.handshake !== undefined ? { handshake: input.handshake } : {}),
      ...(input.dedupe !== undefined ? { dedupe: input.dedupe } : {}),
    });
    return { result: { endpoint }, summary: `Created endpoint ${endpoint.id} (${endpoint.name}); send events to ${endpoint.url}` };
  },
});
