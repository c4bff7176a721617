import { ENDPOINT_STATUSES } from '@hook/core';
import { z } from 'zod';
import { destinationSchema, destinationTargetSchema, filterInputSchema, maxInFlightInput, ratePerSecondInput, transformationInputSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'update_destination',
  title: 'Update destination',
  description:
    'Change one destination (PATCH /v1/destinations/{id}): its target, status, transformation, filter or limits. Fields left out stay as they are; null removes a rule or limit. ' +
    'Status `paused` holds its deliveries; `disabled` stops them; `active` resumes, and its waiting deliveries are due at once (also after the relay disabled it for 410 or failing).',
  input: {
    destination_id: z.string().describe('dst_…'),
    destination: destinationTargetSchema.optional(),
    status: z.enum(ENDPOINT_STATUSES).optional(),
    transformation: transformationInputSchema.optional(),
    filter: filterInputSchema.optional(),
    rate_per_second: ratePerSecondInput.optional(),
    max_in_flight: maxInFlightInput.optional(),
  },
  output: { destination: destinationSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run(client, { destination_id, ...changes }) {
    const destination = await client.destinations.update(destination_id, changes);
    return { result: { destination }, summary: `Updated destination ${destination.id}, ${destination.status}` };
  },
});
