import { EVENT_STATUSES } from '@hook/core';
import { z } from 'zod';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'bulk_replay',
  title: 'Replay many events',
  description:
    'Queue one replay attempt for every matching event (POST /v1/events/replay); attempts run in the background. ' +
    'With no filter it replays every failed event. `replayed` equal to `limit` means more may match: call again.',
  input: {
    endpoint_id: z.string().optional().describe('Only this endpoint\'s events (ep_…)'),
    status: z.enum(EVENT_STATUSES).optional().describe('Default failed'),
    since: z.iso.datetime().optional().describe('ISO 8601: events received at or after this time'),
    until: z.iso.datetime().optional().describe('ISO 8601: events received before this time'),
  },
  output: {
    replayed: z.number().describe('Events queued for a replay attempt'),
    limit: z.number().describe('The most one call queues'),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(client, input) {
    const result = await client.events.replayMany(input);
    return { result, summary: `Queued ${result.replayed} event(s) for replay${result.replayed === result.limit ? ' (the limit: more may match)' : ''}` };
  },
});
