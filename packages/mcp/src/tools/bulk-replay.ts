import { countOf, EVENT_STATUSES } from '@hook/core';
import { z } from 'zod';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'bulk_replay',
  title: 'Replay many events',
  description:
    'Queue one replay attempt for every matching delivery (POST /v1/events/replay); an event has one delivery per destination. Attempts run in the background; ' +
    '`hook listen` destinations get theirs from the next listener. With no filter it replays every failed delivery. `deliveries` equal to `limit` means more may match: call again.',
  input: {
    endpoint_id: z.string().optional().describe('Only this endpoint\'s events (ep_…)'),
    destination_id: z.string().optional().describe('Only deliveries to this destination (dst_…)'),
    status: z.enum(EVENT_STATUSES).optional().describe('Only deliveries in this status; default failed'),
    since: z.iso.datetime().optional().describe('ISO 8601: events received at or after this time'),
    until: z.iso.datetime().optional().describe('ISO 8601: events received before this time'),
  },
  output: {
    replayed: z.number().describe('Events queued for a replay attempt'),
    deliveries: z.number().describe('Deliveries queued (one per destination of each event)'),
    waiting_for_listener: z.number().describe('Of those, how many go to `hook listen` destinations'),
    limit: z.number().describe('The most deliveries one call queues'),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(client, input) {
    const result = await client.events.replayMany(input);
    return {
      result,
      summary: `Queued ${countOf(result.replayed, 'event')}, ${countOf(result.deliveries, 'delivery', 'deliveries')} (${result.waiting_for_listener} for hook listen) for replay${result.deliveries >= result.limit ? ' (the limit: more may match)' : ''}`,
    };
  },
});
