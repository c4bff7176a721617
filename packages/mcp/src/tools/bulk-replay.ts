import { countOf } from '@hook/core';
import * as S from '@hook/core/schemas';
import { ENDPOINT_REF_DESCRIPTION, endpointIdOf } from '../endpoint-ref.ts';
import { inputShapeOf, outputShapeOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'bulk_replay',
  title: 'Replay many events',
  description:
    'Queue one replay attempt for every matching delivery (POST /v1/events/replay); an event has one delivery per destination. Attempts run in the background; ' +
    '`hook listen` destinations get theirs from the next listener. With no status it replays every failing delivery (failed or retrying); `status` in the answer says which statuses it took. `deliveries` equal to `limit` means more may match: call again.',
  input: inputShapeOf(S.BulkReplayRequestSchema, {
    endpoint_id: `Only this endpoint's events: ${ENDPOINT_REF_DESCRIPTION}`,
    destination_id: 'Only deliveries to this destination (dst_…)',
    status: 'Only deliveries in these statuses, comma-separated (failed,retrying); default failed,retrying: everything failing',
    since: 'ISO 8601: events received at or after this time',
    until: 'ISO 8601: events received before this time',
  }),
  output: outputShapeOf(S.BulkReplayResultSchema),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(client, input) {
    const endpointId = input.endpoint_id === undefined ? undefined : await endpointIdOf(client, input.endpoint_id);
    const result = await client.events.replayMany({ ...input, endpoint_id: endpointId });
    return {
      result,
      summary: `Queued ${countOf(result.replayed, 'event')}, ${countOf(result.deliveries, 'delivery', 'deliveries')} (${result.waiting_for_listener} for hook listen) for replay${result.deliveries >= result.limit ? ' (the limit: more may match)' : ''}`,
    };
  },
});
