import * as S from '@hook/core/schemas';
import { z } from 'zod';
import { inputShapeOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'unblock_key',
  title: 'Unblock key',
  description:
    'Release a blocked key of an ordered destination (POST /v1/destinations/{id}/unblock): the events waiting behind it are delivered in order; the event that gave up stays failed (replay_event it to deliver it). ' +
    'list_blocked_keys gives the keys.',
  pathId: 'destination_id',
  input: { destination_id: z.string().describe('dst_…'), ...inputShapeOf(S.UnblockSchema, { key: 'The blocked key as list_blocked_keys gives it ("" for an unkeyed destination or events without a key)' }) },
  output: { unblocked: z.literal(true), destination_id: z.string(), key: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run(client, { destination_id, key }) {
    await client.destinations.unblock(destination_id, key);
    return { result: { unblocked: true as const, destination_id, key }, summary: `Released key ${JSON.stringify(key)} of ${destination_id}: the events waiting behind it go out in order` };
  },
});
