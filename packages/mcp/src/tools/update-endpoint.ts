import * as S from '@hook/core/schemas';
import { z } from 'zod';
import { endpointSchema, ENDPOINT_FIELD_DESCRIPTIONS, inputShapeOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'update_endpoint',
  title: 'Update endpoint',
  description:
    'Change an endpoint (PATCH /v1/endpoints/{id}): its name, destination, status, transformation, filter, signature verification, custom response, handshake or dedupe (docs/sources.md). Fields left out stay as they are. ' +
    'Status `paused` accepts events but holds delivery; `disabled` refuses events; `active` resumes.',
  pathId: 'endpoint_id',
  input: { endpoint_id: z.string().describe('ep_…'), ...inputShapeOf(S.EndpointUpdateSchema, ENDPOINT_FIELD_DESCRIPTIONS) },
  output: { endpoint: endpointSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async run(client, { endpoint_id, ...changes }) {
    const endpoint = await client.endpoints.update(endpoint_id, changes);
    return { result: { endpoint }, summary: `Updated endpoint ${endpoint.id} (${endpoint.name}), ${endpoint.status}` };
  },
});
