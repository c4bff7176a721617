import * as S from '@hook/core/schemas';
import { z } from 'zod';
import { outputShapeOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'delete_account',
  title: 'Delete the account',
  description:
    'Erase the whole account for good (DELETE /v1/account; admin keys only): its endpoints, destinations, events, deliveries, ' +
    'attempts, API keys (this one included), members, usage and notifications. Ingest URLs answer 404 afterwards and nothing can be ' +
    'restored. Only do this when the user has asked for it in so many words. `confirm` must be the account\'s own id ' +
    '(get_account shows it); any other value is refused with confirmation_required and nothing is erased.',
  input: { confirm: z.string().describe("The account's own id, acct_… (from get_account), confirming the erasure") },
  output: outputShapeOf(S.AccountDeletedSchema),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async run(client, input) {
    const deleted = await client.account.delete(input.confirm);
    const { erased } = deleted;
    return {
      result: deleted,
      summary: `Deleted account ${deleted.id}: ${erased.endpoints} endpoints, ${erased.events} events, ${erased.api_keys} API keys and ${erased.members} members erased; its keys no longer work`,
    };
  },
});
