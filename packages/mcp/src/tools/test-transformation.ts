import { countOf } from '@hook/core';
import { z } from 'zod';
import { defineTool } from '../tool.ts';

const requestShape = z.object({
  method: z.string(),
  path: z.string(),
  query: z.string(),
  headers: z.record(z.string(), z.string()),
  body: z.unknown(),
});

export default defineTool({
  name: 'test_transformation',
  title: 'Test transformation',
  description:
    'Run endpoint transformation code (JavaScript calling addHandler(\'transform\', (request, context) => request)) against a stored ' +
    'event (event_id) or a given request, and see what it would deliver, the type it set, its console output and any error with ' +
    'its line (POST /v1/transformations/test). Delivers nothing and changes nothing. See docs/transformations.md.',
  input: {
    code: z.string().min(1).describe('The JavaScript code'),
    event_id: z.string().optional().describe('evt_… to run against; or give request'),
    request: z
      .object({
        method: z.string().optional(),
        path: z.string().optional(),
        query: z.string().optional(),
        headers: z.record(z.string(), z.string()).optional(),
        body: z.unknown().optional(),
        type: z.string().nullable().optional().describe('What the code sees as context.type'),
      })
      .optional()
      .describe('A request to run against instead of a stored event; missing fields default to POST, "", "", {}, null'),
  },
  output: {
    ok: z.boolean().describe('false when the transformation failed (see error)'),
    request: requestShape.optional().describe('What would be delivered'),
    type: z.string().nullable().optional().describe('The event type the code set with context.setType'),
    logs: z.array(z.object({ level: z.string(), message: z.string() })),
    error: z.object({ message: z.string(), line: z.number().int().nullable() }).optional(),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(client, input) {
    const result = await client.transformations.test({
      code: input.code,
      ...(input.event_id !== undefined ? { event_id: input.event_id } : {}),
      ...(input.request !== undefined ? { request: input.request } : {}),
    });
    const summary = result.ok
      ? `The transformation ran${result.type !== undefined ? ` and set the type to ${result.type}` : ''}; ${countOf(result.logs.length, 'console line')}`
      : `The transformation failed${result.error?.line != null ? ` at line ${result.error.line}` : ''}: ${result.error?.message ?? 'unknown error'}`;
    return { result, summary };
  },
});
