// JSON highlighting without a library and without innerHTML: a small tokenizer over the
// pretty-printed text emits text nodes wrapped in spans whose classes (hljs-attr,
// hljs-string, hljs-number, hljs-literal) tokens.css colours. The text content stays
// exactly the pretty JSON, so copying and tests read the same characters.
import type { ComponentChildren } from 'preact';
import { tokenizeJson } from './json-tokens.ts';

/** Bodies longer than this are shown unhighlighted: tens of thousands of spans would slow the page. */
export const HIGHLIGHT_MAX_CHARS = 128 * 1024;

/** The children of a <pre>: highlighted spans, or the plain text when too long to highlight. */
export function highlightedJson(text: string): ComponentChildren {
  if (text.length > HIGHLIGHT_MAX_CHARS) return text;
  return tokenizeJson(text).map((token, index) => (token.kind === 'plain' ? token.text : <span key={index} class={`hljs-${token.kind}`}>{token.text}</span>));
}
