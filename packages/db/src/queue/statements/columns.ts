/**
 * Column lists as data, for the wide statements that take a batch as one array parameter
 * per column (`unnest($1::text[], $2::int[], …) as t(a, b, …)`: insert-events.ts,
 * record-results.ts). Each statement declares its columns once, as `[name, type, pick]`;
 * the unnest list, the aliases and the parameter arrays are made from that one table, so
 * adding a column is one line and the three cannot get out of step.
 *
 * The text made from a table is the text a hand-written list would be (same parameters,
 * same order): PostgreSQL plans it the same. Making the arrays through the table costs
 * about 1 µs more per row than 23 hand-written `map`s (V8 inlines a `map` callback written
 * at its call site, not a `pick` read from a table): under 0.1 % of a delivery's relay CPU.
 */

/**
 * One column: its name in the statement, its PostgreSQL type (of one value), and how a
 * row's value is picked. `i` is the row's place in the batch and `batch` what the caller
 * worked out for the whole batch (values computed for all rows at once).
 */
export type Column<Row, Batch = undefined> = readonly [name: string, type: string, pick: (row: Row, i: number, batch: Batch) => unknown];

/** A statement's columns, bound as consecutive parameters from `$first`. */
export interface ColumnList<Row, Batch = undefined> {
  readonly columns: readonly Column<Row, Batch>[];
  /** `unnest($first::type[], …)`. */
  readonly unnest: string;
  /** The names, in order, for the alias list (`as t(<names>)`). */
  readonly names: string;
  /** The parameter that carries column `name` (`$n`). */
  param(name: string): string;
  /** The number of the first parameter after the columns'. */
  readonly next: number;
  /** The parameter arrays, one per column, in order. */
  params(rows: readonly Row[], batch: Batch): unknown[][];
}

export function columnList<Row, Batch = undefined>(columns: readonly Column<Row, Batch>[], first = 1): ColumnList<Row, Batch> {
  const numbers = new Map(columns.map(([name], i) => [name, first + i]));
  if (numbers.size !== columns.length) throw new Error('a column list names a column twice');
  return {
    columns,
    unnest: `unnest(${columns.map(([, type], i) => `$${first + i}::${type}[]`).join(', ')})`,
    names: columns.map(([name]) => name).join(', '),
    param(name) {
      const n = numbers.get(name);
      if (n === undefined) throw new Error(`no column ${name} in this column list`);
      return `$${n}`;
    },
    next: first + columns.length,
    params: (rows, batch) => columns.map(([, , pick]) => {
      const values = new Array<unknown>(rows.length);
      for (let i = 0; i < rows.length; i++) values[i] = pick(rows[i]!, i, batch);
      return values;
    }),
  };
}
