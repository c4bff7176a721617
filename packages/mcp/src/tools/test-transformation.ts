import { countOf } from '@hook/core';
import * as S from '@hook/core/schemas';
import { inputShapeOf, outputShapeOf } from '../schemas.ts';
import { defineTool } from '../tool.ts';

export default defineTool({
  name: 'test_transformation',
  title: 'Test transformation',
  description:
    'Run endpoint transformation code (JavaScript calling addHandler(\'transform\', (request, context) => request)) against a stored ' +
    'event (event_id) or a given request, and see what it would deliver, the type it set, its console output and any error with ' +
    'its line (POST /v1/transformations/test). Delivers nothing and changes nothing. See docs/transformations.md.',
  input: inputShapeOf(S.TransformationTestRequestSchema, {
    code: 'The JavaScript code',
    event_id: 'evt_… to run against; or give request',
    request: 'A request to run against instead of a stored event; missing fields default to POST, "", "", {}, null; type is what the code sees as context.type',
  }),
  output: outputShapeOf(S.TransformationTestResultSchema),
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
