/**
 * What a delivery attempt's span shows of its destination URL (url.full): never the query
 * (destination URLs often carry a token there) nor credentials. The spans themselves are
 * tested end to end in test/e2e/tracing.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { spanUrl } from '../src/tracing.ts';

describe('spanUrl', () => {
  it('drops the query and fragment and redacts credentials, keeping scheme, host, port and path', () => {
    expect(spanUrl(new URL('https://hooks.example.com/in/stripe?token=s3cret&x=1#frag'))).toBe('https://hooks.example.com/in/stripe');
    expect(spanUrl(new URL('https://user:p4ss@hooks.example.com:8443/in'))).toBe('https://REDACTED:REDACTED@hooks.example.com:8443/in');
    expect(spanUrl(new URL('http://token@[::1]:3000/?k=v'))).toBe('http://REDACTED@[::1]:3000/');
    expect(spanUrl(new URL('http://127.0.0.1:9000'))).toBe('http://127.0.0.1:9000/');
  });
});
