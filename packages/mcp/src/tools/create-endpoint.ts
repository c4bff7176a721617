import * as S from '@hook/core/schemas';
import { endpointSchema, ENDPOINT_FIELD_DESCRIPTIONS, inputShapeOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'create_endpoint',
  title: 'Create endpoint',
  description:
    'Create an endpoint (POST /v1/endpoints): a receiving URL (`endpoint.url`) that webhook providers send events to. ' +
    'Its events go to `destination`: {"type":"url","url":…} for signed POSTs to a URL, or {"type":"cli"} (default) to wait for `hook listen`.',
  input: inputShapeOf(S.EndpointCreateSchema, ENDPOINT_FIELD_DESCRIPTIONS),
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
