import { describe, expect, it } from 'vitest';
import { bodyExcerpt, STREAM_BODY_LIMITS, VIEW_BODY_LIMITS, WHOLE_BODY } from '../src/output/body.ts';
import { renderPlain, type View } from '../src/output/view.ts';
import { renderForTerminal } from '../src/ui/render-view.ts';

const TEN_MIB = 10 * 1024 * 1024;

describe('bodyExcerpt', () => {
  it('indents JSON as JSON.stringify(value, null, 2) lays it out, keeping each token as sent', () => {
    for (const text of ['{}', '[]', ' [ 1 , true , "s" ] ', '"text"', '-1.5', '{"a":[],"b":{},"c":[1,{"d":null}],"e":"x\\"y","f":{"g":[[]]}}']) {
      expect(bodyExcerpt({ text, json: true }, WHOLE_BODY).lines.join('\n'), text).toBe(JSON.stringify(JSON.parse(text), null, 2));
    }
    // A big integer and an escape stay as sent (JSON.parse would round the one and decode the other).
    expect(bodyExcerpt({ text: '{"n":12345678901234567890,"s":"\\u00e9"}', json: true }, WHOLE_BODY).lines).toEqual(['{', '  "n": 12345678901234567890,', '  "s": "\\u00e9"', '}']);
  });

  it('shows a body labelled JSON that is not as the text it is', () => {
    for (const text of ['{', '{"a" 1}', '[1,]', '{"a":1}}', 'hello', '[1] 2', '{"a":1,}']) {
      expect(bodyExcerpt({ text, json: true }, WHOLE_BODY).lines, text).toEqual([text]);
    }
  });

  it('cuts at the line limit and the character limit, and counts the bytes left', () => {
    const text = Array.from({ length: 50 }, (_, n) => `line ${n}`).join('\n');
    const byLines = bodyExcerpt({ text, json: false }, { lines: 3, chars: 1000 });
    expect(byLines.lines).toEqual(['line 0', 'line 1', 'line 2']);
    expect(byLines.moreBytes).toBe(text.length - 'line 0\nline 1\nline 2\n'.length);
    expect(byLines.totalBytes).toBe(text.length);
    const byChars = bodyExcerpt({ text: 'é'.repeat(10), json: false }, { lines: 10, chars: 4 });
    expect(byChars).toEqual({ lines: ['éééé'], moreBytes: 12, totalBytes: 20 });
    expect(bodyExcerpt({ text: 'a😀b', json: false }, { lines: 1, chars: 2 }).lines).toEqual(['a']);
    expect(bodyExcerpt({ text: 'short', json: false }, STREAM_BODY_LIMITS)).toEqual({ lines: ['short'], moreBytes: 0, totalBytes: 5 });
  });

  it('counts a base64 body in the bytes it stands for', () => {
    const text = Buffer.from('hello world!').toString('base64');
    expect(bodyExcerpt({ text, json: false, encoding: 'base64' }, { lines: 1, chars: 4 })).toEqual({ lines: ['aGVs'], moreBytes: 9, totalBytes: 12 });
  });

  it('shows control characters as "�" and tabs as two spaces, so a body cannot drive the terminal', () => {
    expect(bodyExcerpt({ text: 'a\tb\u001b[2J\r\nc\u0007', json: false }, WHOLE_BODY).lines).toEqual(['a  b\uFFFD[2J', 'c\uFFFD']);
  });

  it('reads a 10 MiB body only as far as it shows it: one line of text, and JSON of 200,000 objects', () => {
    const line = bodyExcerpt({ text: 'a'.repeat(TEN_MIB), json: false }, VIEW_BODY_LIMITS);
    expect(line.lines).toEqual(['a'.repeat(VIEW_BODY_LIMITS.chars)]);
    expect(line.moreBytes).toBe(TEN_MIB - VIEW_BODY_LIMITS.chars);
    const json = JSON.stringify(Array.from({ length: 200_000 }, (_, n) => ({ id: n, ok: true })));
    const indented = bodyExcerpt({ text: json, json: true }, VIEW_BODY_LIMITS);
    expect(indented.lines).toHaveLength(VIEW_BODY_LIMITS.lines);
    expect(indented.lines.slice(0, 5)).toEqual(['[', '  {', '    "id": 0,', '    "ok": true', '  },']);
    expect(indented.moreBytes).toBeGreaterThan(json.length - VIEW_BODY_LIMITS.chars);
  });
});

describe('a body in a view', () => {
  const view = (text: string): View => [
    { kind: 'heading', text: 'Body' },
    { kind: 'body', text, json: false, whole: '`hook events get evt_1 --body > body.txt` writes all of it' },
    { kind: 'heading', text: 'Deliveries' },
  ];

  it('on a terminal: the start, then how much more and how to get it; the blocks after it follow', () => {
    const text = renderForTerminal(view('x'.repeat(TEN_MIB)), 80).replace(/\x1b\[[0-9;]*m/g, '');
    const lines = text.split('\n');
    expect(lines[1]).toBe('x'.repeat(VIEW_BODY_LIMITS.chars));
    expect(lines[2]).toBe(`… ${(TEN_MIB - VIEW_BODY_LIMITS.chars).toLocaleString('en-US')} more bytes (10.0 MiB in all): \`hook events get evt_1 --body > body.txt\` writes all of it`);
    expect(lines.slice(3)).toEqual(['', 'Deliveries', '']);
  });

  it('on a terminal, a body shown whole has no note; in plain text all of it shows', () => {
    expect(renderForTerminal(view('ok'), 80).replace(/\x1b\[[0-9;]*m/g, '')).toBe('Body\nok\n\nDeliveries\n');
    expect(renderPlain(view('x'.repeat(100_000)))).toBe(`Body\n${'x'.repeat(100_000)}\n\nDeliveries\n`);
  });
});
