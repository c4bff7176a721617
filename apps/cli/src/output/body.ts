/**
 * How much of a body a person is shown: the one place that decides it. A terminal view
 * (`hook events get`, `hook events wait`, `hook transform test`) shows the start of a body
 * and says how much is left; `hook listen --print-body` shows less, under each delivery;
 * plain text (a pipe, a file) shows all of it. The work follows what is shown, not the
 * body's size: text is cut before it is split, and JSON is indented as it is read, token
 * by token, never parsed whole.
 */

export interface BodyLimits {
  /** Lines shown at most. */
  lines: number;
  /** Characters shown at most, indentation included. */
  chars: number;
}

/** A body in a terminal view: a typical webhook shows whole (a GitHub push, indented, is some 250 lines and 10,000 characters). */
export const VIEW_BODY_LIMITS: BodyLimits = { lines: 300, chars: 16_384 };
/** The local server's answer under a `hook listen` line: enough to see what went wrong, few enough rows that the stream stays readable. */
export const STREAM_BODY_LIMITS: BodyLimits = { lines: 20, chars: 1000 };
/** All of it: plain text shows a body whole. */
export const WHOLE_BODY: BodyLimits = { lines: Infinity, chars: Infinity };

/** A body as the API gives it: UTF-8 text, or base64 for other bytes; `json` to indent it for reading. */
export interface BodyText {
  text: string;
  json: boolean;
  encoding?: 'utf8' | 'base64';
  /** The whole body's size in bytes when `text` is only its start (the relay's `body_limit`). */
  totalBytes?: number;
}

/**
 * Bytes of a body a terminal view needs at most: VIEW_BODY_LIMITS' characters, each at
 * most 4 bytes of UTF-8 (indentation only adds characters). `hook events get` asks the
 * relay for no more, so a 10 MiB body costs a terminal view what 64 KiB does.
 */
export const VIEW_BODY_PREFETCH_BYTES = 65_536;

export interface BodyExcerpt {
  /** The lines shown: control characters as "�" (they would drive the terminal), tabs as two spaces. */
  lines: string[];
  /** Bytes of the body not shown: 0 when all of it is. */
  moreBytes: number;
  /** The body's size in bytes. */
  totalBytes: number;
}

/**
 * The start of `body` within `limits`, and how much is left. JSON is indented two spaces
 * per level, each token as sent (numbers and escapes are not rewritten); a body labelled
 * JSON that is not is shown as the text it is.
 */
export function bodyExcerpt(body: BodyText, limits: BodyLimits): BodyExcerpt {
  const cut = (body.json ? indentedJson(body.text, limits) : null) ?? textLines(body.text, limits);
  const totalBytes = body.totalBytes ?? byteLength(body.text, body.encoding);
  return {
    lines: cut.lines.map(readableLine),
    moreBytes: cut.shown === body.text.length && body.totalBytes === undefined ? 0 : totalBytes - byteLength(body.text.slice(0, cut.shown), body.encoding),
    totalBytes,
  };
}

interface Cut {
  lines: string[];
  /** How much of the text the lines show, in UTF-16 units. */
  shown: number;
}

