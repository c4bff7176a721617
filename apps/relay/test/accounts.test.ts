import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, expectProblem, sqlRows, startTestRelay, type TestRelay } from '../../../test/support/relay.ts';

describe('signup rate limit', () => {
  let limited: TestRelay;
  beforeAll(async () => {
    limited = await startTestRelay({ signupsPerAddressPerHour: 3 });
  });
  afterAll(async () => limited.close());

  it('answers 429 rate_limited problem+json with Retry-After once one address has signed up N times', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await api(limited.baseUrl, 'POST', '/v1/accounts');
      expect(response.status).toBe(201);
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
    }
    const refused = await api(limited.baseUrl, 'POST', '/v1/accounts');
    const problem = expectProblem(refused, 429, 'rate_limited');
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(problem.detail).toContain('allows 3 requests');
    expect(problem.fix).toMatch(/Retry-After/);
    // Nothing was created by the refused request.
    expect(await sqlRows(limited, 'select count(*)::int as n from account')).toEqual([{ n: 3 }]);
  });

  it('limits only signups: authenticated routes of the same address still answer', async () => {
    const refused = await api(limited.baseUrl, 'GET', '/v1/account');
    expectProblem(refused, 401, 'authentication_required');
    expect(refused.headers.get('x-ratelimit-limit')).toBeNull();
  });
});
