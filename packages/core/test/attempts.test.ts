import { describe, expect, it } from 'vitest';
import { ATTEMPT_BODY_MAX_BYTES, ATTEMPT_HEADER_VALUE_MAX_BYTES, ATTEMPT_HEADERS_MAX_BYTES, boundHeaders, HEADERS_NOT_KEPT, keptBody, keptResponseBody, storedRequestBody } from '../src/index.ts';

const bytesOf = (headers: Record<string, string>) =>
  Object.entries(headers).filter(([name]) => name !== HEADERS_NOT_KEPT).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(value), 0);

describe('boundHeaders', () => {
  it('keeps small headers as they are, names lower-cased, repeated values joined', () => {
    expect(boundHeaders({ 'Content-Type': 'application/json', 'set-cookie': ['a=1', 'b=2'], 'X-Empty': undefined })).toEqual({ 'content-type': 'application/json', 'set-cookie': 'a=1, b=2' });
    expect(boundHeaders({ 'X-A': '1', 'x-a': '2' })).toEqual({ 'x-a': '1, 2' });
  });

  it('cuts a long value at the value bound, never inside a UTF-8 character, and marks it', () => {
    const kept = boundHeaders({ long: 'é'.repeat(ATTEMPT_HEADER_VALUE_MAX_BYTES) })['long']!;
    expect(kept.endsWith('…')).toBe(true);
    expect(Buffer.byteLength(kept.slice(0, -1))).toBe(ATTEMPT_HEADER_VALUE_MAX_BYTES);
    expect(kept.slice(0, -1)).toBe('é'.repeat(ATTEMPT_HEADER_VALUE_MAX_BYTES / 2));
    expect(boundHeaders({ exact: 'x'.repeat(ATTEMPT_HEADER_VALUE_MAX_BYTES) })['exact']).toBe('x'.repeat(ATTEMPT_HEADER_VALUE_MAX_BYTES));
  });

  it('keeps headers in order while they fit the total, and counts the rest', () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 100; i++) many[`x-h${String(i).padStart(2, '0')}`] = 'v'.repeat(1000);
    const kept = boundHeaders(many);
    expect(bytesOf(kept)).toBeLessThanOrEqual(ATTEMPT_HEADERS_MAX_BYTES);
    const names = Object.keys(kept).filter((name) => name !== HEADERS_NOT_KEPT);
    expect(names).toEqual(Object.keys(many).slice(0, names.length));
    expect(names.length).toBe(8);
    expect(kept[HEADERS_NOT_KEPT]).toBe(`${100 - names.length} more headers not kept`);
  });

  it('keeps headers named like Object.prototype\'s properties', () => {
    expect(JSON.stringify(boundHeaders({ constructor: 'a', toString: 'b', __proto__: 'c' } as Record<string, string>))).toBe('{"constructor":"a","tostring":"b"}');
    expect(JSON.parse(JSON.stringify(boundHeaders(JSON.parse('{"__proto__":"c","Constructor":"d"}'))))).toEqual(JSON.parse('{"__proto__":"c","constructor":"d"}'));
  });

  it('makes text that jsonb cannot hold storable', () => {
    expect(boundHeaders({ 'x-nul': 'a\u0000b', 'x-lone': 'a\ud800b' })).toEqual({ 'x-nul': 'a\uFFFDb', 'x-lone': 'a\uFFFDb' });
  });
});

describe('storedRequestBody and keptBody', () => {
  it('a body up to the bound comes back whole', () => {
    const body = Buffer.from('x'.repeat(ATTEMPT_BODY_MAX_BYTES));
    expect(keptBody(storedRequestBody(body))).toEqual({ body: body.toString(), body_encoding: 'utf8', body_truncated: false });
  });

  it('a longer body comes back cut at the bound and says so', () => {
    const body = Buffer.from('é'.repeat(ATTEMPT_BODY_MAX_BYTES));
    const stored = storedRequestBody(body);
    expect(stored.length).toBe(ATTEMPT_BODY_MAX_BYTES + 1);
    expect(keptBody(stored)).toEqual({ body: 'é'.repeat(ATTEMPT_BODY_MAX_BYTES / 2), body_encoding: 'utf8', body_truncated: true });
  });

  it('bytes that are not UTF-8 come back as base64', () => {
    expect(keptBody(storedRequestBody(Buffer.from([0xff, 0x00, 0xfe])))).toEqual({ body: '/wD+', body_encoding: 'base64', body_truncated: false });
  });
});

describe('keptResponseBody', () => {
  it('keeps the first ATTEMPT_BODY_MAX_BYTES of an answer, never half a character, NUL as U+FFFD', () => {
    expect(keptResponseBody(Buffer.from('{"ok":true}'))).toBe('{"ok":true}');
    expect(keptResponseBody(Buffer.alloc(ATTEMPT_BODY_MAX_BYTES + 100, 'a'))).toBe('a'.repeat(ATTEMPT_BODY_MAX_BYTES));
    // 'é' is 2 bytes: an odd start cuts before the last whole one.
    const accented = `x${'é'.repeat(ATTEMPT_BODY_MAX_BYTES)}`;
    expect(keptResponseBody(Buffer.from(accented))).toBe(`x${'é'.repeat(ATTEMPT_BODY_MAX_BYTES / 2 - 1)}`);
    expect(keptResponseBody(Buffer.from('a\u0000b'))).toBe('a\uFFFDb');
  });

  it('cuts text as its UTF-8 bytes would be, so what a listener sent is kept as the sender keeps an answer', () => {
    const accented = `x${'é'.repeat(ATTEMPT_BODY_MAX_BYTES)}`;
    expect(keptResponseBody(accented)).toBe(keptResponseBody(Buffer.from(accented)));
    expect(Buffer.byteLength(keptResponseBody('€'.repeat(ATTEMPT_BODY_MAX_BYTES)))).toBeLessThanOrEqual(ATTEMPT_BODY_MAX_BYTES);
    expect(keptResponseBody('short\u0000')).toBe('short\uFFFD');
    expect(keptResponseBody('a'.repeat(100), 10)).toBe('a'.repeat(10));
  });
});