function byteLength(text: string, encoding: BodyText['encoding']): number {
  if (encoding !== 'base64') return Buffer.byteLength(text, 'utf8');
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

function readableLine(line: string): string {
  return line.replace(/\r$/, '').replaceAll('\t', '  ').replace(CONTROL_CHARACTERS, '\uFFFD');
}

/** `length` characters of `text` from `at`, one fewer when that would split a surrogate pair. */
function whole(text: string, at: number, length: number): number {
  const code = text.charCodeAt(at + length - 1);
  return length > 1 && code >= 0xd800 && code <= 0xdbff ? length - 1 : length;
}

/** The text's lines within `limits`; a line longer than the room left is cut. */
function textLines(text: string, limits: BodyLimits): Cut {
  const lines: string[] = [];
  let at = 0;
  let chars = 0;
  while (at < text.length && lines.length < limits.lines && chars < limits.chars) {
    const newline = text.indexOf('\n', at);
    const end = newline === -1 ? text.length : newline;
    const room = limits.chars - chars;
    if (end - at > room) {
      const length = whole(text, at, room);
      lines.push(text.slice(at, at + length));
      return { lines, shown: at + length };
    }
    lines.push(text.slice(at, end));
    chars += end - at;
    at = newline === -1 ? end : end + 1;
  }
  return { lines, shown: at };
}

/** Deeper than this is shown as text: indenting it would be wider than any terminal, and a stack of it would grow with the body. */
const MAX_JSON_DEPTH = 1000;
const LITERAL = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null/y;

/** What may come next in the JSON grammar. */
type Expect = 'value' | 'value-or-close' | 'key' | 'key-or-close' | 'colon' | 'comma-or-close' | 'end';

/**
 * The JSON text indented for reading (as `JSON.stringify(value, null, 2)` lays it out),
 * lines within `limits`; null when what is read of it is not JSON. Reading stops at the
 * limits, so the work follows what is shown: a body cut short is indented as far as it
 * is shown even if it stops being JSON further on.
 */
function indentedJson(text: string, limits: BodyLimits): Cut | null {
  const lines: string[] = [];
  let line = '';
  let chars = 0;
  /** Where the lines end in the text, once the limits are reached. */
  let shown: number | null = null;
  /** Open containers, innermost last: true for an object. */
  const open: boolean[] = [];
  let next: Expect = 'value';
  /** An opening bracket waits for its first member before breaking the line: `{}` and `[]` stay whole. */
  let openPending = false;
  let at = 0;

  /**
   * Adds `token`, which starts at `from` in the text, to the line. When the characters
   * run out, a token as sent (`verbatim`: a string, a number) is cut, punctuation left out.
   */
  const emit = (token: string, from: number, verbatim: boolean): void => {
    if (shown !== null) return;
    const room = limits.chars - chars;
    if (token.length <= room) {
      line += token;
      chars += token.length;
      return;
    }
    const length = verbatim ? whole(token, 0, room) : 0;
    lines.push(line + token.slice(0, length));
    shown = from + length;
  };
  /** Ends the line; the next starts indented `depth` levels. */
  const breakLine = (depth: number, resumeAt: number): void => {
    if (shown !== null) return;
    lines.push(line);
    line = '  '.repeat(depth);
    chars += line.length;
    if (lines.length >= limits.lines || chars >= limits.chars) shown = resumeAt;
  };
  /** What may follow a value: more members, or nothing once the outermost value is read. */
  const afterValue = (): Expect => (open.length === 0 ? 'end' : 'comma-or-close');
  const beforeMember = (resumeAt: number): void => {
    if (!openPending) return;
    openPending = false;
    breakLine(open.length, resumeAt);
  };

  while (shown === null) {
    while (isWhitespace(text.charCodeAt(at))) at += 1;
    if (at >= text.length) break;
    const start = at;
    const char = text[at]!;
    if (char === '}' || char === ']') {
      if ((next !== 'value-or-close' && next !== 'key-or-close' && next !== 'comma-or-close') || open.at(-1) !== (char === '}')) return null;
      open.pop();
      at += 1;
      if (openPending) openPending = false;
      else breakLine(open.length, start);
      emit(char, start, false);
      next = afterValue();
    } else if (char === ',') {
      if (next !== 'comma-or-close') return null;
      at += 1;
      emit(',', start, false);
      breakLine(open.length, at);
      next = open.at(-1) ? 'key' : 'value';
    } else if (char === ':') {
      if (next !== 'colon') return null;
      at += 1;
      emit(': ', start, false);
      next = 'value';
    } else if (char === '"') {
      if (next !== 'value' && next !== 'value-or-close' && next !== 'key' && next !== 'key-or-close') return null;
      const end = stringEnd(text, at);
      if (end === -1) return null;
      at = end;
      beforeMember(start);
      if (shown === null) emit(text.slice(start, end), start, true);
      if (next === 'key' || next === 'key-or-close') next = 'colon';
      else next = afterValue();
    } else if (char === '{' || char === '[') {
      if (next !== 'value' && next !== 'value-or-close') return null;
      if (open.length >= MAX_JSON_DEPTH) return null;
      at += 1;
      beforeMember(start);
      emit(char, start, false);
      open.push(char === '{');
      openPending = true;
      next = char === '{' ? 'key-or-close' : 'value-or-close';
    } else {
      if (next !== 'value' && next !== 'value-or-close') return null;
      LITERAL.lastIndex = at;
      if (!LITERAL.test(text)) return null;
      at = LITERAL.lastIndex;
      beforeMember(start);
      if (shown === null) emit(text.slice(start, at), start, true);
      next = afterValue();
    }
  }
  if (shown !== null) return { lines, shown };
  if (next !== 'end') return null;
  lines.push(line);
  return { lines, shown: text.length };
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** The index just past the string that starts at `at` (a quote), or -1 when it does not end. */
function stringEnd(text: string, at: number): number {
  let quote = at;
  while (true) {
    quote = text.indexOf('"', quote + 1);
    if (quote === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
  }
}
