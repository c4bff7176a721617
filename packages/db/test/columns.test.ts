import { describe, expect, it } from 'vitest';
import { columnList } from '../src/queue/statements/columns.ts';
import { RECORD_INPUT } from '../src/index.ts';

describe('columnList (column lists as data)', () => {
  const list = columnList<{ id: string; n: number }, readonly string[]>([
    ['id', 'text', (row) => row.id],
    ['n', 'int', (row) => row.n * 2],
    ['tag', 'text', (_, i, tags) => tags[i]],
  ], 3);

  it('makes the unnest list, the aliases and the parameter arrays from one table, numbered from the first parameter', () => {
    expect(list.unnest).toBe('unnest($3::text[], $4::int[], $5::text[])');
    expect(list.names).toBe('id, n, tag');
    expect(list.param('n')).toBe('$4');
    expect(list.next).toBe(6);
    expect(list.params([{ id: 'a', n: 1 }, { id: 'b', n: 2 }], ['x', 'y'])).toEqual([['a', 'b'], [2, 4], ['x', 'y']]);
  });

  it('refuses a column named twice, and a parameter of a column it does not have', () => {
    expect(() => columnList([['id', 'text', () => null], ['id', 'int', () => null]])).toThrow(/twice/);
    expect(() => list.param('missing')).toThrow(/no column missing/);
  });

  it('record-results: every column of its input is a parameter of its statement, in order', () => {
    expect(RECORD_INPUT.unnest.match(/\$\d+/g)).toEqual(RECORD_INPUT.columns.map((_, i) => `$${i + 1}`));
    expect(RECORD_INPUT.names.split(', ')).toContain('failure_kind');
  });
});
