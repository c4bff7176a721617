import { countOf, EVENT_STATUSES } from '@hook/core';
import { z } from 'zod';
import { cursorInput, eventSummarySchema, limitInput, pageFields } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'list_events',
  title: 'List events',
  description:
    'List received events, newest first (GET /v1/events), without bodies or attempts (get_event has those). ' +
    'Filter by endpoint, delivery status (pending, delivered, retrying, failed, filtered) and exact event type.',
  input: {
    endpoint_id: z.string().optional().describe('Only this endpoint\'s events (ep_…)'),
    status: z.enum(EVENT_STATUSES).optional(),
    type: z.string().optional().describe('Exact event type, e.g. "invoice.paid"'),
    limit: limitInput,
    cursor: cursorInput,
  },
  output: { events: z.array(eventSummarySchema), ...pageFields },
  annotations: { readOnlyHint: true },
  async run(client, input) {
    const page = await client.events.list(input);
    return {
      result: { events: page.data, next_cursor: page.next_cursor },
      summary: `${countOf(page.data.length, 'event')}${page.next_cursor ? '; more with cursor ' + page.next_cursor : ''}`,
    };
  },
});
