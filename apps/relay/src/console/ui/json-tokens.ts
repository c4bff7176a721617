// The JSON tokenizer behind the inspector's highlighting (json.tsx): plain TypeScript,
// so the unit tests run it without a browser.

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
