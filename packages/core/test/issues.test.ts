import { describe, expect, it } from 'vitest';
import { failureKind, ISSUE_KINDS, issueTitle } from '../src/index.ts';

describe('failureKind', () => {
  const answered = (status: number) => failureKind({ responseStatus: status, error: null });
  const failed = (error: string | null, queue?: boolean) => failureKind({ responseStatus: null, error, ...(queue === undefined ? {} : { queue }) });

  it('is null for a 2xx, and the status class otherwise', () => {
    expect([200, 204, 299].map(answered)).toEqual([null, null, null]);
    expect([400, 404, 410, 429, 499].map(answered)).toEqual(Array(5).fill('http_4xx'));
    expect([500, 503, 599].map(answered)).toEqual(Array(3).fill('http_5xx'));
    expect([101, 301, 302, 399, 600].map(answered)).toEqual(Array(5).fill('http_other'));
  });

  it('reads why no answer came from the error text the relay records', () => {
    expect(failed('no answer within 15000 ms (HOOK_DELIVERY_TIMEOUT)')).toBe('timeout');
    expect(failed('UND_ERR_CONNECT_TIMEOUT: Connect Timeout Error')).toBe('timeout');
    expect(failed('UND_ERR_HEADERS_TIMEOUT: Headers Timeout Error')).toBe('timeout');
    expect(failed('transformation_failed: TypeError: x is not a function (line 2)')).toBe('transformation_error');
    expect(failed('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9')).toBe('connection_refused');
    expect(failed('ENOTFOUND: getaddrinfo ENOTFOUND nowhere.invalid')).toBe('dns');
    expect(failed('EAI_AGAIN: getaddrinfo EAI_AGAIN example.com')).toBe('dns');
    expect(failed('DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate; the destination\'s server certificate is not trusted')).toBe('tls');
    expect(failed('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: the destination asks for a client certificate (mTLS)')).toBe('tls');
    expect(failed('ECONNRESET: socket hang up')).toBe('network_error');
    expect(failed(null)).toBe('network_error');
  });

  it('calls a broker\'s other failures broker_error; its refused, DNS, TLS and timeouts keep their kinds', () => {
    expect(failed('PRECONDITION_FAILED - inequivalent arg', true)).toBe('broker_error');
    expect(failed('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5672 (is the broker running and listening on that port?)', true)).toBe('connection_refused');
    expect(failed('no answer within 15000 ms (HOOK_DELIVERY_TIMEOUT)', true)).toBe('timeout');
  });
});

describe('issueTitle', () => {
  it('words every kind, and a 1xx or 3xx answer by its status', () => {
    expect(ISSUE_KINDS.map((kind) => issueTitle(kind)).every((title) => title.length > 0)).toBe(true);
    expect(new Set(ISSUE_KINDS.map((kind) => issueTitle(kind))).size).toBe(ISSUE_KINDS.length);
    expect(issueTitle('http_5xx', 503)).toBe('Receiver answered 5xx');
    expect(issueTitle('timeout')).toBe('Timed out');
    expect(issueTitle('connection_refused')).toBe('Connection refused');
    expect(issueTitle('tls')).toBe('TLS handshake failed');
    expect(issueTitle('http_other', 302)).toBe('Receiver answered 302');
  });
});
