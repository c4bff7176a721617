/**
 * The terminal rendering of a view: ink lays it out for the terminal's width and
 * colours statuses. Loaded only when stdout is a TTY (ink takes a while to import).
 * `renderToString` rather than `render`: a finished result needs no live terminal
 * session, and the output module stays the one place that writes to stdout.
 */
import { createElement as h, type ReactNode } from 'react';
import { Box, renderToString, Text } from 'ink';
import { bodyExcerpt, VIEW_BODY_LIMITS } from '../output/body.ts';
import { bytes, cellText, type Block, type Cell, type Tone, type View } from '../output/view.ts';

const TONE_STYLES: Record<Tone, { color?: string; dimColor?: boolean }> = {
  good: { color: 'green' },
  bad: { color: 'red' },
  warn: { color: 'yellow' },
  dim: { dimColor: true },
};

/** Gap between table columns and after field labels, in columns. */
const GAP = 2;

function cellElement(cell: Cell, key: string, wrap: 'truncate-end' | 'wrap' = 'truncate-end'): ReactNode {
  const style = typeof cell === 'string' || !('tone' in cell) ? {} : TONE_STYLES[cell.tone];
  return h(Text, { key, wrap, ...style }, cellText(cell));
}

function width(text: string): number {
  return [...text].length;
}

/** The widest of `values`, 0 for none (a loop: spreading thousands of arguments into Math.max overflows the stack). */
function widest(values: Iterable<number>): number {
  let most = 0;
  for (const value of values) if (value > most) most = value;
  return most;
}

/** A table's column widths: each column's widest cell or header. */
function columnWidths(block: Extract<Block, { kind: 'table' }>): number[] {
  return block.columns.map((column, i) => Math.max(width(column.header), widest(block.rows.map((row) => width(cellText(row[i] ?? ''))))));
}

type LaidOutBlock = Exclude<Block, { kind: 'body' }>;

function blockElement(block: LaidOutBlock, first: boolean): ReactNode {
  const key = 'block';
  switch (block.kind) {
    case 'heading':
      return h(Box, { key, marginTop: first ? 0 : 1 }, h(Text, { bold: true }, block.text));
    case 'text':
      return h(Box, { key }, h(Text, {}, block.text.replace(/\n$/, '')));
    case 'fields': {
      const labelWidth = widest(block.rows.map(([label]) => width(label))) + 1 + GAP;
      return h(
        Box,
        { key, flexDirection: 'column' },
        block.rows.map(([label, value], row) =>
          h(Box, { key: `row-${row}` }, h(Box, { width: labelWidth, flexShrink: 0 }, h(Text, { dimColor: true }, `${label}:`)), cellElement(value, 'value', 'wrap')),
        ),
      );
    }
    case 'table': {
      if (block.rows.length === 0) return h(Box, { key }, h(Text, { dimColor: true }, block.empty));
      const widths = columnWidths(block);
      const line = (cells: readonly Cell[], rowKey: string, header: boolean): ReactNode =>
        h(
          Box,
          { key: rowKey },
          block.columns.map((column, i) => {
            const last = i === block.columns.length - 1;
            const cell = cells[i] ?? '';
            return h(
              Box,
              // Every column but the last keeps its width; the last takes what is left and is cut with "…".
              last ? { key: `c${i}`, flexGrow: 1, justifyContent: column.align === 'right' ? 'flex-end' : 'flex-start' }
                : { key: `c${i}`, width: widths[i]! + GAP, flexShrink: 0, justifyContent: column.align === 'right' ? 'flex-end' : 'flex-start', paddingRight: column.align === 'right' ? GAP : 0 },
              header ? h(Text, { bold: true, wrap: 'truncate-end' }, cellText(cell).toUpperCase()) : cellElement(cell, 'text'),
            );
          }),
        );
      return h(
        Box,
        { key, flexDirection: 'column' },
        line(block.columns.map((column) => column.header), 'header', true),
        block.rows.map((row, i) => line(row, `row-${i}`, false)),
      );
    }
  }
}

/** The width a block needs to show everything on one line per row. */
function naturalWidth(block: LaidOutBlock): number {
  switch (block.kind) {
    case 'heading':
      return width(block.text);
    case 'text':
      return widest(block.text.split('\n').map(width));
    case 'fields':
      return widest(block.rows.map(([label, value]) => width(label) + 1 + GAP + width(cellText(value))));
    case 'table':
      if (block.rows.length === 0) return width(block.empty);
      return columnWidths(block).reduce((sum, columnWidth) => sum + columnWidth + GAP, 0);
  }
}

/**
 * A body: its start as it is (the terminal wraps long lines; ink would lay out a cell per
 * character), then, when that is not all, a dim line with how much is left and how to get it.
 */
function bodyText(block: Extract<Block, { kind: 'body' }>, columns: number): string {
  const excerpt = bodyExcerpt(block, VIEW_BODY_LIMITS);
  if (excerpt.moreBytes === 0) return excerpt.lines.join('\n');
  const note = `… ${excerpt.moreBytes.toLocaleString('en-US')} more bytes (${bytes(excerpt.totalBytes)} in all): ${block.whole}`;
  // At its own width: the terminal wraps it, so the command stays one line to copy.
  return `${excerpt.lines.join('\n')}\n${renderToString(h(Text, { dimColor: true }, note), { columns: Math.max(columns, width(note)) })}`;
}

/**
 * The view laid out for a terminal `columns` wide, with colours; ends with a newline.
 * A block wider than the terminal is laid out at its full width (the terminal wraps
 * its lines) rather than cut: ids and URLs are no use with their ends missing. Each block
 * is laid out on its own, so one wide row widens only its own block (ink keeps a cell per
 * column and row while it lays out).
 */
export function renderForTerminal(view: View, columns: number): string {
  const blocks = view.map((block, index) =>
    block.kind === 'body'
      ? bodyText(block, columns)
      : renderToString(blockElement(block, index === 0), { columns: Math.max(columns, naturalWidth(block)) }));
  return `${blocks.join('\n')}\n`;
}
