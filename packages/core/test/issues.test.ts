import { describe, expect, it } from 'vitest';
import { answerKind, ATTEMPT_KINDS, attemptErrorClass, ISSUE_KINDS, issueTitle, transportFailureKind } from '../src/index.ts';

describe('answerKind', () => {
  it('is ok for a 2xx, and the status class otherwise', () => {
    expect([200, 204, 299].map(answerKind)).toEqual(['ok', 'ok', 'ok']);
    expect([400, 404, 410, 429, 499].map(answerKind)).toEqual(Array(5).fill('http_4xx'));
    expect([500, 503, 599].map(answerKind)).toEqual(Array(3).fill('http_5xx'));
    expect([101, 199, 301, 302, 399, 600].map(answerKind)).toEqual(Array(6).fill('http_other'));
  });
});

describe('transportFailureKind', () => {
  const coded = (code: string, message = 'anything') => Object.assign(new Error(message), { code });
  const wrapped = (cause: unknown) => Object.assign(new TypeError('fetch failed'), { cause });

  it('reads the error\'s name and code, or its cause\'s, never its message', () => {
    expect(transportFailureKind(coded('ECONNREFUSED'))).toBe('connection_refused');
    expect(transportFailureKind(wrapped(coded('ECONNREFUSED')))).toBe('connection_refused');
    expect(transportFailureKind(coded('ENOTFOUND'))).toBe('dns');
    expect(transportFailureKind(coded('EAI_AGAIN'))).toBe('dns');
    expect(transportFailureKind(coded('UND_ERR_CONNECT_TIMEOUT'))).toBe('timeout');
    expect(transportFailureKind(coded('UND_ERR_HEADERS_TIMEOUT'))).toBe('timeout');
    expect(transportFailureKind(Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }))).toBe('timeout');
    expect(transportFailureKind(coded('DEPTH_ZERO_SELF_SIGNED_CERT'))).toBe('tls');
    expect(transportFailureKind(coded('ERR_SSL_WRONG_VERSION_NUMBER'))).toBe('tls');
    expect(transportFailureKind(coded('ERR_TLS_CERT_ALTNAME_INVALID'))).toBe('tls');
    expect(transportFailureKind(coded('ECONNRESET', 'connect ECONNREFUSED timeout certificate'))).toBe('network_error');
    expect(transportFailureKind(new Error('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9'))).toBe('network_error');
    expect(transportFailureKind('not an error')).toBe('network_error');
  });

  it('calls a broker\'s other failures broker_error; its refused, DNS, TLS and timeouts keep their kinds', () => {
    expect(transportFailureKind(coded('PRECONDITION_FAILED'), 'broker_error')).toBe('broker_error');
    expect(transportFailureKind(new Error('NOAUTH'), 'broker_error')).toBe('broker_error');
    expect(transportFailureKind(coded('ECONNREFUSED'), 'broker_error')).toBe('connection_refused');
    expect(transportFailureKind(coded('ENOTFOUND'), 'broker_error')).toBe('dns');
  });
});

describe('attemptErrorClass', () => {
  it('sums a kind up as the event list shows it, and is null when an answer came', () => {
    expect(attemptErrorClass({ kind: 'http_5xx', responseStatus: 500 })).toBeNull();
    expect(attemptErrorClass({ kind: 'ok', responseStatus: 200 })).toBeNull();
    expect(attemptErrorClass({ kind: 'ok', responseStatus: null })).toBeNull();
    expect(attemptErrorClass({ kind: 'timeout', responseStatus: null })).toBe('timeout');
    expect(attemptErrorClass({ kind: 'transformation_error', responseStatus: null })).toBe('transformation_failed');
    for (const kind of ['connection_refused', 'dns', 'tls', 'network_error', 'broker_error'] as const) expect(attemptErrorClass({ kind, responseStatus: null }), kind).toBe('network_error');
    expect(attemptErrorClass({ kind: null, responseStatus: null })).toBe('network_error');
  });

  it('has a class for every kind of attempt', () => {
    expect(ATTEMPT_KINDS).toEqual(['ok', ...ISSUE_KINDS]);
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
