import { countOf } from '@hook/core';
import * as S from '@hook/core/schemas';
import { z } from 'zod';
import { outputOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'list_blocked_keys',
  title: 'List blocked keys',
  description:
    'The keys of an ordered destination (ordering.on_give_up "block") held by an event that gave up (GET /v1/destinations/{id}/blocked-keys): each with that event, when, and how many events wait behind it. ' +
    'Fix the receiver, then replay_event the event that gave up (it and the waiting ones go out in order), or unblock_key to let the waiting ones go without it.',
  pathId: 'destination_id',
  input: { destination_id: z.string().describe('dst_…') },
  output: { data: z.array(outputOf(S.BlockedKeySchema)) },
  annotations: { readOnlyHint: true },
  async run(client, input) {
    const { data } = await client.destinations.blockedKeys(input.destination_id);
    const waiting = data.reduce((sum, blocked) => sum + blocked.waiting, 0);
    return { result: { data }, summary: data.length === 0 ? `No blocked keys on ${input.destination_id}` : `${countOf(data.length, 'blocked key')} on ${input.destination_id}, ${countOf(waiting, 'event')} waiting` };
  },
});
