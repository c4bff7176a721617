import { z } from 'zod';
import { eventSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'replay_event',
  title: 'Replay event',
  description:
    'Deliver one event again now (POST /v1/events/replay/{id}) and wait for the attempt. Works for any event; ' +
    'the event\'s status follows the result. Returns the event with the new attempt last.',
  input: { event_id: z.string().describe('evt_…') },
  output: { event: eventSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(client, input) {
    const event = await client.events.replay(input.event_id);
    const attempt = event.attempts.at(-1);
    return {
      result: { event },
      summary: `Replayed ${event.id}: ${event.status}${attempt ? ` (attempt ${attempt.n}: ${attempt.response_status ?? attempt.error ?? 'no response'})` : ''}`,
    };
  },
});
