import { countOf } from '@hook/core';
import * as S from '@hook/core/schemas';
import { z } from 'zod';
import { eventSummarySchema, inputShapeOf, pageFields } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'list_notification_events',
  title: 'List notifications',
  description:
    'Notifications sent to the account, newest first, with their delivery status (GET /v1/account/notifications/events). ' +
    'They are events (get_event shows one with its body and attempts; replay_event sends it again), but list_events leaves them out.',
  input: inputShapeOf(S.NotificationEventQuerySchema, { limit: 'Items per page, 1–100 (default 20)', cursor: '`next_cursor` of the previous page' }),
  output: { data: z.array(eventSummarySchema), ...pageFields },
  annotations: { readOnlyHint: true },
  async run(client, input) {
    const page = await client.notifications.events(input);
    return {
      result: { data: page.data, next_cursor: page.next_cursor },
      summary: `${countOf(page.data.length, 'notification')}${page.next_cursor ? '; more with cursor ' + page.next_cursor : ''}`,
    };
  },
});
