import { z } from 'zod';
import { eventSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

const replayOutcomeSchema = z.looseObject({
  destination_id: z.string().describe('dst_…'),
  outcome: z.enum(['attempted', 'sent_to_listener', 'waiting_for_listener', 'in_flight']).describe(
    'attempted: a URL destination got its attempt (the last attempt with this destination_id); sent_to_listener: a running `hook listen` has it now; ' +
    'waiting_for_listener: the next `hook listen` that connects gets it; in_flight: an attempt was already running, so none was queued',
  ),
});

export default defineTool({
  name: 'replay_event',
  title: 'Replay event',
  description:
    'Deliver one event again (POST /v1/events/replay/{id}): a new attempt for each of its destinations, or only destination_id. ' +
    'URL destinations are attempted before this returns; `hook listen` (cli) destinations get it in a running listener or the next one. ' +
    'Returns the event after it (each delivery\'s status, the new attempts last) and the outcome per destination.',
  input: {
    event_id: z.string().describe('evt_…'),
    destination_id: z.string().optional().describe('Only the delivery to this destination (dst_…); default: every destination of the event'),
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
