// JSON highlighting without a library and without innerHTML: a small tokenizer over the
// pretty-printed text emits text nodes wrapped in spans whose classes (hljs-attr,
// hljs-string, hljs-number, hljs-literal) tokens.css colours. The text content stays
// exactly the pretty JSON, so copying and tests read the same characters.
import type { ComponentChildren } from 'preact';

/** Bodies longer than this are shown unhighlighted: tens of thousands of spans would slow the page. */
export const HIGHLIGHT_MAX_CHARS = 128 * 1024;

export type JsonToken = { kind: 'attr' | 'string' | 'number' | 'literal' | 'plain'; text: string };

const TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b/g;

/** Splits JSON text into tokens; anything between them (braces, commas, spaces) is plain. */
export function tokenizeJson(text: string): JsonToken[] {
  const tokens: JsonToken[] = [];
  let last = 0;
  for (const match of text.matchAll(TOKEN)) {
    const index = match.index!;
    if (index > last) tokens.push({ kind: 'plain', text: text.slice(last, index) });
    if (match[1] !== undefined) {
      tokens.push({ kind: match[2] !== undefined ? 'attr' : 'string', text: match[1] });
      if (match[2] !== undefined) tokens.push({ kind: 'plain', text: match[2] });
    } else if (match[3] !== undefined) {
      tokens.push({ kind: 'number', text: match[3] });
    } else {
      tokens.push({ kind: 'literal', text: match[4]! });
    }
    last = index + match[0].length;
  }
  if (last < text.length) tokens.push({ kind: 'plain', text: text.slice(last) });
  return tokens;
}

/** The children of a <pre>: highlighted spans, or the plain text when too long to highlight. */
export function highlightedJson(text: string): ComponentChildren {
  if (text.length > HIGHLIGHT_MAX_CHARS) return text;
  return tokenizeJson(text).map((token, index) => (token.kind === 'plain' ? token.text : <span key={index} class={`hljs-${token.kind}`}>{token.text}</span>));
}
