/**
 * The console's pure helpers, without a browser: the JSON tokenizer behind the
 * inspector's highlighting (its tokens always join back to the exact text, strings that
 * hold quotes, colons or `true` stay one string) and how times are worded.
 */
import { describe, expect, it } from 'vitest';
import { tokenizeJson } from '../src/console/ui/json-tokens.ts';
import { relativeText, spanText } from '../src/console/ui/time-text.ts';

const kinds = (text: string) => tokenizeJson(text).filter((token) => token.kind !== 'plain').map((token) => `${token.kind}:${token.text}`);

describe('tokenizeJson', () => {
  it('marks keys, strings, numbers and literals, and joins back to the exact text', () => {
    const text = JSON.stringify({ name: 'Ada', n: -4.2e3, ok: true, no: false, none: null, list: [1, 'two'] }, null, 2);
    expect(tokenizeJson(text).map((token) => token.text).join('')).toBe(text);
    expect(kinds(text)).toEqual([
      'attr:"name"', 'string:"Ada"', 'attr:"n"', 'number:-4200', 'attr:"ok"', 'literal:true', 'attr:"no"', 'literal:false',
      'attr:"none"', 'literal:null', 'attr:"list"', 'number:1', 'string:"two"',
    ]);
  });

  it('keeps a string whole whatever it holds: escaped quotes, colons, numbers, literals, markup', () => {
    const value = 'say "true": 42, null <script>alert(1)</script> \\ done';
    const text = JSON.stringify({ 'a "key": 1': value }, null, 2);
    expect(kinds(text)).toEqual([`attr:${JSON.stringify('a "key": 1')}`, `string:${JSON.stringify(value)}`]);
    expect(tokenizeJson(text).map((token) => token.text).join('')).toBe(text);
  });

  it('reads a string followed by a colon as a key even with spaces before the colon', () => {
    expect(kinds('{"a" : "b"}')).toEqual(['attr:"a"', 'string:"b"']);
  });
});

describe('relative times', () => {
  it('words spans in the largest unit that fits', () => {
    expect(spanText(12_000)).toBe('12 s');
    expect(spanText(59_400)).toBe('59 s');
    expect(spanText(3 * 60_000)).toBe('3 min');
    expect(spanText(5 * 3_600_000)).toBe('5 h');
    expect(spanText(3 * 86_400_000)).toBe('3 d');
  });

  it('says ago for the past, in for the future, now within a second', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(relativeText(now - 12_000, now)).toBe('12 s ago');
    expect(relativeText(now + 120_000, now)).toBe('in 2 min');
    expect(relativeText(now - 400, now)).toBe('now');
  });
});
