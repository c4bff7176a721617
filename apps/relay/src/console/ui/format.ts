// How the inspector shows a body: pure functions from the stored bytes to text, with a
// cap on what is rendered so a megabyte on one line cannot freeze the page.

/** Characters of a body rendered before "Show all". */
export const BODY_PREVIEW_CHARS = 64 * 1024;
/** Bytes shown in a hex dump before "Show all". */
export const HEX_PREVIEW_BYTES = 4 * 1024;

export type BodyView =
  | { kind: 'json' | 'xml' | 'text'; text: string }
  | { kind: 'form'; fields: Array<[string, string]> }
  | { kind: 'binary'; bytes: Uint8Array }
  | { kind: 'empty' };

export function bodyBytes(body: string, encoding: 'utf8' | 'base64' | undefined): Uint8Array {
  if (encoding === 'base64') {
    const binary = atob(body);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }
  return new TextEncoder().encode(body);
}

/** Indents XML by its tags; text between tags stays as sent. */
export function indentXml(xml: string): string {
  const parts = xml.replace(/>\s+</g, '><').split(/(?=<)|(?<=>)/);
  let depth = 0;
  const lines: string[] = [];
  for (const part of parts) {
    if (part.trim() === '') continue;
    if (/^<\//.test(part)) depth = Math.max(0, depth - 1);
    lines.push(`${'  '.repeat(depth)}${part}`);
    if (/^<[^!?/][^>]*[^/]>$/.test(part) || /^<[a-zA-Z]>$/.test(part)) depth++;
  }
  // An element holding only text reads better on one line: <a>text</a>.
  return lines.join('\n').replace(/(<[^/!?][^>]*[^/]>)\n\s*([^<\n]+)\n\s*(<\/)/g, '$1$2$3');
}

/** The body as the inspector shows it, chosen by its content type (and its bytes). */
export function viewOfBody(body: string | undefined, encoding: 'utf8' | 'base64' | undefined, contentType: string | null): BodyView {
  if (body === undefined || body === '') return { kind: 'empty' };
  if (encoding === 'base64') return { kind: 'binary', bytes: bodyBytes(body, encoding) };
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('json') || (!type && /^\s*[[{]/.test(body))) {
    try {
      return { kind: 'json', text: JSON.stringify(JSON.parse(body), null, 2) };
    } catch {
      return { kind: 'text', text: body };
    }
  }
  if (type.startsWith('application/x-www-form-urlencoded')) {
    return { kind: 'form', fields: [...new URLSearchParams(body)] };
  }
  if (type.includes('xml')) return { kind: 'xml', text: body.length <= BODY_PREVIEW_CHARS * 4 ? indentXml(body) : body };
  return { kind: 'text', text: body };
}

/** Classic hex dump: offset, 16 bytes in hex, and the printable ASCII beside them. */
export function hexDump(bytes: Uint8Array, limit = bytes.length): string {
  const lines: string[] = [];
  const end = Math.min(limit, bytes.length);
  for (let offset = 0; offset < end; offset += 16) {
    const row = bytes.subarray(offset, Math.min(offset + 16, end));
    const hex = [...row].map((byte) => byte.toString(16).padStart(2, '0')).join(' ');
    const ascii = [...row].map((byte) => (byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : '.')).join('');
    lines.push(`${offset.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return lines.join('\n');
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Headers that describe the connection, not the request: curl sets its own. */
const HEADERS_CURL_SETS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'accept-encoding', 'upgrade', 'te', 'trailer', 'proxy-connection']);

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * A shell command that sends the stored request to the ingest URL again, byte for byte:
 * the body travels as base64 through `base64 -d` into `--data-binary @-`, so neither the
 * shell nor curl changes a byte (binary bodies included).
 */
export function curlCommand(event: { method: string; path: string; query: string; headers?: Record<string, string>; body?: string; body_encoding?: 'utf8' | 'base64' }, ingestUrl: string): string {
  const url = `${ingestUrl}${event.path ?? ''}${event.query ? `?${event.query}` : ''}`;
  const lines = [`curl -X ${event.method} ${shellQuote(url)}`];
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (!HEADERS_CURL_SETS.has(name.toLowerCase())) lines.push(`  -H ${shellQuote(`${name}: ${value}`)}`);
  }
  if (event.body) {
    const base64 = event.body_encoding === 'base64' ? event.body : bytesToBase64(bodyBytes(event.body, 'utf8'));
    lines.push('  --data-binary @-');
    return `printf %s ${shellQuote(base64)} | base64 -d | ${lines.join(' \\\n')}`;
  }
  return lines.join(' \\\n');
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
