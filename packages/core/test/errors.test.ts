import { describe, expect, it } from 'vitest';
import { allErrors, defineError, ENDPOINT_NOT_FOUND, HookError } from '../src/index.ts';

describe('error registry', () => {
  it('fills the detail template and carries code, status and fix', () => {
    const error = new HookError(ENDPOINT_NOT_FOUND, ['ep_123']);
    expect(error.message).toBe("No endpoint 'ep_123' in this account");
    expect(error.code).toBe('endpoint_not_found');
    expect(error.status).toBe(404);
    expect(error.definition.fix).toMatch(/GET \/v1\/endpoints/);
  });

  it('refuses a code defined twice and every code has a fix', () => {
    expect(() => defineError('endpoint_not_found', 404, 't', 'd', 'f')).toThrow(/twice/);
    for (const definition of allErrors()) {
      expect(definition.fix.length, definition.code).toBeGreaterThan(10);
      expect(definition.status, definition.code).toBeGreaterThanOrEqual(400);
    }
  });
});
