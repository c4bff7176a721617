/**
 * The terminal rendering of a view: ink lays it out for the terminal's width and
 * colours statuses. Loaded only when stdout is a TTY (ink takes a while to import).
 * `renderToString` rather than `render`: a finished result needs no live terminal
 * session, and the output module stays the one place that writes to stdout.
 */
import { createElement as h, type ReactNode } from 'react';
import { Box, renderToString, Text } from 'ink';
import { cellText, type Block, type Cell, type Tone, type View } from '../output/view.ts';

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

function blockElement(block: Block, index: number, first: boolean): ReactNode {
  const key = `block-${index}`;
  switch (block.kind) {
    case 'heading':
      return h(Box, { key, marginTop: first ? 0 : 1 }, h(Text, { bold: true }, block.text));
    case 'text':
      return h(Box, { key }, h(Text, {}, block.text.replace(/\n$/, '')));
    case 'fields': {
      const labelWidth = Math.max(...block.rows.map(([label]) => width(label))) + 1 + GAP;
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
      const widths = block.columns.map((column, i) => Math.max(width(column.header), ...block.rows.map((row) => width(cellText(row[i] ?? '')))));
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
function naturalWidth(block: Block): number {
  switch (block.kind) {
    case 'heading':
      return width(block.text);
    case 'text':
      return Math.max(0, ...block.text.split('\n').map(width));
    case 'fields':
      return Math.max(0, ...block.rows.map(([label, value]) => width(label) + 1 + GAP + width(cellText(value))));
    case 'table': {
      if (block.rows.length === 0) return width(block.empty);
      const widths = block.columns.map((column, i) => Math.max(width(column.header), ...block.rows.map((row) => width(cellText(row[i] ?? '')))));
      return widths.reduce((sum, columnWidth) => sum + columnWidth + GAP, 0);
    }
  }
}

/**
 * The view laid out for a terminal `columns` wide, with colours; ends with a newline.
 * A table wider than the terminal is laid out at its full width (the terminal wraps
 * its lines) rather than cut: ids and URLs are no use with their ends missing.
 */
export function renderForTerminal(view: View, columns: number): string {
  const tree = h(Box, { flexDirection: 'column' }, view.map((block, index) => blockElement(block, index, index === 0)));
  return `${renderToString(tree, { columns: Math.max(columns, ...view.map(naturalWidth)) })}\n`;
}
