import { HookApiError, HookNetworkError } from '@hook/client';
import { describe, expect, it } from 'vitest';
import { errorResult, TOOL_ERROR_META_KEY } from '../src/index.ts';

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
    expect(line!.text).toBe('Error validation_failed: The request has 1 invalid field(s)\n  body.name: must not be empty\nFix: Correct the fields.');
    expect(JSON.parse(json!.text).error).toEqual(result._meta?.[TOOL_ERROR_META_KEY]);
    expect(result._meta?.[TOOL_ERROR_META_KEY]).toMatchObject({ code: 'validation_failed', status: 400, errors: [{ field: 'body.name', message: 'must not be empty' }], request_id: 'req_1' });
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
