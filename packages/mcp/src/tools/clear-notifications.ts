import { z } from 'zod';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'clear_notifications',
  title: 'Clear notification URL',
  description:
    "Stop sending the account's notifications (DELETE /v1/account/notifications; admins only). Those already sent stay listed by list_notification_events.",
  input: {},
  output: { cleared: z.literal(true) },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async run(client) {
    await client.notifications.clear();
    return { result: { cleared: true as const }, summary: 'Account notifications stopped' };
  },
});
