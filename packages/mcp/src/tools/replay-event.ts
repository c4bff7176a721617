import * as S from '@hook/core/schemas';
import { z } from 'zod';
import { eventSchema, inputShapeOf, replayOutcomeSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'replay_event',
  title: 'Replay event',
  description:
    'Deliver one event again (POST /v1/events/replay/{id}): a new attempt for each of its destinations, or only destination_id. ' +
    'URL destinations are attempted before this returns; `hook listen` (cli) destinations get it in a running listener or the next one. ' +
    'Returns the event after it (each delivery\'s status, the new attempts last) and the outcome per destination.',
  pathId: 'event_id',
  input: {
    event_id: z.string().describe('evt_…'),
    ...inputShapeOf(S.ReplayRequestSchema, { destination_id: 'Only the delivery to this destination (dst_…); default: every destination of the event' }),
  },
  output: { event: eventSchema, replay: z.array(replayOutcomeSchema) },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(client, input) {
    const { replay, ...event } = await client.events.replay(input.event_id, { destination_id: input.destination_id });
    const outcomes = replay.map(({ destination_id: destinationId, outcome }) => {
      if (outcome !== 'attempted') return `${destinationId}: ${outcome}`;
      const attempt = event.attempts.findLast((item) => item.destination_id === destinationId);
      return `${destinationId}: attempt ${attempt?.n ?? '?'} ${attempt?.response_status ?? attempt?.error ?? 'no response'}`;
    });
    return { result: { event, replay }, summary: `Replayed ${event.id}: ${event.status} (${outcomes.join('; ')})` };
  },
});
