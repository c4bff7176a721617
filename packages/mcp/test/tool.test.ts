import { HookApiError, HookNetworkError } from '@hook/client';
import { describe, expect, it } from 'vitest';
import { errorResult, MCP_ERROR_FIXES, TOOL_ERROR_META_KEY } from '../src/index.ts';

describe('errorResult', () => {
  it('carries a problem\'s code, detail, fix and field errors in text and _meta, with no structured content', () => {
    const result = errorResult(
      new HookApiError({
        type: 'urn:hook:error:validation_failed', title: 'Invalid request', status: 400, detail: 'The request has 1 invalid field(s)',
        code: 'validation_failed', fix: 'Correct the fields.', errors: [{ field: 'body.name', message: 'must not be empty' }], request_id: 'req_1',
      }),
    );
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const [line, json] = result.content as Array<{ type: 'text'; text: string }>;
    // The field as the tool's input names it, and a fix in MCP words instead of the relay's.
    expect(line!.text).toBe(`Error validation_failed: The request has 1 invalid field(s)\n  name: must not be empty\nFix: ${MCP_ERROR_FIXES.validation_failed}`);
    expect(JSON.parse(json!.text).error).toEqual(result._meta?.[TOOL_ERROR_META_KEY]);
    expect(result._meta?.[TOOL_ERROR_META_KEY]).toMatchObject({ code: 'validation_failed', status: 400, errors: [{ field: 'name', message: 'must not be empty' }], request_id: 'req_1' });
  });

  it('names the path id by the tool\'s input (params.id is endpoint_id), in errors[] and the detail', () => {
    const result = errorResult(
      new HookApiError({
        type: 'urn:hook:error:validation_failed', title: 'Invalid request', status: 400, detail: 'The request has 1 invalid field(s): params.id must be an id like ep_…',
        code: 'validation_failed', fix: 'GET /openapi.json describes every field.', errors: [{ field: 'params.id', message: 'must be an id like ep_…' }], request_id: 'req_2',
      }),
      { pathId: 'endpoint_id' },
    );
    const error = result._meta?.[TOOL_ERROR_META_KEY] as { detail: string; errors: unknown[]; fix: string };
    expect(error.errors).toEqual([{ field: 'endpoint_id', message: 'must be an id like ep_…' }]);
    expect(error.detail).toBe('The request has 1 invalid field(s): endpoint_id must be an id like ep_…');
    expect(JSON.stringify(result)).not.toContain('params.id');
    expect(error.fix).not.toContain('openapi');
  });

  it('names the unreachable relay and how to point at the right one', () => {
    const result = errorResult(new HookNetworkError('http://127.0.0.1:9', 'refused', 'connection refused: nothing is listening there'));
    expect(result._meta?.[TOOL_ERROR_META_KEY]).toMatchObject({ code: 'relay_unreachable', status: null });
    expect((result.content as Array<{ text: string }>)[0]!.text).toContain('Cannot reach http://127.0.0.1:9 (connection refused');
  });

  it('rethrows anything else: a bug is not an API answer', () => {
    const bug = new TypeError('undefined is not a function');
    expect(() => errorResult(bug)).toThrow(bug);
  });
});
