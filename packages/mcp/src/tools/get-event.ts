import { countOf } from '@hook/core';
import { z } from 'zod';
import { eventSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** The body as JSON when it is UTF-8 text that parses, for reading only (the stored bytes are untouched). */
function parsedPayload(body: string, encoding: string, contentType: string | null): unknown {
  if (encoding !== 'utf8') return null;
  if (contentType && !JSON_CONTENT_TYPE.test(contentType) && !/^text\/plain/i.test(contentType)) return null;
  try {
    return JSON.parse(body);
  } catch {
    return null;
  }
}

export default defineTool({
  name: 'get_event',
  title: 'Get event',
  description:
    'One event in full (GET /v1/events/{id}): headers, the exact body (text when UTF-8, else base64), ' +
    '`payload` (the body parsed, when it is JSON) and every delivery attempt with its response status, body and error.',
  pathId: 'event_id',
  input: { event_id: z.string().describe('evt_…') },
  output: {
    event: eventSchema,
    payload: z.unknown().describe('The body parsed as JSON, or null when it is not JSON text'),
  },
  annotations: { readOnlyHint: true },
  async run(client, input) {
    const event = await client.events.get(input.event_id);
    const last = event.attempts.at(-1);
    return {
      result: { event, payload: parsedPayload(event.body, event.body_encoding, event.content_type) },
      summary:
        `Event ${event.id}${event.type ? ` (${event.type})` : ''}: ${event.status}, ${countOf(event.attempts.length, 'attempt')}` +
        (last ? `; last: ${last.response_status ?? last.error ?? 'no response'}` : ''),
    };
  },
});
