import { z } from 'zod';
import * as S from '@hook/core/schemas';
import { DESTINATION_OPTION_DESCRIPTIONS } from './update-destination.ts';
import { destinationSchema, ENDPOINT_FIELD_DESCRIPTIONS, inputShapeOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'add_destination',
  title: 'Add destination',
  description:
    'Add a destination to an endpoint (POST /v1/endpoints/{id}/destinations, at most 10): every event received from now on is also delivered there, ' +
    'signed with the destination\'s own secret, with its own retries, status and health. The transformation, filter, limits and options (auth, tls, signature_scheme, ordering, delay_seconds) apply to it alone.',
  pathId: 'endpoint_id',
  input: { endpoint_id: z.string().describe('ep_…'), ...inputShapeOf(S.DestinationCreateSchema, { ...ENDPOINT_FIELD_DESCRIPTIONS, ...DESTINATION_OPTION_DESCRIPTIONS }) },
  output: { destination: destinationSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(client, { endpoint_id, ...body }) {
    const destination = await client.destinations.create(endpoint_id, body);
    const target = destination.destination.type === 'cli' ? 'cli' : `${destination.destination.type} ${destination.destination.url}`;
    return { result: { destination }, summary: `Added destination ${destination.id} (${target}) to endpoint ${endpoint_id}` };
  },
});
