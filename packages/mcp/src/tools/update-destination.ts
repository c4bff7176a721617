import * as S from '@hook/core/schemas';
import { z } from 'zod';
import { destinationSchema, ENDPOINT_FIELD_DESCRIPTIONS, inputShapeOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

/** Agent-facing words for a destination's target, brokers included (docs/delivery.md), shared with add_destination; its options keep the API's words. */
export const DESTINATION_OPTION_DESCRIPTIONS = {
  destination: 'Where events go: {"type":"url","url":…} (signed POSTs), {"type":"cli"} (held for `hook listen`), or a broker: {"type":"amqp","url":"amqp://…","exchange":…,"routing_key":…}, ' +
    '{"type":"nats","url":"nats://…","subject":…}, {"type":"redis","url":"redis://…","stream":…,"max_len"?:n}, {"type":"mqtt","url":"mqtt://…","topic":…}; a broker URL carries no password (auth basic does)',
} as const;

export default defineTool({
  name: 'update_destination',
  title: 'Update destination',
  description:
    'Change one destination (PATCH /v1/destinations/{id}): its target, status, transformation, filter, limits or options (auth, tls, signature_scheme, ordering, delay_seconds). Fields left out stay as they are; null removes a rule, limit or option. ' +
    'Status `paused` holds its deliveries; `disabled` stops them; `active` resumes, and its waiting deliveries are due at once (also after the relay disabled it for 410 or failing).',
  pathId: 'destination_id',
  input: { destination_id: z.string().describe('dst_…'), ...inputShapeOf(S.DestinationUpdateSchema, { ...ENDPOINT_FIELD_DESCRIPTIONS, ...DESTINATION_OPTION_DESCRIPTIONS }) },
  output: { destination: destinationSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run(client, { destination_id, ...changes }) {
    const destination = await client.destinations.update(destination_id, changes);
    return { result: { destination }, summary: `Updated destination ${destination.id}, ${destination.status}` };
  },
});
