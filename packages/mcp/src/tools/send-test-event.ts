import { INGEST_OUTCOMES } from '@hook/core';
import { z } from 'zod';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'send_test_event',
  title: 'Send test event',
  description:
    'Send a test webhook to an endpoint as a provider would: a JSON POST to its ingest URL, with the event type in ' +
    'the `x-event-type` header when given. The relay stores and delivers it like any other event; use get_event to see the result.',
  pathId: 'endpoint_id',
  input: {
    endpoint_id: z.string().describe('ep_…'),
    payload: z.unknown().optional().describe('Any JSON value; default {"test": true}'),
    event_type: z.string().min(1).optional().describe('Sent as x-event-type, e.g. "invoice.paid"'),
  },
  output: {
    event_id: z.string().describe('evt_… of the stored event; for a duplicate, of the event first stored under its key'),
    status: z.enum(INGEST_OUTCOMES).describe('pending; duplicate: the key was stored before, nothing stored; handshake: answered, stored as <provider>.handshake, not delivered'),
    endpoint_id: z.string(),
    url: z.string().describe('The ingest URL it was sent to'),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(client, input) {
    const endpoint = await client.endpoints.get(input.endpoint_id);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (input.event_type !== undefined) headers['x-event-type'] = input.event_type;
    const accepted = await client.ingest.send(endpoint.url, { method: 'POST', headers, body: JSON.stringify(input.payload ?? { test: true }) });
    return {
      result: { event_id: accepted.id, status: accepted.status, endpoint_id: endpoint.id, url: endpoint.url },
      summary: accepted.status === 'duplicate'
        ? `Sent to ${endpoint.name}: a duplicate of event ${accepted.id}, not stored again`
        : accepted.status === 'handshake'
          ? `Sent to ${endpoint.name}: a handshake, answered and stored as event ${accepted.id}, not delivered`
          : `Sent event ${accepted.id} to ${endpoint.name} (${accepted.status})`,
    };
  },
});
