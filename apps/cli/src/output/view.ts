/**
 * What a command shows a person, described as data: the output module renders it as
 * plain text (pipes, files) or with ink (a terminal). Commands never format for a
 * particular medium.
 */
import { bodyExcerpt, WHOLE_BODY, type BodyText } from './body.ts';

/** How a cell reads at a glance; the terminal renderer colours it, plain text ignores it. */
export type Tone = 'good' | 'bad' | 'warn' | 'dim';

/**
 * What one cell shows. `{ at }` is a moment (ISO 8601): plain text shows it as the UTC
 * timestamp without milliseconds, a terminal line (`Line`) as the local time of day, which
 * is what a person watching live wants and leaves room on an 80-column line.
 */
export type Cell = string | { text: string; tone: Tone } | { at: string };

export interface Column {
  header: string;
  align?: 'left' | 'right';
}

export type Block =
  /** Label/value pairs, one per line. */
  | { kind: 'fields'; rows: ReadonlyArray<readonly [label: string, value: Cell]> }
  /** Rows under column headers; `empty` is shown instead when there are no rows. */
  | { kind: 'table'; columns: readonly Column[]; rows: ReadonlyArray<readonly Cell[]>; empty: string }
  | { kind: 'heading'; text: string }
  /** Preformatted text, shown as it is. */
  | { kind: 'text'; text: string }
  /**
   * A body (or a document holding one) for reading: plain text shows all of it, a terminal
   * its start (output/body.ts) and, when that is not all, how much is left and `whole`:
   * how to get all of it (`\`hook events get evt_… --body > body.json\` writes all of it`).
   */
  | ({ kind: 'body'; whole: string } & BodyText);

export type View = readonly Block[];

/**
 * One line of a stream (`hook events tail`): cells joined by two spaces. On a terminal it
 * is coloured by tone and cut to the terminal's width with "…" (never wrapped), so put
 * what matters most first; plain text keeps the whole line.
 */
export type Line = readonly Cell[];

/** A size for reading: `512 B`, `4.0 KiB`, `10.0 MiB`. */
export function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / 1024 / 1024).toFixed(1)} MiB`;
}

/** An ISO timestamp without milliseconds: `2026-11-22T01:23:51Z`. */
export function isoSeconds(iso: string): string {
  return iso.replace(/\.\d+Z$/, 'Z');
}

export function cellText(cell: Cell): string {
  if (typeof cell === 'string') return cell;
  return 'at' in cell ? isoSeconds(cell.at) : cell.text;
}

/** The line as plain text: the cells' text, two spaces apart; a control character (a newline in an event type) shows as "�", so one line stays one line. */
export function plainLine(line: Line): string {
  return line.map(cellText).join('  ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '\uFFFD');
}

const STATUS_TONES: Record<string, Tone> = {
  delivered: 'good', active: 'good',
  failed: 'bad', disabled: 'bad',
  retrying: 'warn', paused: 'warn',
  pending: 'dim', filtered: 'dim',
};

/** An event or endpoint status, toned by what it means. */
export function statusCell(status: string): Cell {
  const tone = STATUS_TONES[status];
  return tone ? { text: status, tone } : status;
}

/** Display width of a string: code points, not UTF-16 units (close enough for ids, names and dates). */
function width(text: string): number {
  return [...text].length;
}

function pad(text: string, size: number, align: 'left' | 'right' = 'left'): string {
  const fill = ' '.repeat(Math.max(0, size - width(text)));
  return align === 'right' ? fill + text : text + fill;
}

function renderTable(block: Extract<Block, { kind: 'table' }>): string[] {
  if (block.rows.length === 0) return [block.empty];
  const headers = block.columns.map((column) => column.header.toUpperCase());
  const widths = headers.map((header, i) => Math.max(width(header), ...block.rows.map((row) => width(cellText(row[i] ?? '')))));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 && block.columns[i]?.align !== 'right' ? cell : pad(cell, widths[i]!, block.columns[i]?.align)))
      .join('  ');
  return [line(headers), ...block.rows.map((row) => line(block.columns.map((_, i) => cellText(row[i] ?? ''))))];
}

/** The view as plain text, no colours or control characters; ends with a newline. */
export function renderPlain(view: View): string {
  const lines: string[] = [];
  for (const [index, block] of view.entries()) {
    if (block.kind === 'heading') {
      if (index > 0) lines.push('');
      lines.push(block.text);
    } else if (block.kind === 'fields') {
      const labelWidth = Math.max(...block.rows.map(([label]) => width(label)));
      for (const [label, value] of block.rows) lines.push(`${pad(`${label}:`, labelWidth + 1)}  ${cellText(value)}`);
    } else if (block.kind === 'table') {
      lines.push(...renderTable(block));
    } else if (block.kind === 'body') {
      for (const line of bodyExcerpt(block, WHOLE_BODY).lines) lines.push(line);
    } else {
      lines.push(block.text.replace(/\n$/, ''));
    }
  }
  return `${lines.join('\n')}\n`;
}
