import { FILL_PAGE_BUDGET_MS } from '@hook/client';
import { countOf } from '@hook/core';
import * as S from '@hook/core/schemas';
import { z } from 'zod';
import { ENDPOINT_REF_DESCRIPTION, endpointIdOf } from '../endpoint-ref.ts';
import { eventSummarySchema, inputShapeOf, pageFields } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'list_events',
  title: 'List events',
  description:
    'List received events, newest first (GET /v1/events), without bodies or attempts (get_event has those). ' +
    'Filter by endpoint, delivery status (pending, delivered, retrying, failed, filtered; several comma-separated: failed,retrying is everything failing) and exact event type. ' +
    `However rare the match, a call returns up to limit events: it follows the relay past stretches of history with no match for up to ${FILL_PAGE_BUDGET_MS / 1000} s; ` +
    'fewer than limit with a next_cursor means older events are still to look through: call again with that cursor.',
  input: inputShapeOf(S.EventListQuery, {
    endpoint_id: `Only this endpoint's events: ${ENDPOINT_REF_DESCRIPTION}`,
    type: 'Exact event type, e.g. "invoice.paid"',
    limit: 'Items per page, 1–100 (default 20)',
    cursor: '`next_cursor` of the previous page',
  }, ['endpoint_id', 'status', 'type', 'limit', 'cursor']),
  output: { data: z.array(eventSummarySchema), ...pageFields },
  annotations: { readOnlyHint: true },
  async run(client, input) {
    const endpointId = input.endpoint_id === undefined ? undefined : await endpointIdOf(client, input.endpoint_id);
    // A filtered page of the relay may be short, even empty, with a cursor on: fullPage follows it.
    const page = await client.events.fullPage({ ...input, endpoint_id: endpointId });
    return {
      result: { data: page.data, next_cursor: page.next_cursor },
      summary: `${countOf(page.data.length, 'event')}${page.next_cursor ? '; more with cursor ' + page.next_cursor : ''}`,
    };
  },
});
