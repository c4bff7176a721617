import { describe, expect, it } from 'vitest';
import { renderPlain, statusCell, type View } from '../src/output/view.ts';
import { renderForTerminal } from '../src/ui/render-view.ts';

const view: View = [
  { kind: 'fields', rows: [['Id', 'ep_1'], ['Status', statusCell('paused')]] },
  { kind: 'heading', text: 'Events' },
  {
    kind: 'table',
    columns: [{ header: 'Id' }, { header: 'Attempts', align: 'right' }, { header: 'Type' }],
    rows: [['evt_1', '3', 'invoice.paid'], ['evt_22', '12', { text: 'failed', tone: 'bad' }]],
    empty: 'none',
  },
];

describe('renderPlain', () => {
  it('aligns labels and columns, right-aligns numbers, and adds no escape codes', () => {
    expect(renderPlain(view)).toBe(
      'Id:      ep_1\n' +
      'Status:  paused\n' +
      '\n' +
      'Events\n' +
      'ID      ATTEMPTS  TYPE\n' +
      'evt_1          3  invoice.paid\n' +
      'evt_22        12  failed\n',
    );
  });

  it('shows the empty text for a table without rows', () => {
    expect(renderPlain([{ kind: 'table', columns: [{ header: 'Id' }], rows: [], empty: 'No endpoints yet.' }])).toBe('No endpoints yet.\n');
  });
});

describe('renderForTerminal', () => {
  it('lays out the same content, never cutting a row narrower than its content', () => {
    const text = renderForTerminal(view, 20).replace(/\x1b\[[0-9;]*m/g, '');
    expect(text).toMatch(/^ID +ATTEMPTS +TYPE$/m);
    expect(text).toMatch(/^evt_22 +12 +failed$/m);
    expect(text).toMatch(/^evt_1 +3 +invoice\.paid$/m);
    expect(text).toMatch(/^Status: +paused$/m);
  });
});
