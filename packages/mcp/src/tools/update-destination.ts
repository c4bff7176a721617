import * as S from '@hook/core/schemas';
import { z } from 'zod';
import { destinationSchema, ENDPOINT_FIELD_DESCRIPTIONS, inputShapeOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'update_destination',
  title: 'Update destination',
  description:
    'Change one destination (PATCH /v1/destinations/{id}): its target, status, transformation, filter or limits. Fields left out stay as they are; null removes a rule or limit. ' +
    'Status `paused` holds its deliveries; `disabled` stops them; `active` resumes, and its waiting deliveries are due at once (also after the relay disabled it for 410 or failing).',
  pathId: 'destination_id',
  input: { destination_id: z.string().describe('dst_…'), ...inputShapeOf(S.DestinationUpdateSchema, ENDPOINT_FIELD_DESCRIPTIONS) },
  output: { destination: destinationSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run(client, { destination_id, ...changes }) {
    const destination = await client.destinations.update(destination_id, changes);
    return { result: { destination }, summary: `Updated destination ${destination.id}, ${destination.status}` };
  },
});
