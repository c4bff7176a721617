import * as S from '@hook/core/schemas';
import { inputOf, notificationSettingsSchema } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'set_notification_url',
  title: 'Set notification URL',
  description:
    "Send the account's own notifications to a URL (PUT /v1/account/notifications; admins only): usage.threshold (80% and 100% of the monthly events), " +
    'plan.changed, endpoint.disabled (a receiver answered 410) and event.failed (an event spent its retries), each a signed JSON POST, retried like any delivery. ' +
    'Setting it again changes the URL. The signing secret is not returned here: a person reads it with `hook notifications get`.',
  input: { url: inputOf(S.DestinationUrl, 'An http(s) URL that receives signed POSTs') },
  output: { notifications: notificationSettingsSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async run(client, input) {
    const { secret: _secret, ...notifications } = await client.notifications.set(input.url);
    return { result: { notifications }, summary: `Account notifications go to ${notifications.url} (${notifications.status})` };
  },
});
