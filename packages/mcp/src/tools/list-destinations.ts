import { countOf } from '@hook/core';
import { z } from 'zod';
import { destinationSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'list_destinations',
  title: 'List destinations',
  description:
    'Where an endpoint\'s events go (GET /v1/endpoints/{id}/destinations): every destination, first first, with its target (a URL, or cli for `hook listen`), ' +
    'status, why it is disabled, rules, limits and health (consecutive failures). Each event is delivered to each destination.',
  pathId: 'endpoint_id',
  input: { endpoint_id: z.string().describe('ep_…') },
  output: { data: z.array(destinationSchema) },
  annotations: { readOnlyHint: true },
  async run(client, input) {
    const { data } = await client.destinations.list(input.endpoint_id);
    const unhealthy = data.filter((destination) => destination.status !== 'active' || destination.health.consecutive_failures > 0).length;
    return { result: { data }, summary: `${countOf(data.length, 'destination')} of ${input.endpoint_id}${unhealthy > 0 ? `, ${unhealthy} not active or failing` : ''}` };
  },
});
