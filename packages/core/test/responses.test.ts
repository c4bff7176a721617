/**
 * What a custom response may set (docs/sources.md, "Custom responses"): an allow list of
 * headers browsers do nothing dangerous with, and inert content types only.
 */
import { describe, expect, it } from 'vitest';
import { responseHeaderProblems, servableResponseHeaders } from '../src/responses.ts';

const refusedNames = (headers: Record<string, string>) => responseHeaderProblems(headers).map(([name]) => name);

describe('custom response headers', () => {
  it('allows caching, validators, language, retry-after and x-* names', () => {
    const headers = {
      'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', Expires: '0', Pragma: 'no-cache', ETag: '"v1"',
      'Last-Modified': 'Wed, 21 Oct 2015 07:28:00 GMT', 'Content-Language': 'en', 'Retry-After': '120', 'X-Received-By': 'hook', 'x-request-ref': 'abc',
    };
    expect(responseHeaderProblems(headers)).toEqual([]);
    expect(servableResponseHeaders(headers)).toEqual(headers);
  });

  it('refuses every header a browser acts on, hop-by-hop and framing ones, and the relay\'s x-hook-*', () => {
    const browserActed = [
      'Service-Worker-Allowed', 'Refresh', 'Clear-Site-Data', 'Link', 'Location', 'Access-Control-Allow-Origin', 'Access-Control-Allow-Credentials',
      'Content-Security-Policy', 'Content-Security-Policy-Report-Only', 'X-Frame-Options', 'X-Content-Type-Options', 'Set-Cookie', 'Permissions-Policy',
      'Cross-Origin-Opener-Policy', 'Cross-Origin-Resource-Policy', 'Report-To', 'NEL', 'Reporting-Endpoints', 'Content-Disposition', 'X-XSS-Protection',
      'X-DNS-Prefetch-Control', 'X-Permitted-Cross-Domain-Policies', 'X-Download-Options', 'X-UA-Compatible', 'Strict-Transport-Security', 'Origin-Agent-Cluster',
    ];
    const owned = ['Connection', 'Transfer-Encoding', 'Content-Length', 'Content-Encoding', 'Date', 'Server', 'Alt-Svc', 'X-Hook-Signature', 'x-request-id-not-hook'];
    for (const name of [...browserActed, ...owned.slice(0, -1)]) {
      expect(refusedNames({ [name]: '1' }), name).toEqual([name]);
      expect(servableResponseHeaders({ [name.toLowerCase()]: '1' }), name).toEqual({});
    }
    expect(responseHeaderProblems({ Refresh: '0; url=https://evil.example' })[0]![1]).toMatch(/Allowed: content-type, cache-control/);
    expect(refusedNames({ 'x-request-id-not-hook': '1' })).toEqual([]);
  });

  it('allows only inert content types, with at most a charset; the fix names the allowed types', () => {
    for (const type of ['text/plain', 'application/json', 'application/xml', 'text/xml; charset=utf-8', 'Application/JSON;charset="UTF-8"']) {
      expect(responseHeaderProblems({ 'Content-Type': type }), type).toEqual([]);
    }
    for (const type of ['text/html', 'text/html; charset=utf-8', 'image/svg+xml', 'application/xhtml+xml', 'text/javascript', 'application/javascript', 'text/xsl',
      'multipart/x-mixed-replace; boundary=x', 'application/pdf', 'text/plain; boundary=x', 'text/plain, text/html', '']) {
      const problems = responseHeaderProblems({ 'Content-Type': type });
      expect(problems.map(([name]) => name), type).toEqual(['Content-Type']);
      expect(problems[0]![1]).toContain('text/plain, application/json, application/xml, text/xml');
      expect(servableResponseHeaders({ 'content-type': type, 'x-kept': 'yes' }), type).toEqual({ 'x-kept': 'yes' });
    }
  });
});
